package launch

import (
	"fmt"
	"slices"
	"sync"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// endOrphansRounds bounds endJobOrphans: each round ends one generation of
// descendants (killing a process re-parents its children to us).
const endOrphansRounds = 1000

func pidSet(cs []unix.Child) map[int]bool {
	m := make(map[int]bool, len(cs))
	for _, c := range cs {
		m[c.PID] = true
	}
	return m
}

// The process-wide registry of live jobs' processes. Run may be called
// concurrently in one process (jobs of one gang, in bcsd): each job must
// reap and end only its own ranks' orphans, never another job's ranks or
// orphans. A process is a job's when
//
//   - it is not one of the caller's children listed before the job started,
//     nor a rank of any live job (exec.Cmd waits for those), and
//   - its process group is one of the job's (gang mode: the ranks of each
//     node form a group, and a rank's children stay in it unless they
//     leave it themselves), or it is in no live job's group and no other
//     job is live (the single-job path, as before the registry: every
//     other child is the job's).
//
// An orphan that left its rank's group while another job runs is left for
// the last job to end (or, in bcsd, for the next job that runs alone).
var registry struct {
	sync.Mutex
	jobs map[*jobProcs]struct{}
}

// jobProcs is one job's entry in the registry.
type jobProcs struct {
	others map[int]bool // the caller's children before the job started
	ranks  map[int]bool // the job's rank processes (never shrinks: a reaped rank's pid may be reused by its orphan, left to endJobOrphans)
	pgids  map[int]bool // the job's process groups (gang mode)
}

// register enters a job; others are the caller's children before it started.
func register(others []unix.Child) *jobProcs {
	j := &jobProcs{others: pidSet(others), ranks: map[int]bool{}, pgids: map[int]bool{}}
	registry.Lock()
	defer registry.Unlock()
	if registry.jobs == nil {
		registry.jobs = map[*jobProcs]struct{}{}
	}
	registry.jobs[j] = struct{}{}
	return j
}

// unregister removes the job (after endJobOrphans).
func (j *jobProcs) unregister() {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.jobs, j)
}

// addRank records a rank process and, in gang mode, its group (0: none).
func (j *jobProcs) addRank(pid, pgid int) {
	registry.Lock()
	defer registry.Unlock()
	j.ranks[pid] = true
	if pgid > 0 {
		j.pgids[pgid] = true
	}
}

// mine says whether child pid is the job's to reap or end (see registry).
func (j *jobProcs) mine(pid int) bool {
	registry.Lock()
	defer registry.Unlock()
	if j.others[pid] {
		return false
	}
	for x := range registry.jobs {
		if x.ranks[pid] {
			return false
		}
	}
	pg, err := unix.ProcessGroup(pid)
	if err != nil { // gone (reaped meanwhile) or not ours to ask
		return false
	}
	if j.pgids[pg] {
		return true
	}
	for x := range registry.jobs {
		if x != j && x.pgids[pg] {
			return false
		}
	}
	_, live := registry.jobs[j]
	return live && len(registry.jobs) == 1
}

// endJobOrphans kills (SIGKILL) and reaps, generation by generation (killing
// a process re-parents its children to us, a child subreaper), the children
// that are j's (mine), and returns how many live processes it killed. Call it
// when every rank of j has been reaped: every child of j's left is then a
// process a rank started, and no goroutine waits for it.
func endJobOrphans(j *jobProcs) (int, error) {
	killed := 0
	for round := 0; round < endOrphansRounds; round++ {
		kids, err := unix.Children()
		if err != nil {
			return killed, err
		}
		kids = slices.DeleteFunc(kids, func(k unix.Child) bool { return !j.mine(k.PID) })
		if len(kids) == 0 {
			return killed, nil
		}
		for _, k := range kids {
			if !k.Zombie {
				unix.KillChild(k.PID)
				killed++
			}
		}
		for _, k := range kids {
			if err := unix.Reap(k.PID); err != nil {
				return killed, err
			}
		}
	}
	return killed, fmt.Errorf("processes still being started after %d rounds of killing", endOrphansRounds)
}

// reapJobZombies reaps j's children that have exited (mine: not the ranks,
// which their exec.Cmd waits for, nor the caller's own). An orphan the
// cheap listing missed is left to endJobOrphans.
func reapJobZombies(j *jobProcs) {
	pids, err := unix.ChildPIDs()
	if err != nil {
		kids, err := unix.Children()
		if err != nil {
			return
		}
		for _, k := range kids {
			pids = append(pids, k.PID)
		}
	}
	for _, pid := range pids {
		if j.mine(pid) {
			unix.ReapIfExited(pid)
		}
	}
}
