// Package unix is the only importer of golang.org/x/sys/unix in bcsmpi: shared
// memory files (anonymous memfd regions) and mappings, futexes,
// process_vm_readv/writev, the monotonic clock, absolute sleeps, real-time
// scheduling, the launcher's hold on its children (subreaper, listing,
// killing and reaping them), and for the per-user daemon descriptors passed
// over Unix sockets (SCM_RIGHTS), peer credentials (SO_PEERCRED) and file
// locks (flock). Everything here is a thin wrapper, allocation-free
// on the hot paths; callers own the fds, mappings and children they get.
//
// bcsmpi runs on Linux. On other systems the package builds (unix_other.go)
// so that tools and editors can load the packages above it, and every call
// that needs the kernel fails with an error matching ErrNotSupported (or, where
// it returns none, does nothing or the least harmful thing, as its comment in
// unix_other.go says). A test checks that the stub declares exactly the
// Linux functions with the same signatures, and the repository's layering
// test (layers_test.go at the root) that no other package imports x/sys.
package unix
