#!/usr/bin/env bash
# Runs every benchmark of the runtime core and prints the figures quoted in
# the issues' closing notes. Usage: bench/run.sh [quick]
# Ratios are measured side by side in one run; absolute times on a shared
# 2-core machine are noisy, so read them as orders of magnitude.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/" ./cmd/bcsrun ./examples/... ./bench/strobe ./bench/delay ./bench/bw ./bench/coll
cd "$out"
n=4000; iters=400
[ "${1:-}" = quick ] && n=1000 && iters=100

echo "== strobe precision: actual slice start minus schedule (idle, and with 4 busy processes)"
for spin in 20us 100us; do echo "-- strobe_spin (upper bound) $spin"; ./strobe -slices $n -busy 4 -spin $spin; done

echo; echo "== delay of a blocking Send/Recv pair, in slices (posts uniform over the slice)"
for pol in slice early; do echo -n "restart=$pol: "; ./bcsrun -n 2 --restart $pol ./delay -iters $iters; done

echo; echo "== bandwidth (2 ranks) as a ratio to memcpy measured in the same run"
for budget in 1048576 4194304; do
  for nodes in 1 2; do
    for sz in 1048576 16777216; do
      echo -n "bytes_per_slice_max=$budget nodes=$nodes size=$sz: "
      BCS_BYTES_PER_SLICE_MAX=$budget ./bcsrun -n 2 --nodes $nodes ./bw -size $sz -count $((256 * 1048576 / sz))
    done
  done
done

echo; echo "== stencil (1 ms compute, 64 KiB halos), 2 and 4 ranks on 2 cores"
for r in 2 4; do ./bcsrun -v -n $r ./stencil -iters 500 2>&1; done

echo; echo "== CPU used by master + agents while the job is idle (ranks: sleep 2)"
for nodes in 1 2; do
  for ts in 500us 250us; do ./bcsrun -v -n 2 --nodes $nodes --timeslice $ts sleep 2 2>&1; done
done

echo; echo "== collective latency in slices (posts uniform over the slice): Barrier and Allreduce of 8 float64"
for r in 2 4 8; do
  for nodes in 1 2; do echo "-- $r ranks, $nodes node(s)"; ./bcsrun -n $r --nodes $nodes ./coll -mode latency -iters $((iters / 2)); done
done

echo; echo "== 16 MiB Bcast and Allreduce bandwidth as a ratio to memcpy measured in the same run"
for budget in 1048576 4194304; do
  for r in 2 4; do
    for nodes in 1 2; do
      echo "-- bytes_per_slice_max=$budget, $r ranks, $nodes node(s)"
      BCS_BYTES_PER_SLICE_MAX=$budget ./bcsrun -n $r --nodes $nodes ./coll -mode bw -size 16777216 -count 4
    done
  done
done

echo; echo "== conjugate gradient (2 Allreduce + 1 halo exchange per iteration), 4 ranks on 2 nodes"
./bcsrun -n 4 --nodes 2 ./cg -n 100000 -iters 300
./bcsrun -n 4 --nodes 2 --restart early ./cg -n 100000 -iters 300
