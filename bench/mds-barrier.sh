#!/usr/bin/env bash
# The paper's §3.3 experiment, scaled down (compute 1.9 ms, MPI_Barrier, 250 µs
# slices, an EMDS window of 2000 slices from slice 300): prints the median
# GETTS against the slice and the barrier period in slices. On the 2-vCPU
# development VM the median was within 2% of 250 µs and the period 9 or 10
# slices for 50-80% of the gaps (issue 4's closing note); these figures moved
# here from cmd/bcsrun's tests, which keep only the runtime's exact
# properties. Usage: bench/mds-barrier.sh [iters]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
iters=${1:-1200}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/" ./cmd/bcsrun ./examples/barrier ./bench/mdsbarrier
cd "$out"
if ! BCS_MDS=elan BCS_MDS_DIR="$out/mds" BCS_EMDS_FIRST=300 BCS_EMDS_SLICES=2000 \
  ./bcsrun -n 2 --timeslice 250us ./barrier -iters "$iters" >/dev/null 2>"$out/stderr"; then
  echo "bcsrun failed:" >&2; cat "$out/stderr" >&2; exit 1
fi
./mdsbarrier "$out/mds/latest"
