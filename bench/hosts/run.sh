#!/bin/sh
# bench/hosts/run.sh: issue 16's measurements across network-namespace
# hosts (see README.md): builds the benchmark (bench/hosts, a go test run
# on request), starts a real Slurm of 4 namespace hosts on this machine,
# runs every measurement interleaved for ROUNDS rounds (default 7) and
# prints one markdown table of medians with the machine, the date and the
# commit. Root and Debian's slurmctld, slurmd, slurm-client and munge are
# needed. Run it on a quiet machine, from the repository's root:
#
#	sh bench/hosts/run.sh [ROUNDS]    # as root
#
# Everything it starts is stopped on every path (the test's cleanup, also
# after SIGINT or SIGTERM); at the end the script checks that no namespace
# host, Slurm daemon or job process is left and exits non-zero if one is.
set -e
rounds=${1:-7}
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM # (the EXIT trap runs)
go test -c -o "$dir/hosts.test" ./bench/hosts
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- . 2>/dev/null || commit="$commit (with uncommitted changes)"
# The test binary runs in the package's directory (it builds the programs
# from there); its table goes to stdout, its progress to stderr (-test.v).
# SIGINT or SIGTERM to the script: the test ends the running job and tears
# the cluster down (its cleanup), and the script still checks what is left.
# The shared-memory files there before the run are not the run's (another
# user's or another test's on a shared machine): listed now, left out below.
shmBefore=$(ls -1 /dev/shm 2>/dev/null | grep '^bcs-' || true)
code=0
interrupted=
(cd bench/hosts && BCS_HOSTS_BENCH=1 BCS_HOSTS_ROUNDS=$rounds BCS_HOSTS_COMMIT="$commit" \
	exec "$dir/hosts.test" -test.run '^TestHosts$' -test.count 1 -test.timeout 30m -test.v) &
pid=$!
trap 'interrupted=1; kill -TERM "$pid" 2>/dev/null' INT TERM
wait "$pid" || code=$?
if [ -n "$interrupted" ]; then
	wait "$pid" 2>/dev/null || true # its teardown
	code=130
fi
trap - INT TERM
# Nothing may be left: the namespace hosts, the bridge, the daemons, the
# job's processes, shared memory. Checked holding the namespace cluster's
# machine-wide lock (internal/slurmtest), so that another user's live
# cluster (tests on a shared machine) is not taken for a leftover.
exec 9>/run/lock/bcs-slurmtest.lock
flock -w 600 9 || echo "bench/hosts: the namespace cluster's lock is held elsewhere; what follows may be another run's" >&2
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
# Shared memory: only files of this user that were not there before the run
# (one another test of this user made meanwhile would still be counted).
me=$(id -u)
for f in /dev/shm/bcs-*; do
	[ -e "$f" ] || continue
	[ "$(stat -c %u "$f" 2>/dev/null)" = "$me" ] || continue
	if ! printf '%s\n' "$shmBefore" | grep -qxF "${f##*/}"; then left="$left $f"; fi
done
if [ -n "$left" ]; then
	echo "bench/hosts: left behind: $left" >&2
	exit 1
fi
exit $code
