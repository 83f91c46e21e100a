#!/usr/bin/env bash
# The README's test command under load: runs the whole suite RUNS times (default
# 3) while BUSY competing busy processes (default 2) spin on the machine's
# cores, and prints each run's result and wall time. Usage:
#   bench/underload.sh [RUNS] [BUSY]
# It proves the suite does not depend on an idle machine (no wall-clock
# assertions, no false deadlocks under load). The busy processes are ended on
# every path.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
runs=${1:-3}
busy=${2:-2}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT INT TERM
for _ in $(seq "$busy"); do
  (while :; do :; done) &
  pids+=($!)
done
fail=0
for r in $(seq "$runs"); do
  log=$(mktemp)
  t0=$(date +%s.%N)
  go test -race -count=1 -timeout 30m ./... >"$log" 2>&1
  rc=$?
  t=$(echo "$(date +%s.%N) - $t0" | bc)
  okc=$(grep -c '^ok ' "$log")
  failc=$(grep -c '^FAIL\b' "$log")
  printf "run %d: exit %d, %d packages ok, %d FAIL lines, wall %.1f s, %d busy processes\n" "$r" "$rc" "$okc" "$failc" "$t" "$busy"
  if [ "$rc" -ne 0 ]; then fail=1; grep -E '^(--- FAIL|FAIL|panic)' "$log" | head -20; fi
  rm -f "$log"
done
exit $fail
