#!/bin/bash
# bench/fds.sh: the descriptors one bcsrun holds with 64 logical nodes (issue
# 16 §4). Runs `bcsrun --nodes 64 -n 64 PROG ARGS` and samples
# /proc/<bcsrun>/fd every 50 ms while it runs; prints the peak and how many
# of the descriptors at the peak were sockets. The count does not depend on
# the host's load (only on which nodes exchange data), so any host will do.
#
#	bash bench/fds.sh [BASE]
#
# runs examples/ring (-laps 20), stencil (-iters 100 -halo 4096) and cg
# (-n 20000 -iters 50) with this tree's bcsrun and examples and, given BASE
# (a git revision, e.g. main), with that revision's own too (built from git
# archive). A job that exits non-zero stops the script with its output.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build() { # build DIR OUT: bcsrun and the examples of the tree at DIR into OUT
	(cd "$1" && go build -o "$2/" ./cmd/bcsrun ./examples/ring ./examples/stencil ./examples/cg)
}
mkdir -p "$tmp/this"
build . "$tmp/this"
builds=(this)
if [ $# -ge 1 ]; then
	mkdir -p "$tmp/src" "$tmp/base"
	git archive "$1" | tar -x -C "$tmp/src"
	build "$tmp/src" "$tmp/base"
	builds=(base this)
fi
peak() { # peak BUILD PROG ARGS...
	local b=$1; shift
	"$tmp/$b/bcsrun" --nodes 64 -n 64 "$tmp/$b/$1" "${@:2}" >"$tmp/out" 2>&1 &
	local pid=$! max=0 socks=0 n
	while kill -0 $pid 2>/dev/null; do
		n=$(ls /proc/$pid/fd 2>/dev/null | wc -l)
		if [ "$n" -gt "$max" ]; then
			max=$n
			socks=$(ls -l /proc/$pid/fd 2>/dev/null | grep -c 'socket:' || true)
		fi
		sleep 0.05
	done
	local rc=0
	wait $pid || rc=$?
	printf '%-5s %-8s exit %d  peak descriptors %5d  sockets %5d\n' "$b" "$1" "$rc" "$max" "$socks"
	if [ "$rc" -ne 0 ]; then # a failed job's count means nothing
		echo "fds.sh: $b's bcsrun running $1 exited $rc:" >&2
		tail -20 "$tmp/out" >&2
		exit 1
	fi
}
for p in "ring -laps 20" "stencil -iters 100 -halo 4096" "cg -n 20000 -iters 50"; do
	for b in "${builds[@]}"; do
		# shellcheck disable=SC2086
		peak "$b" $p
	done
done
