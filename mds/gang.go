package mds

// Gang is a job's accounting under a gang scheduler (bcsd start, issue 17):
// the "gang" object of its manifest.json, present only for a job that ran
// in a gang. Slices are the job's own (its strobe.Master's numbering);
// switches are the gang's decisions and the agents' costs. Every field is
// optional to a reader: a manifest written before a field existed lacks it.
type Gang struct {
	MPL     int    `json:"mpl,omitempty"`     // the gang's multiprogramming level (gang_mpl of the bcsd)
	Quantum uint64 `json:"quantum,omitempty"` // slices per turn (gang_quantum of the bcsd)
	// SlicesAlive: slices in which the job was strobed (in the gang, not
	// held); SlicesRun: those in which its ranks were allowed to run;
	// SlicesGiven: slices of its own turns that another job ran because
	// every rank of this one was blocked with nothing to move
	// (work-conserving). SlicesRun ≤ SlicesAlive.
	SlicesAlive uint64 `json:"slices_alive"`
	SlicesRun   uint64 `json:"slices_run"`
	SlicesGiven uint64 `json:"slices_given"`
	// SwitchesIn: slices run after a slice stopped (its ranks continued);
	// SwitchesOut: slices stopped after a slice run, the first slice
	// counting as after a run (its ranks start running). Counted from the
	// gang's decisions, so they are the RUN column's changes on every node.
	SwitchesIn  uint64 `json:"switches_in"`
	SwitchesOut uint64 `json:"switches_out"`
	// NodeSwitches is how many times a node's agent stopped or continued
	// its ranks (the EMDS's non-zero SWITCHNS cells, over all nodes and all
	// slices, window or not); SwitchNS their total time, SwitchMeanNS
	// SwitchNS / NodeSwitches (0 when none).
	NodeSwitches uint64 `json:"node_switches"`
	SwitchNS     int64  `json:"switch_ns"`
	SwitchMeanNS int64  `json:"switch_mean_ns"`
	// Note says what the accounting lacks, if anything (a job across
	// hosts: only the slices are known).
	Note string `json:"note,omitempty"`
}
