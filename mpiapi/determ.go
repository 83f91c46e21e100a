package mpiapi

// Deterministic mode (bcsrun --deterministic; the region header says so):
// what a Test-family call returns must not depend on when completions were
// published. Such a call therefore settles first: it waits, shown to the
// runtime as blocked in the call, until every request it was given has
// completed, or until the runtime releases it (proto.KindRelease: the job
// is quiescent, no rank can progress, and no held wildcard can be answered;
// see scheduler/doc.go). Either point is a function of the program alone:
// the requests complete then are those that complete without this rank
// going on. Then the call answers from what has completed, as always:
// MPI_Test's flag, the lowest completed index for MPI_Testany and
// MPI_Waitany, the completed set for MPI_Testsome and MPI_Waitsome.
// MPI_Waitany and MPI_Waitsome first wait, as usual, for one completion,
// then settle (shown as MPI_Testany and MPI_Testsome while they do).
//
// The cost: a Test on a request that another rank completes only after
// this one goes on returns false only at a quiescent point, two or more
// slices after the job stopped moving. The calls stay deadlock-free: a
// quiescent point always releases them.

// settle waits, as call, until done() or a release (deterministic mode only).
func (p *process) settle(call string, done func() bool) {
	if !p.region.G.Deterministic {
		return
	}
	rel := p.blk.Release()
	p.block(call, func() bool { return done() || p.blk.Release() != rel })
}

// allDone polls every request of rs and reports whether each has completed
// (nil entries, and requests the runtime does not hold, count as complete).
func (p *process) allDone(rs []*Request) bool {
	all := true
	for _, r := range rs {
		if r != nil && (r.active || r.chain != nil) {
			all = p.poll(r) && all
		}
	}
	return all
}
