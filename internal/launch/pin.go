package launch

import "github.com/bcsmpi/bcsmpi/internal/unix"

// Rank pinning (key rank_pin). The ranks of a job on a host are pinned one
// per core, in the host's rank order (node by node, each node's ranks in
// block order), to the cores the launcher may use: the affinity of its
// spawning thread, so that taskset, a cpuset cgroup or Slurm's binding of
// bcsd narrow it. The spawning thread binds itself to the rank's core just
// before the fork (the child inherits the thread's mask, and keeps it
// across exec: no moment unpinned, no call in the rank) and gets its own
// mask back once the ranks are started.
//
//   - auto (the default): pinned in a gang (the ranks have a process group:
//     bcsd start's jobs, and jobs across hosts in its gang), when the host's
//     ranks of the job fit in the cores. The gang runs one job at a time, so
//     each job has every core in its turn, and pinning keeps its ranks from
//     migrating at each switch. Other jobs are left to the kernel:
//     independent jobs, each pinning from the first core, would pile onto
//     the same cores while others stay idle.
//   - on: always, round robin over the cores when there are more ranks.
//   - off: never.
//
// A mask that cannot be read or set leaves the ranks unpinned.

// pinner binds the spawning thread to each rank's core in turn.
type pinner struct {
	cpus []int // the cores the launcher may use, in order
	next int
}

// newPinner returns the pinner for a job's ranks on this host (hostRanks
// of them, in a gang or not), or nil when they are not pinned. Call it on
// the locked spawning thread.
func newPinner(mode string, ganged bool, hostRanks int) *pinner {
	if mode == "off" || mode == "auto" && !ganged {
		return nil
	}
	cpus, err := unix.Affinity()
	if err != nil || len(cpus) == 0 || mode == "auto" && hostRanks > len(cpus) {
		return nil
	}
	return &pinner{cpus: cpus}
}

// pin binds the spawning thread to the next rank's core.
func (p *pinner) pin() {
	if p == nil {
		return
	}
	unix.SetAffinitySet(p.cpus[p.next%len(p.cpus) : p.next%len(p.cpus)+1])
	p.next++
}

// restore gives the spawning thread its own mask back.
func (p *pinner) restore() {
	if p != nil {
		unix.SetAffinitySet(p.cpus)
	}
}
