#!/bin/sh
# bench/hosts/run.sh: issue 16's measurements across network-namespace
# hosts (see README.md): builds the benchmark (bench/hosts, a go test run
# on request), starts a real Slurm of 4 namespace hosts on this machine,
# runs every measurement interleaved for ROUNDS rounds (default 7) and
# prints one markdown table of medians with the machine, the date and the
# commit. Root and Debian's slurmctld, slurmd, slurm-client and munge are
# needed. Run it on a quiet machine, from the repository's root:
#
#	sudo sh bench/hosts/run.sh [ROUNDS]
#
# Everything it starts is stopped on every path (the test's cleanup, also
# after SIGINT or SIGTERM); at the end the script checks that no namespace
# host, Slurm daemon or job process is left and exits non-zero if one is.
set -e
rounds=${1:-7}
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
pid=
stop() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap 'stop; exit 130' INT TERM
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/hosts.test" ./bench/hosts
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- . 2>/dev/null || commit="$commit (with uncommitted changes)"
# The test binary runs in the package's directory (it builds the programs
# from there); its table goes to stdout, its progress to stderr (-test.v).
code=0
(cd bench/hosts && BCS_HOSTS_BENCH=1 BCS_HOSTS_ROUNDS=$rounds BCS_HOSTS_COMMIT="$commit" \
	exec "$dir/hosts.test" -test.run '^TestHosts$' -test.count 1 -test.timeout 30m -test.v) &
pid=$!
wait "$pid" || code=$?
pid=
# Nothing may be left: the namespace hosts, the bridge, the daemons, the
# job's processes, shared memory.
left=$(ip netns list 2>/dev/null | grep -o '^bcsslurm[0-9]*' || true)
left="$left$(ip link show bcsslurm0 >/dev/null 2>&1 && echo ' bridge bcsslurm0' || true)"
# (the patterns are written so that grep's own command line does not match)
for p in /proc/[0-9]*; do
	if cat "$p/cmdline" "$p/environ" 2>/dev/null | tr '\0' ' ' | grep -q -e 'bcs-slurm[-]' -e 'bcs-hostbench[-]'; then
		left="$left pid ${p#/proc/}"
	fi
done
for d in "${TMPDIR:-/tmp}"/bcs-slurm-* "${TMPDIR:-/tmp}"/bcs-hostbench-*; do
	if [ -e "$d" ]; then left="$left $d"; fi
done
if ls /dev/shm/bcs-* >/dev/null 2>&1; then left="$left $(ls /dev/shm/bcs-*)"; fi
if [ -n "$left" ]; then
	echo "bench/hosts: left behind: $left" >&2
	exit 1
fi
exit $code
