package launch

import (
	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// NewGang starts a gang master for jobs that will run with cfg's timeslice
// (gang_mpl jobs at most, each running gang_quantum slices in turn; the
// strobe thread's spin and SCHED_FIFO as for a job's own master). Give it
// to each job as Job.Gang and Run them concurrently; Close it when no job
// is left. In a gang:
//
//   - Run joins the gang instead of starting a master; a job beyond gang_mpl,
//     or with another timeslice, is refused before any rank starts.
//   - The ranks of each node of a job form a process group; the job's
//     agents stop it (SIGSTOP, or the node's cgroup freezer: gang_stop) at
//     the strobe of a slice the job does not run in and continue it
//     (SIGCONT, or a thaw) when its turn comes, every node of the job at the
//     same strobe. Its data keeps moving meanwhile.
//   - A job's failure (a rank's exit, a node error, a deadlock) ends that
//     job alone; Run reaps and ends only its own processes (reap.go).
//   - Result.SlicesRun and SlicesAlive say how many slices the job ran in
//     and was strobed in, SlicesGiven how many of its turns' slices it lent
//     to another job (work-conserving), SwitchesIn and SwitchesOut how
//     often it was continued and stopped; EMDS's RUN and SWITCHNS columns
//     say which slices it ran in and what each switch cost on each node.
//     With the MDS on, the manifest keeps them (its "gang", mds.Gang, with
//     every node's switches and their cost summed over the whole run, and
//     Job.Submitted and Admitted), for bcsreport's response time, queue
//     wait, slowdown and switch cost.
func NewGang(cfg configs.Config) (*nicthread.Gang, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	SweepFreezers() // what a SIGKILLed launcher left frozen (freezer.go)
	return nicthread.NewGang(nicthread.GangConfig{Slice: cfg.Timeslice, Spin: cfg.StrobeSpin, FIFO: cfg.FIFO,
		Matrix: strobe.GangConfig{MPL: cfg.GangMPL, Quantum: cfg.GangQuantum}})
}
