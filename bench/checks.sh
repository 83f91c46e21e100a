#!/bin/sh
# bench/checks.sh: the cost of the opt-in checks (BCS_CHECK, issue 14) on a
# 16 MiB bandwidth test (within a node and across two logical nodes), the
# stencil and the conjugate gradient example. Each configuration runs REPS
# times (default 5), interleaved, and the median is printed with its cost
# against "none" of the same build (how many times slower), the issue's
# goal for it and whether the median meets it, and all the figures. The
# goals: buffers at most 1.50x on the bandwidth tests and 1.05x on the
# stencil (and on cg, the other application), flow at most 1.03x
# everywhere; buffers,flow has none. The slice budget is fixed (2 MiB) so
# that the automatic one, measured at each start, does not add its own
# noise.
#
#	sh bench/checks.sh [REPS [BENCHMARKS [BASE]]]
#
# BENCHMARKS is a space-separated subset of "bw bw2 stencil cg" (default
# all: the application goals are measured only when stencil and cg are
# among them). BASE, a git revision, also builds that revision (git archive) and
# runs it interleaved with the working tree, run for run, so that a before
# and after share the host's load: rows are then labelled "base" and "this".
set -e
reps=${1:-5}
benches=${2:-bw bw2 stencil cg}
base=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/this"
go build -o "$dir/this/" ./cmd/bcsrun ./examples/stencil ./examples/cg ./bench/bw
builds=this
if [ -n "$base" ]; then
	mkdir "$dir/src" "$dir/base"
	git archive "$base" | tar -x -C "$dir/src"
	(cd "$dir/src" && go build -o "$dir/base/" ./cmd/bcsrun ./examples/stencil ./examples/cg ./bench/bw)
	builds="base this"
fi
cd "$dir"
export BCS_BYTES_PER_SLICE_MAX=2097152
modes="none buffers flow buffers,flow"
run() { # name, then the command; prints one figure
	name=$1
	shift
	case $name in
	bw*) "$@" 2>&1 | sed -n 's/^bw: .*bytes: \([0-9]*\) MB\/s.*/\1/p' ;;
	stencil) "$@" 2>&1 | sed -n 's/.*wall \([0-9.]*\) s.*/\1/p' ;;
	cg) "$@" 2>&1 | sed -n 's/.* iterations in \([0-9.]*[mµ]*s\) .*/\1/p' |
		awk '/ms$/ { print $0 + 0; next } /µs$/ { print $0 / 1000; next } /s$/ { print $0 * 1000 }' ;; # in ms
	esac
}
for bench in $benches; do
	for b in $builds; do for m in $modes; do : >"$dir/$bench.$b.$m"; done; done
	for i in $(seq "$reps"); do
		for m in $modes; do
			for b in $builds; do
				d=$dir/$b
				case $bench in
				bw) v=$(run bw "$d/bcsrun" --check "$m" -n 2 "$d/bw" -size 16777216 -count 32) ;;
				bw2) v=$(run bw "$d/bcsrun" --check "$m" --nodes 2 -n 2 "$d/bw" -size 16777216 -count 32) ;;
				stencil) v=$(run stencil "$d/bcsrun" --check "$m" -n 4 "$d/stencil" -iters 200) ;;
				cg) v=$(run cg "$d/bcsrun" --check "$m" -n 4 "$d/cg") ;;
				esac
				echo "$v" >>"$dir/$bench.$b.$m"
			done
		done
	done
	for b in $builds; do
		none=$(sort -g "$dir/$bench.$b.none" | sed -n "$(((reps + 1) / 2))p")
		for m in $modes; do
			label=$bench
			[ -n "$base" ] && label="$bench $b"
			med=$(sort -g "$dir/$bench.$b.$m" | sed -n "$(((reps + 1) / 2))p")
			# cost against "none" of the same build: slower by this factor
			# (bw is a rate, the others are times)
			rate=0
			case $bench in bw*) rate=1 ;; esac
			ratio=$(awk -v n="$none" -v v="$med" -v rate=$rate 'BEGIN { if (n + 0 == 0 || v + 0 == 0) print "?"; else if (rate) printf "%.2fx", n / v; else printf "%.2fx", v / n }')
			goal=-
			case $bench.$m in
			bw*.buffers) goal=1.50x ;;
			*.buffers) goal=1.05x ;;
			*.flow) goal=1.03x ;;
			esac
			verdict=
			if [ "$goal" != - ] && [ "$ratio" != "?" ]; then
				verdict=$(awk -v r="${ratio%x}" -v g="${goal%x}" 'BEGIN { if (r <= g) print "met"; else print "missed" }')
			fi
			printf '%-13s %-13s median %-10s cost %-6s goal %-6s %-7s of: %s\n' "$label" "$m" "$med" "$ratio" "$goal" "$verdict" "$(tr '\n' ' ' <"$dir/$bench.$b.$m")"
		done
	done
done
