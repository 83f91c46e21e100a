#!/usr/bin/env bash
# The kernel monitor's overhead, this tree's against an earlier commit's,
# side by side in one run: the paper's §3.3 barrier job (as bench/mds.sh
# runs it) with BCS_MDS=elan, with elan,kernel built from BASE and with
# elan,kernel built from this tree, interleaved over rounds; prints the
# median wall time of each and its ratio to elan, and each kernel run's
# own accounting (emds-kernel-cost.csv). The wall time is bcsrun's whole run,
# start-up and tear-down included (as bench/mds.sh measures it): each round
# also runs the job with -iters 1, whose medians are the fixed part of each
# (elan's own and the kernel monitor's Open, Dump and Close), and for this
# tree's the medians of its start_* rows (the BTF from the CO-RE cache or
# decoded, the programs' loading, Open's wait for them and Open's whole
# time). This tree's runs use a CO-RE cache of their own
# (BCS_MDS_KERNEL_CACHE in the temporary directory), filled by one job
# before the rounds, as every job after a kernel's first finds it. Needs
# root and the kernel's BTF, and a quiet machine: on a loaded one the
# spread swamps a 1% difference.
# Usage: bench/kernel-ab.sh [rounds, default 7] [BASE, default 505f700: the
# monitor before the CO-RE cache (the BTF decoded once per job, beside the
# launcher's start-up); 1f30059: before its start-up cost was first cut
# (BTF decoded twice, reader at nice 0); 518bd6c: the programs before
# their per-event cost was cut]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
rounds=${1:-7}
base=${2:-505f700}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/src" "$out/base" "$out/new"
git archive "$base" | tar -x -C "$out/src"
(cd "$out/src" && go build -o "$out/base/" ./cmd/bcsrun ./examples/barrier)
go build -o "$out/new/" ./cmd/bcsrun ./examples/barrier
declare -A t k f
declare -a sb sl sw so
run() { # run MODE VERSION [ITERS]: the barrier job's wall time
  local b0 env=()
  [[ $2 == new ]] && env=(BCS_MDS_KERNEL_CACHE="$out/kcache")
  b0=$(date +%s.%N)
  env "${env[@]}" BCS_MDS=$1 BCS_MDS_DIR="$out/mds" BCS_EMDS_FIRST=2500 BCS_EMDS_SLICES=5000 \
    "$out/$2/bcsrun" -n 2 --timeslice 250us "$out/$2/barrier" -iters "${3:-2000}" >/dev/null 2>"$out/stderr" ||
    { echo "bcsrun ($1, $2) failed:" >&2; cat "$out/stderr" >&2; exit 1; }
  echo "$(date +%s.%N) - $b0" | bc
}
start() { # the last run's start_* rows (this tree's): ms, and whether the BTF came from the cache
  awk -F, '$1=="start_btf"{printf "%s %.2f ", $2, $3/1e6} $1=="start_load"||$1=="start_wait"||$1=="start_open"{printf "%.2f ", $3/1e6}' \
    "$out/mds/latest/emds-kernel-cost.csv"
}
run elan,kernel new 1 >/dev/null # fills this tree's CO-RE cache
cost() { # the last run's kernel monitor accounting, per slice
  awk -F, '$1=="publish"{n=$2; p=$3} $1=="drain_cpu"{d=$3} $1=="records"{r=$2} $1=="lost_records"{lr=$2} $1=="reader_raised"{rr=$2}
    END {if (n>0) printf "publish %.3f µs/slice, reader %.3f µs CPU/slice, %.1f records/slice, %d lost, reader raised %d times", p/n/1000, d/n/1000, r/n, lr, rr}' \
    "$out/mds/latest/emds-kernel-cost.csv"
}
for r in $(seq "$rounds"); do
  for v in elan base new; do
    case $v in
    elan) t[$v]+="$(run elan new) "; f[$v]+="$(run elan new 1) " ;;
    *) t[$v]+="$(run elan,kernel "$v") "; k[$v]+="    $(cost)"$'\n'; f[$v]+="$(run elan,kernel "$v" 1) "
      if [[ $v == new ]]; then
        read -r c b l w o <<<"$(start)"
        [[ $c == 1 ]] || { echo "this tree's -iters 1 run decoded the BTF: its CO-RE cache was not used" >&2; exit 1; }
        sb+=("$b"); sl+=("$l"); sw+=("$w"); so+=("$o")
      fi ;;
    esac
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m0=$(echo "${t[elan]}" | median)
for v in elan base new; do
  m=$(echo "${t[$v]}" | median)
  printf "barrier %-24s median %8.3f s  ratio to elan %.4f  (runs: %s)\n" \
    "$([[ $v == elan ]] && echo "BCS_MDS=elan" || echo "elan,kernel ($v)")" "$m" "$(echo "$m / $m0" | bc -l)" "${t[$v]}"
done
f0=$(echo "${f[elan]}" | median)
for v in elan base new; do
  m=$(echo "${f[$v]}" | median)
  printf "fixed (-iters 1) %-24s median %8.3f s  over elan %+.3f s  (runs: %s)\n" \
    "$([[ $v == elan ]] && echo "BCS_MDS=elan" || echo "elan,kernel ($v)")" "$m" "$(echo "$m - $f0" | bc -l)" "${f[$v]}"
done
for v in base new; do
  echo "kernel monitor ($v), per run:"
  printf "%s" "${k[$v]}"
done
printf "this tree's start-up (-iters 1, medians, ms): BTF from the CO-RE cache %s, programs loaded %s (both beside the launcher's start-up), Open's wait for them %s, Open %s\n" \
  "$(echo "${sb[*]}" | median)" "$(echo "${sl[*]}" | median)" "$(echo "${sw[*]}" | median)" "$(echo "${so[*]}" | median)"
