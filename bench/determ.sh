#!/usr/bin/env bash
# Deterministic mode's cost (issue 13): the stencil and the conjugate
# gradient (no wildcards: nothing should change) and the master-worker farm
# (a wildcard receive per task), each run REPS times with and without
# --deterministic, interleaved; prints the median wall time of each and how
# many different schedules the farm produced (1 expected with the mode).
# Usage: bench/determ.sh [REPS]. A shared 2-core machine is noisy: compare
# medians, and only side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
reps=${1:-7}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/" ./cmd/bcsrun ./examples/stencil ./examples/cg ./examples/masterworker
cd "$out"
for i in $(seq 1 "$reps"); do
  for m in off on; do
    f=""; [ $m = on ] && f=--deterministic
    echo "stencil $m $(./bcsrun -n 4 $f ./stencil -iters 300 -halo 16384 -work 300us | sed 's/.*wall \([0-9.]*\) s.*/\1/')"
    echo "cg $m $(./bcsrun -n 4 $f ./cg | grep -o 'in [0-9.]*ms' | head -1 | tr -d 'inms ' | awk '{print $1/1000}')"
    echo "masterworker $m $(./bcsrun -n 4 $f ./masterworker -tasks 300 | sed 's/.*wall \([0-9.]*\) s.*digest \(.*\)/\1 \2/')"
    echo "masterworker-fine $m $(./bcsrun -n 4 $f ./masterworker -tasks 1000 -work 20us | sed 's/.*wall \([0-9.]*\) s.*digest \(.*\)/\1 \2/')"
  done
done > runs.txt
# median and schedule count per program and mode (POSIX awk: no asort)
for k in $(awk '{print $1 "/" $2}' runs.txt | sort -u); do
  prog=${k%/*}; mode=${k#*/}
  times=$(awk -v p="$prog" -v m="$mode" '$1 == p && $2 == m {print $3}' runs.txt | sort -n)
  cnt=$(echo "$times" | wc -l)
  med=$(echo "$times" | awk -v n="$cnt" '{a[NR] = $1} END {print (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}')
  sch=$(awk -v p="$prog" -v m="$mode" '$1 == p && $2 == m && NF > 3 {print $4}' runs.txt | sort -u | wc -l)
  printf "%-18s %-3s median %s s over %d runs" "$prog" "$mode" "$med" "$cnt"
  [ "$sch" -gt 0 ] && printf ", %d schedule(s)" "$sch"
  echo
done
