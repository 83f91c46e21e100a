#!/usr/bin/env bash
# Issue 15's closing note: the kernel monitor's evidence for (1) why the
# §3.3 barrier period is 10-11 slices here rather than the paper's 9, and
# (2) what slows the ranks' computation between slices. Needs root (or
# CAP_BPF and CAP_PERFMON) and the kernel's BTF; run it on a quiet machine.
#
#   bench/kernel-explain.sh [BARRIER_ITERS] [COMPUTE_ITERS]   (defaults 1500, 1000)
#
# 1. examples/barrier (2 ranks, 250 µs slices, BCS_MDS=main,elan,kernel),
#    then `kernelexplain barrier`: the period's distribution against the
#    ideal (2 + compute ÷ slice = 9 for 1.9 ms), and the extra slices split
#    over the last rank's wake-up latency, its runnable time and its time
#    on CPU past its compute's end, and what the kernel did not see.
# 2. bench/computephase: bench/peers' calibrated work (1 ms, KX_LOOPS to
#    give the loop count) with 64 KiB halos, KX_RANKS ranks (default 2)
#    under bcsmpi (BCS_MDS=elan,kernel, default slice), and the same work in
#    as many plain processes at once, unpinned and then pinned the same way (bcsmpi's
#    rank_pin on: rank r on the r-th allowed CPU; the plain ones by taskset),
#    then `kernelexplain compute`: time on CPU against runnable per
#    iteration, switches, migrations, and who interfered while ranks computed.
# BCSRUN_FLAGS passes flags to bcsrun in both jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
iters=${1:-1500}
citers=${2:-1000}
nranks=${KX_RANKS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/" ./cmd/bcsrun ./examples/barrier ./bench/computephase ./bench/kernelexplain
cd "$out"

# bcs JOBNAME ARGS...: one bcsrun job; fails naming its stderr.
bcs() {
	local name=$1
	shift
	if ! ./bcsrun ${BCSRUN_FLAGS:-} "$@" >"$name.out" 2>"$name.err"; then
		echo "bcsrun $* failed:" >&2
		cat "$name.err" >&2
		exit 1
	fi
	# What bcsrun said (the monitor's state among it; kernelexplain refuses a
	# job whose manifest says the monitor did not run).
	grep -v "MDS data in" "$name.err" >&2 || true
	cat "$name.out"
}

echo "== 1. the §3.3 barrier period (load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
BCS_MDS=main,elan,kernel BCS_MDS_DIR="$out/mds-barrier" BCS_EMDS_FIRST=300 BCS_EMDS_SLICES=$((iters * 14)) \
	bcs barrier -n 2 --timeslice 250us ./barrier -iters "$iters"
./kernelexplain barrier "$out/mds-barrier/latest"

echo
echo "== 2. computation between slices (load $(cut -d' ' -f1-3 /proc/loadavg))"
loops=${KX_LOOPS:-$(./computephase calibrate)}
echo "calibrated work: $loops loops for 1 ms"
# The CPUs this shell may use, in order (bcsrun pins rank r to the r-th).
cpus=()
for part in $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr , ' '); do
	if [[ $part == *-* ]]; then
		for ((c = ${part%-*}; c <= ${part#*-}; c++)); do cpus+=("$c"); done
	else
		cpus+=("$part")
	fi
done
for pin in off on; do
	echo "-- ranks pinned: $pin"
	mkdir -p "ph-$pin"
	BCS_RANK_PIN=$pin BCS_MDS=elan,kernel BCS_MDS_DIR="$out/mds-$pin" \
		bcs "compute-$pin" -n "$nranks" ./computephase mpi "$loops" "$citers" "$out/ph-$pin/bcs"
	pids=()
	for ((r = 0; r < nranks; r++)); do
		if [ "$pin" = on ]; then
			taskset -c "${cpus[r % ${#cpus[@]}]}" ./computephase plain "$loops" "$citers" "$out/ph-$pin/plain" &
		else
			./computephase plain "$loops" "$citers" "$out/ph-$pin/plain" &
		fi
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	./kernelexplain compute -mds "$out/mds-$pin/latest" "$out/ph-$pin"/*.csv
done
