#!/usr/bin/env bash
# MDS overhead: the stencil and the paper's §3.3 barrier job with MDS off,
# MMDS on, EMDS on, both, and both with the kernel monitor (needs root and
# BTF; bcsrun says so otherwise), interleaved over rounds in one run; prints
# the median wall time of each and its ratio to "off".
# Usage: bench/mds.sh [rounds] [modes, default "none main elan main,elan main,elan,kernel"]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
rounds=${1:-3}
modes=${2:-none main elan main,elan main,elan,kernel}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/" ./cmd/bcsrun ./examples/stencil ./examples/barrier
cd "$out"
declare -A t
for r in $(seq "$rounds"); do
  for mode in $modes; do
    s=$(BCS_MDS=$mode BCS_MDS_DIR="$out/mds" ./bcsrun -n 2 ./stencil -iters 400 2>/dev/null | sed -n 's/.*wall \([0-9.]*\) s.*/\1/p')
    b0=$(date +%s.%N)
    BCS_MDS=$mode BCS_MDS_DIR="$out/mds" BCS_EMDS_FIRST=2500 BCS_EMDS_SLICES=5000 ./bcsrun -n 2 --timeslice 250us ./barrier -iters 2000 >/dev/null 2>&1
    b=$(echo "$(date +%s.%N) - $b0" | bc)
    t[stencil,$mode]+="$s "
    t[barrier,$mode]+="$b "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for job in stencil barrier; do
  base=$(echo "${t[$job,none]}" | median)
  for mode in $modes; do
    m=$(echo "${t[$job,$mode]}" | median)
    printf "%-8s BCS_MDS=%-17s median %8.3f s  ratio %.4f  (runs: %s)\n" "$job" "$mode" "$m" "$(echo "$m / $base" | bc -l)" "${t[$job,$mode]}"
  done
done
