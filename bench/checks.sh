#!/bin/sh
# bench/checks.sh: the cost of the opt-in checks (BCS_CHECK, issue 14) on a
# 16 MiB bandwidth test (within a node and across two logical nodes), the
# stencil and the conjugate gradient example. Each configuration runs REPS
# times (default 5), interleaved, and the median is printed. The slice
# budget is fixed (2 MiB) so that the automatic one, measured at each start,
# does not add its own noise.
#
#	sh bench/checks.sh [REPS [BENCHMARKS]]
#
# BENCHMARKS is a space-separated subset of "bw bw2 stencil cg" (default all).
set -e
reps=${1:-5}
benches=${2:-bw bw2 stencil cg}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/" ./cmd/bcsrun ./examples/stencil ./examples/cg ./bench/bw
cd "$dir"
export BCS_BYTES_PER_SLICE_MAX=2097152
modes="none buffers flow buffers,flow"
run() { # name, then the command; prints one figure
	name=$1
	shift
	case $name in
	bw*) "$@" 2>&1 | sed -n 's/^bw: .*bytes: \([0-9]*\) MB\/s.*/\1/p' ;;
	stencil) "$@" 2>&1 | sed -n 's/.*wall \([0-9.]*\) s.*/\1/p' ;;
	cg) "$@" 2>&1 | sed -n 's/.* iterations in \([0-9.]*[mµ]*s\) .*/\1/p' ;;
	esac
}
for bench in $benches; do
	for m in $modes; do : >"$dir/$bench.$m"; done
	for i in $(seq "$reps"); do
		for m in $modes; do
			case $bench in
			bw) v=$(run bw ./bcsrun --check "$m" -n 2 ./bw -size 16777216 -count 32) ;;
			bw2) v=$(run bw ./bcsrun --check "$m" --nodes 2 -n 2 ./bw -size 16777216 -count 32) ;;
			stencil) v=$(run stencil ./bcsrun --check "$m" -n 4 ./stencil -iters 200) ;;
			cg) v=$(run cg ./bcsrun --check "$m" -n 4 ./cg) ;;
			esac
			echo "$v" >>"$dir/$bench.$m"
		done
	done
	for m in $modes; do
		printf '%-8s %-13s median %-10s of: %s\n' "$bench" "$m" "$(sort -g "$dir/$bench.$m" | sed -n "$(( (reps + 1) / 2 ))p")" "$(tr '\n' ' ' <"$dir/$bench.$m")"
	done
done
