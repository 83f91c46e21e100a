package mpiapi

import "github.com/bcsmpi/bcsmpi/mds"

// GetStatus reports whether r has completed without retiring it
// (MPI_Request_get_status): the request stays live, and a later Wait, Test
// or Free completes and releases it as usual. A nil r reports true and an
// empty status. The MMDS records it as a Test.
func GetStatus(r *Request) (bool, Status, error) {
	const call = "MPI_Request_get_status"
	p, err := current(call)
	if err != nil {
		return false, Status{}, err
	}
	if r == nil {
		return true, emptyStatus, nil
	}
	if err := p.checkLive(call, r); err != nil {
		return false, Status{}, err
	}
	t0 := p.mmds.begin(false)
	p.settle(call, func() bool { return p.allDone([]*Request{r}) })
	done := p.poll(r)
	p.mmds.end(mds.Test, t0, 0, false)
	if !done {
		return false, Status{}, nil
	}
	return true, r.status, r.err
}
