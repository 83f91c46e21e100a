package mpiapi

// Progress for a layer above (the C ABI's one-sided communication, package
// cabi): a target of passive-target operations must serve them while it
// sits in any blocking call, so every blocking wait of this package runs the
// layer's progress function each time it looks at its own condition (on
// each spin and after each wake-up of the rank's futex word, which the agent
// bumps whenever it publishes a completion, such as that of the layer's own
// receive).

var (
	progressFn     func()
	inProgressCall bool
)

// SetProgress makes f run inside every blocking wait of this package (and
// of Block) each time the wait looks at its condition; nil removes it. f
// must not block: it may post non-blocking operations and Poll requests. It
// is never entered again from inside itself.
func SetProgress(f func()) { progressFn = f }

func (p *process) progress() {
	if progressFn == nil || inProgressCall {
		return
	}
	inProgressCall = true
	progressFn()
	inProgressCall = false
}

// Block waits until ready() is true as a blocking MPI call named call does
// (spinning, then sleeping on the rank's futex word, serving pull orders and
// the progress function meanwhile). It is for a layer above whose blocking
// calls wait for conditions of its own.
func Block(call string, ready func() bool) error {
	p, err := current(call)
	if err != nil {
		return err
	}
	p.block(call, ready)
	return nil
}

// Poll reports whether r has completed, consuming its completion record,
// without the bookkeeping of the Test family: no MMDS record, no settling
// in deterministic mode, nothing logged for replay. It is for requests a
// layer above posts for itself. With retire, a completed r is retired (a
// later use of the handle is stale) and its error returned. A nil r is
// complete.
func Poll(r *Request, retire bool) (bool, Status, error) {
	if r == nil {
		return true, emptyStatus, nil
	}
	p := self
	if p == nil || !p.poll(r) {
		return false, Status{}, nil
	}
	if retire && r.retiredBy == "" {
		p.retire(r, r.call)
	}
	return true, r.status, r.err
}
