#!/bin/sh
# Before and after in one run: bench/bw built at git revision BASE (default
# main) and at the working tree, run alternately ROUNDS times for each
# configuration, one line per run with the ratio to memcpy that bw prints
# (the memcpy of the same size in the same process, same run), then the
# medians per build and configuration: MB/s, their ratio new ÷ base, and the
# ratios to memcpy (on a loaded machine the memcpy figure itself swings, so
# read new ÷ base there, and the ratios to memcpy only on a quiet one).
#
#	sh bench/bw/ab.sh [ROUNDS] [BASE]
#
# Configurations: one 16 MiB message at a time (-window 1), 16 MiB messages
# four in flight, and a stream of 1 MiB messages (64 in flight), all within
# one node; BCSRUN_FLAGS is passed to both builds' bcsrun. Run it on a quiet
# machine: the figures are bandwidths.
set -e
rounds=${1:-3}
base=${2:-main}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base/src" "$tmp/new"
git -C "$root" archive "$base" | tar -x -C "$tmp/base/src"
(cd "$tmp/base/src" && go build -o "$tmp/base/" ./cmd/bcsrun ./bench/bw)
(cd "$root" && go build -o "$tmp/new/" ./cmd/bcsrun ./bench/bw)
new="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo +changes)"
echo "bench/bw a/b on $(hostname), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'): base $base ($(git -C "$root" rev-parse --short "$base")), new $new, rounds $rounds"
for cfg in "-size 16777216 -count 16 -window 1" "-size 16777216 -count 16 -window 4" "-size 1048576 -count 256 -window 64"; do
	i=0
	while [ "$i" -lt "$rounds" ]; do
		for b in base new; do
			line=$("$tmp/$b/bcsrun" ${BCSRUN_FLAGS:-} -n 2 "$tmp/$b/bw" $cfg | grep '^bw:')
			r=$(echo "$line" | sed 's/.*ratio //')
			mbs=$(echo "$line" | sed 's/.*bytes: \([0-9]*\) MB\/s.*/\1/')
			echo "$b	$cfg	$r	$line"
			echo "$r" >>"$tmp/$b.$(echo "$cfg" | tr -d ' -')"
			echo "$mbs" >>"$tmp/$b.mbs.$(echo "$cfg" | tr -d ' -')"
		done
		i=$((i + 1))
	done
done
echo
echo "| configuration | base $base MB/s | new MB/s | new ÷ base (MB/s) | base ÷ memcpy | new ÷ memcpy |"
echo "|---|---|---|---|---|---|"
for cfg in "-size 16777216 -count 16 -window 1" "-size 16777216 -count 16 -window 4" "-size 1048576 -count 256 -window 64"; do
	f=$(echo "$cfg" | tr -d ' -')
	med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
	mb=$(med "$tmp/base.$f")
	mn=$(med "$tmp/new.$f")
	bb=$(med "$tmp/base.mbs.$f")
	bn=$(med "$tmp/new.mbs.$f")
	echo "| $cfg | $bb | $bn | $(awk -v a="$bb" -v b="$bn" 'BEGIN {printf "%.2f", b/a}') | $mb | $mn |"
done
