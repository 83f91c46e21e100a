#!/usr/bin/env bash
# MDS overhead: the stencil and the paper's §3.3 barrier job with MDS off,
# MMDS on, EMDS on, both, and both with the kernel monitor (needs root and
# BTF; bcsrun says so otherwise), interleaved over rounds in one run; prints
# the median wall time of each and its ratio to "off", and for the kernel
# monitor its own accounting of its cost per slice in each barrier run.
# Usage: bench/mds.sh [rounds] [modes, default "none main elan main,elan main,elan,kernel"]
# The ratios are to "none", or to the first mode when "none" is not among them.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
rounds=${1:-3}
modes=${2:-none main elan main,elan main,elan,kernel}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/" ./cmd/bcsrun ./examples/stencil ./examples/barrier
cd "$out"
declare -A t k
for r in $(seq "$rounds"); do
  for mode in $modes; do
    s=$(BCS_MDS=$mode BCS_MDS_DIR="$out/mds" ./bcsrun -n 2 ./stencil -iters 400 2>/dev/null | sed -n 's/.*wall \([0-9.]*\) s.*/\1/p')
    b0=$(date +%s.%N)
    BCS_MDS=$mode BCS_MDS_DIR="$out/mds" BCS_EMDS_FIRST=2500 BCS_EMDS_SLICES=5000 ./bcsrun -n 2 --timeslice 250us ./barrier -iters 2000 >/dev/null 2>&1
    b=$(echo "$(date +%s.%N) - $b0" | bc)
    t[stencil,$mode]+="$s "
    t[barrier,$mode]+="$b "
    # The kernel monitor's own accounting (emds-kernel-cost.csv): ns per
    # slice on the agent's thread (publish, and publish_drain when the
    # reader fell behind) and on the reader's thread (drain_cpu).
    if [[ $mode == *kernel* && -f mds/latest/emds-kernel-cost.csv ]]; then
      c=$(awk -F, '$1=="publish"{n=$2; p=$3} $1=="publish_drain_cpu"{pd=$3} $1=="drain_cpu"{d=$3} $1=="lost"{l=$2}
        $1=="lost_records"{lr=$2}
        END {if (n>0) printf "agent %.3f µs/slice (publish %.3f + its drains %.3f), reader %.3f µs CPU/slice, %d rows and %d records lost", (p+pd)/n/1000, p/n/1000, pd/n/1000, d/n/1000, l, lr}' mds/latest/emds-kernel-cost.csv)
      k[$mode]+="    $c"$'\n'
    fi
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
basemode=none
[[ " $modes " == *" none "* ]] || basemode=${modes%% *}
echo "ratios to BCS_MDS=$basemode"
for job in stencil barrier; do
  base=$(echo "${t[$job,$basemode]}" | median)
  for mode in $modes; do
    m=$(echo "${t[$job,$mode]}" | median)
    printf "%-8s BCS_MDS=%-17s median %8.3f s  ratio %.4f  (runs: %s)\n" "$job" "$mode" "$m" "$(echo "$m / $base" | bc -l)" "${t[$job,$mode]}"
  done
done
for mode in $modes; do
  if [[ -n ${k[$mode]:-} ]]; then
    echo "barrier  BCS_MDS=$mode kernel monitor cost per run:"
    printf "%s" "${k[$mode]}"
  fi
done
