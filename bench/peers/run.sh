#!/usr/bin/env bash
# bench/peers/run.sh: bcsmpi beside Open MPI and MPICH on this machine, the
# same work in the same run. Installs Debian's Open MPI and MPICH if missing
# (side by side: mpicc.openmpi/mpirun.openmpi, mpicc.mpich/mpirun.mpich),
# builds peers.c for both and its Go twin (gotwin/) for bcsmpi, runs them
# interleaved (Open MPI, MPICH, bcsmpi for each configuration) and prints a
# markdown table with ratios. Not part of CI.
#
# Usage: bench/peers/run.sh [ROUNDS]   (default 3; each figure is the median
# over rounds). BCSRUN_FLAGS passes flags to bcsrun (e.g. "--restart early");
# BCS_* variables reach bcsmpi as usual. PEERS_BASE=REV adds a column for
# bcsmpi built at git revision REV (its bcsrun and gotwin), run interleaved
# with the others: before and after a change in the same run.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH
rounds=${1:-3}

if ! command -v mpicc.openmpi >/dev/null || ! command -v mpicc.mpich >/dev/null ||
	! command -v mpirun.openmpi >/dev/null || ! command -v mpirun.mpich >/dev/null; then
	echo "installing Open MPI and MPICH (apt-get)" >&2
	sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openmpi-bin libopenmpi-dev mpich libmpich-dev >&2
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpicc.openmpi -O2 -o "$out/peers.ompi" bench/peers/peers.c
mpicc.mpich -O2 -Wno-stringop-overflow -o "$out/peers.mpich" bench/peers/peers.c
go build -o "$out/" ./cmd/bcsrun ./bench/peers/gotwin
rts="ompi mpich bcs"
if [ -n "${PEERS_BASE:-}" ]; then
	mkdir -p "$out/base/src" "$out/base/bin"
	git archive "$PEERS_BASE" | tar -x -C "$out/base/src"
	mkdir -p "$out/base/src/bench/peers"
	cp -r bench/peers/gotwin "$out/base/src/bench/peers/" # the same benchmark
	(cd "$out/base/src" && go build -o "$out/base/bin/" ./cmd/bcsrun ./bench/peers/gotwin)
	rts="ompi mpich base bcs"
fi
res=$out/res
mkdir -p "$res"

cores=$(nproc)
cloops=$("$out/peers.ompi" calibrate)
gloops=$("$out/gotwin" calibrate)
"$out/peers.ompi" memcpy >"$res/memcpy"
iters=300

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# run RUNTIME RANKS ARGS...: one job of the benchmark under RUNTIME.
run() {
	local rt=$1 n=$2
	shift 2
	case $rt in
	ompi) mpirun.openmpi --oversubscribe -np "$n" "$out/peers.ompi" "$1" "$cloops" "${@:2}" ;;
	mpich) mpirun.mpich -np "$n" "$out/peers.mpich" "$1" "$cloops" "${@:2}" ;;
	bcs) "$out/bcsrun" ${BCSRUN_FLAGS:-} -n "$n" "$out/gotwin" "$1" "$gloops" "${@:2}" ;;
	base) "$out/base/bin/bcsrun" ${BCSRUN_FLAGS:-} -n "$n" "$out/base/bin/gotwin" "$1" "$gloops" "${@:2}" ;;
	esac
}

sizes=2
[ "$cores" != 2 ] && sizes="2 $cores"
for round in $(seq "$rounds"); do
	for n in $sizes; do
		for rt in $rts; do
			echo "round $round: $rt, $n ranks" >&2
			run $rt "$n" all | sed "s/^/n$n./" >>"$res/$rt"
		done
	done
	for rt in $rts; do
		echo "round $round: $rt, stencil oversubscribed and shared" >&2
		run $rt $((2 * cores)) stencil $iters | sed "s/^/over./" >>"$res/$rt"
		run $rt "$cores" stencil $iters | sed "s/^/alone./" >>"$res/$rt"
		run $rt "$cores" stencil $iters >"$out/jobA" &
		a=$!
		run $rt "$cores" stencil $iters >"$out/jobB"
		wait $a
		sed "s/^/jobA./" "$out/jobA" >>"$res/$rt"
		sed "s/^/jobB./" "$out/jobB" >>"$res/$rt"
	done
done

# get RUNTIME KEY: the median of KEY over rounds.
get() {
	awk -v k="$2" '$1 == k { v[n++] = $2 } END {
		if (n == 0) { print "-"; exit }
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		print v[int(n / 2)] }' "$res/$1"
}
# row LABEL KEY: values and the ratios bcsmpi/Open MPI, bcsmpi/MPICH (and
# bcsmpi/base with PEERS_BASE).
row() {
	local o m b x=
	o=$(get ompi "$2") m=$(get mpich "$2") b=$(get bcs "$2")
	[ -n "${PEERS_BASE:-}" ] && x=$(get base "$2")
	awk -v l="$1" -v o="$o" -v m="$m" -v b="$b" -v x="$x" 'BEGIN {
		ro = (o > 0 && b != "-") ? sprintf("%.2f", b / o) : "-"
		rm = (m > 0 && b != "-") ? sprintf("%.2f", b / m) : "-"
		if (x == "") { printf "| %s | %s | %s | %s | %s | %s |\n", l, o, m, b, ro, rm; exit }
		rx = (x > 0 && b != "-") ? sprintf("%.2f", b / x) : "-"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", l, o, m, x, b, ro, rm, rx }'
}
# shared RUNTIME: each job's wall time per iteration over the time alone.
shared() {
	awk -v a="$(get "$1" jobA.st_wall_ms)" -v b="$(get "$1" jobB.st_wall_ms)" -v s="$(get "$1" alone.st_wall_ms)" \
		'BEGIN { printf "%.2f× / %.2f×", a / s, b / s }'
}

echo
echo "bench/peers on $(hostname), $cores cores ($(lscpu | sed -n 's/^Model name: *//p')), $(date -u '+%Y-%m-%d %H:%M UTC'), bcsmpi $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes), rounds $rounds"
echo "Open MPI $(mpirun.openmpi --version 2>&1 | sed -n '1s/.*) //p'), MPICH $(mpirun.mpich --version 2>&1 | sed -n 's/^ *Version: *//p'), bcsrun ${BCSRUN_FLAGS:-default settings}; memcpy 16 MiB: $(awk '{print $2}' "$res/memcpy") MB/s"
echo "calibrated work: $cloops loops (C), $gloops loops (Go) for 1 ms alone"
echo
if [ -n "${PEERS_BASE:-}" ]; then
	echo "| measure | Open MPI | MPICH | bcsmpi $PEERS_BASE | bcsmpi | bcsmpi ÷ Open MPI | bcsmpi ÷ MPICH | bcsmpi ÷ $PEERS_BASE |"
	echo "|---|---|---|---|---|---|---|---|"
else
	echo "| measure | Open MPI | MPICH | bcsmpi | bcsmpi ÷ Open MPI | bcsmpi ÷ MPICH |"
	echo "|---|---|---|---|---|---|"
fi
for n in $sizes; do
	row "$n ranks: 8-byte half round trip, p50 (µs)" n$n.lat_us
	for s in 8 1024 65536 1048576 16777216; do
		row "$n ranks: ping-pong $s B (MB/s)" "n$n.pp_${s}_MBps"
	done
	row "$n ranks: streaming 64 × 1 MiB (MB/s)" n$n.stream_MBps
	row "$n ranks: Barrier, p50 (µs)" n$n.barrier_us
	row "$n ranks: Allreduce 8 doubles, p50 (µs)" n$n.allreduce_us
	row "$n ranks: stencil communication / iteration (ms)" n$n.st_comm_ms
	row "$n ranks: stencil compute / iteration (ms)" n$n.st_comp_ms
	row "$n ranks: stencil wall / iteration (ms)" n$n.st_wall_ms
done
row "$((2 * cores)) ranks on $cores cores: stencil wall / iteration (ms)" over.st_wall_ms
row "$cores ranks alone: stencil wall / iteration (ms)" alone.st_wall_ms
if [ -n "${PEERS_BASE:-}" ]; then
	echo "| two $cores-rank stencil jobs at once, each vs alone | $(shared ompi) | $(shared mpich) | $(shared base) | $(shared bcs) | | | |"
else
	echo "| two $cores-rank stencil jobs at once, each vs alone | $(shared ompi) | $(shared mpich) | $(shared bcs) | | |"
fi
echo
echo "Times (µs, ms): ratio > 1 means bcsmpi is slower. Bandwidths (MB/s): ratio < 1 means bcsmpi is slower."
