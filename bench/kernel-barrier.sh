#!/usr/bin/env bash
# The paper's §3.3 barrier job (as bench/mds-barrier.sh) with the kernel
# monitor on (needs root and the kernel's BTF): prints bcsreport --kernel and
# the barrier cycles by period with what the kernel did to the ranks in them
# (bench/kernelbarrier). Usage: bench/kernel-barrier.sh [iters]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
iters=${1:-1200}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/" ./cmd/bcsrun ./examples/barrier ./bench/mdsbarrier ./bench/kernelbarrier ./tools/bcsreport
cd "$out"
if ! BCS_MDS=elan,kernel BCS_MDS_DIR="$out/mds" BCS_EMDS_FIRST=300 BCS_EMDS_SLICES=2000 \
  ./bcsrun -n 2 --timeslice 250us ./barrier -iters "$iters" >/dev/null 2>"$out/stderr"; then
  echo "bcsrun failed:" >&2; cat "$out/stderr" >&2; exit 1
fi
grep -i "kernel monitor" "$out/stderr" >&2 || true
./mdsbarrier "$out/mds/latest"
./bcsreport --kernel "$out/mds/latest"
./kernelbarrier "$out/mds/latest"
