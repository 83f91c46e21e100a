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
// others (the caller's own, listed before the job started) and,
// generation by generation, their descendants, and returns how many live
// processes it killed. Call it only when every rank has been reaped: every
// child left is then a process a rank started (re-parented here because this
// process is a child subreaper), and no goroutine waits for it.
func endOrphans(others []unix.Child) (int, error) {
	skip := map[int]bool{}
	for _, o := range others {
		skip[o.PID] = true
	}
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
