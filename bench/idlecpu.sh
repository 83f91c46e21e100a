#!/bin/sh
# Issue 12 item 5, before and after in one run: the CPU the runtime's own
# threads take per slice while the ranks compute. bench/computephase's
# stencil (bench/peers' calibrated 1 ms of work, 64 KiB halos) under bcsrun
# built at git revision BASE (default main) and at the working tree, run
# alternately ROUNDS times under bench/runtimecpu, which reports CPU µs per
# slice of bcsrun's strobe thread (master, and the agent of a single node),
# bcsrun's other threads, a rank's main thread (its work, its waits and
# spins) and a rank's other threads (the Go runtime's). Then the medians per
# build, their ratio new ÷ base, the strobes' mean lateness (what a smaller
# strobe_spin costs) and the compute phases' median wall time and time on
# CPU per iteration (the same work: it should not grow). A third arm, "spun",
# runs the new build with the former spins (strobe_spin 100us, spin 20us), so
# the lateness they bought is measured in the same run.
#
#	sh bench/idlecpu.sh [ROUNDS] [BASE] [ITERS]     (defaults 3, main, 2000)
#
# KX_RANKS ranks (default 2); BCSRUN_FLAGS is passed to both builds' bcsrun.
# Run it on a quiet machine: on a busy one the ranks wait for CPUs and the
# figures swing.
set -e
rounds=${1:-3}
base=${2:-main}
iters=${3:-2000}
nranks=${KX_RANKS:-2}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base/src" "$tmp/new"
git -C "$root" archive "$base" | tar -x -C "$tmp/base/src"
(cd "$tmp/base/src" && go build -o "$tmp/base/" ./cmd/bcsrun ./bench/computephase)
(cd "$root" && go build -o "$tmp/new/" ./cmd/bcsrun ./bench/computephase ./bench/runtimecpu)
new="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo +changes)"
loops=${KX_LOOPS:-$("$tmp/new/computephase" calibrate)}
echo "bench/idlecpu a/b on $(hostname), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC'): base $base ($(git -C "$root" rev-parse --short "$base")), new $new, rounds $rounds, $nranks ranks, $iters iterations of $loops loops (1 ms)"
echo "build	strobe	bcsrun_other	rank_main	rank_other	late_mean_us	phase_p50_us	oncpu_per_iter_us	(CPU µs per slice)"
i=0
while [ "$i" -lt "$rounds" ]; do
	for b in base new spun; do
		rm -f "$tmp/ph"-*
		bin=$b spins=
		if [ "$b" = spun ]; then # the new build with the former spins: what they buy in lateness
			bin=new spins="BCS_STROBE_SPIN=100us BCS_SPIN=20us"
		fi
		env $spins "$tmp/new/runtimecpu" -- "$tmp/$bin/bcsrun" -v ${BCSRUN_FLAGS:-} -n "$nranks" "$tmp/$bin/computephase" mpi "$loops" "$iters" "$tmp/ph" >"$tmp/out" 2>"$tmp/err" || {
			cat "$tmp/err" >&2
			exit 1
		}
		cpu=$(sed -n 's/^runtimecpu: strobe=\([^ ]*\) bcsrun_other=\([^ ]*\) rank_main=\([^ ]*\) rank_other=\([^ ]*\)$/\1	\2	\3	\4/p' "$tmp/out")
		# base builds before this change do not print the lateness: "-"
		late=$(sed -n 's/^bcsrun: strobe lateness: mean \([0-9.]*\)µs.*/\1/p' "$tmp/err")
		ph=$(cat "$tmp/ph"-rank*.csv | awk -F, '$1=="bcs" {p+=$9; c+=$5/$3; n++} END {if (n) printf "%.0f\t%.0f", p/n/1e3, c/n/1e3}')
		line="$b	$cpu	${late:--}	$ph"
		echo "$line"
		echo "$line" >>"$tmp/all"
	done
	i=$((i + 1))
done
echo "medians (new ÷ base; spun: the new build with strobe_spin 100us, spin 20us):"
awk -F'\t' '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ n[$1]++; for (c = 2; c <= 8; c++) v[$1, c, n[$1]] = $c }
END {
	split("strobe bcsrun_other rank_main rank_other late_mean_us phase_p50_us oncpu_per_iter_us", name, " ")
	for (c = 2; c <= 8; c++) {
		for (b in n) { delete a; for (i = 1; i <= n[b]; i++) a[i] = v[b, c, i]; m[b] = med(a, n[b]) }
		r = (m["base"] > 0 && m["base"] != "-") ? sprintf("%.2f", m["new"] / m["base"]) : "-"
		printf "  %-18s base %8s  new %8s  ratio %5s   new with the former spins %8s\n", name[c - 1], m["base"], m["new"], r, m["spun"]
	}
}' "$tmp/all"
