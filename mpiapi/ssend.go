package mpiapi

// Synchronous sends (MPI_Ssend, MPI_Issend). A standard send of at most
// inline_max bytes is buffered by the agent and completes when it is
// exchanged (a blocking one returns at its post: eager.go); a synchronous send is never inline, so it completes only in
// the slice its data moves, which is never before a matching receive was
// posted. Two synchronous sends head to head therefore wait for each other,
// and the deadlock detector reports them. The MMDS counts them as MPI_Send
// and MPI_Isend.

// Issend starts a synchronous send of buf to dest.
func Issend[T Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	return IssendBytes(c, bytesView(buf), typeOf[T](), dest, tag)
}

// Ssend sends buf to dest and returns once a matching receive has taken it.
func Ssend[T Elem](c *Comm, buf []T, dest, tag int) error {
	return SsendBytes(c, bytesView(buf), typeOf[T](), dest, tag)
}
