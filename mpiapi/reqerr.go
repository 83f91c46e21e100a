package mpiapi

// Err is the error r completed with: nil while it runs and after a
// successful completion. The array calls return only their first error;
// Err gives each request's own (a C layer's MPI_ERR_IN_STATUS).
func (r *Request) Err() error {
	if r == nil || !r.done {
		return nil
	}
	return r.err
}
