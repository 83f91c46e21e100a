#!/usr/bin/env bash
# The paper's §3.3 barrier job (as bench/mds-barrier.sh) with the kernel
# monitor on (needs root and the kernel's BTF): prints bcsreport --kernel and
# the barrier cycles by period with what the kernel did to the ranks in them
# (bench/kernelbarrier). Usage: bench/kernel-barrier.sh [iters]
#
# On the 2-vCPU development VM (shared, load 8-15) on 2026-11-23: period 10
# in 117 of 172 cycles, 11 in 34, 9 in 3; the cycle's largest wake-up
# latency (agent's wake → rank running) had a median of 266 µs (about one
# slice) in 9- and 10-slice cycles, 512 µs in 11-13, 1.3 ms in 14. Per
# cycle the two ranks together ran 1.9 ms of their 2 × 1.9 ms compute
# windows, waited runnable 2.6 ms and were kept off a CPU by another task
# 1.1 ms: by each other (0.5 ms), by the master's strobe thread (0.29 ms,
# which was on a CPU 14% of the time) and by their own Go runtime threads.
# Three CPU-hungry threads (two ranks, the strobe thread) on two CPUs: a
# woken rank starts about a slice late and the computation between slices
# runs at about half speed.
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
