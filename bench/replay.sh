#!/bin/sh
# Record-and-replay cost (README: Record and replay): the stencil (no logged
# calls) and the wildcard-heavy master-worker, each run plainly, recorded and
# replayed, alternating, REPS times; prints each run's own wall time and the
# recording's size. Run from a directory holding bcsrun, stencil and
# masterworker (go build -o DIR/ ./cmd/bcsrun ./examples/stencil ./examples/masterworker).
#
# LEVEL: calls (the default --record DIR) or slices (--record DIR,slices:
# the slice log too, replayed slice by slice).
#
#	sh bench/replay.sh [REPS] [RANKS] [LEVEL]
set -e
reps=${1:-5}
n=${2:-4}
level=${3:-}
spec=""
[ -n "$level" ] && spec=",$level"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for prog in "stencil -iters 300 -work 500us" "masterworker -tasks 2000 -work 100us"; do
	name=${prog%% *}
	i=0
	while [ $i -lt "$reps" ]; do
		plain=$(./bcsrun -n "$n" ./$prog | grep -o 'in [0-9.]* s\|wall [0-9.]* s' | grep -o '[0-9.]*')
		rm -rf "$tmp/rec"
		rec=$(./bcsrun -n "$n" --record "$tmp/rec$spec" ./$prog | grep -o 'in [0-9.]* s\|wall [0-9.]* s' | grep -o '[0-9.]*')
		rep=$(./bcsrun -n "$n" --replay "$tmp/rec" ./$prog | grep -o 'in [0-9.]* s\|wall [0-9.]* s' | grep -o '[0-9.]*')
		bytes=$(cat "$tmp"/rec/*.rpl | wc -c)
		echo "$name plain $plain s  recorded $rec s  replayed $rep s  log $bytes bytes"
		i=$((i + 1))
	done
done
