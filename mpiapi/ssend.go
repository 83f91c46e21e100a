package mpiapi

import (
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Synchronous sends (MPI_Ssend, MPI_Issend). A standard send of at most
// inline_max bytes is buffered by the agent and completes when it is
// exchanged; a synchronous send is never inline, so it completes only in
// the slice its data moves, which is never before a matching receive was
// posted. Two synchronous sends head to head therefore wait for each other,
// and the deadlock detector reports them. The MMDS counts them as MPI_Send
// and MPI_Isend.

// Issend starts a synchronous send of buf to dest.
func Issend[T Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	p, err := current("MPI_Issend")
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(false)
	r, err := startMode(p, "MPI_Issend", proto.KindSend, c, buf, dest, tag, true)
	p.mmds.end(mds.Issend, t0, nbytes(buf), false)
	return r, err
}

// Ssend sends buf to dest and returns once a matching receive has taken it.
func Ssend[T Elem](c *Comm, buf []T, dest, tag int) error {
	p, err := current("MPI_Ssend")
	if err != nil {
		return err
	}
	t0 := p.mmds.begin(true)
	r, err := startMode(p, "MPI_Ssend", proto.KindSend, c, buf, dest, tag, true)
	if err == nil {
		_, err = p.wait(r, "MPI_Ssend")
	}
	p.mmds.end(mds.Ssend, t0, nbytes(buf), true)
	return err
}
