#!/bin/sh
# rmaslices.sh [PATTERNS...]: slices per iteration of each pattern of
# rmaslices.c, from the slice counts bcsrun -v reports for ITER and 2*ITER
# iterations (ITER: $ITER, default 200). Run from the repository root after
# go build -o bin/ ./cmd/...; extra bcsrun flags in $BCSRUN_FLAGS.
set -e
ITER=${ITER:-200}
exe=$(mktemp /tmp/rmaslices.XXXXXX)
trap 'rm -f "$exe"' EXIT
bin/bcscc -O2 -o "$exe" bench/cabi/rmaslices.c
slices() {
	bin/bcsrun -v -n 2 $BCSRUN_FLAGS "$exe" "$1" "$2" 2>&1 | sed -n 's/.* \([0-9][0-9]*\) slices of .*/\1/p'
}
for p in ${*:-put get acc fop cas xacc xfop xcas putlocal lockx locks lockonly lockall fence self shmput shmfop shmxfop shmsync pingpong}; do
	a=$(slices "$p" "$ITER")
	b=$(slices "$p" $((2 * ITER)))
	echo "$p $(echo "scale=2; ($b - $a) / $ITER" | bc)"
done
