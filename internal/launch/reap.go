package launch

import (
	"fmt"
	"slices"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// endOrphansRounds bounds endOrphans: each round ends one generation of
// descendants (killing a process re-parents its children to us).
const endOrphansRounds = 1000

// endOrphans kills (SIGKILL) and reaps every child of this process except
// those in skip (the caller's own, listed before the job started) and,
// generation by generation, their descendants, and returns how many live
// processes it killed. Call it only when every rank has been reaped: every
// child left is then a process a rank started (re-parented here because this
// process is a child subreaper), and no goroutine waits for it.
func endOrphans(skip map[int]bool) (int, error) {
	killed := 0
	for round := 0; round < endOrphansRounds; round++ {
		kids, err := unix.Children()
		if err != nil {
			return killed, err
		}
		kids = slices.DeleteFunc(kids, func(k unix.Child) bool { return skip[k.PID] })
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

// reapZombies reaps the children that have exited, except those in skip (the
// ranks, whose exec.Cmd waits for them, and the caller's own). A pid in skip
// may have been reused by an orphan after its rank was reaped: that orphan is
// then left to endOrphans, as is one the cheap listing missed.
func reapZombies(skip map[int]bool) {
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
		if !skip[pid] {
			unix.ReapIfExited(pid)
		}
	}
}

func pidSet(cs []unix.Child) map[int]bool {
	m := make(map[int]bool, len(cs))
	for _, c := range cs {
		m[c.PID] = true
	}
	return m
}
