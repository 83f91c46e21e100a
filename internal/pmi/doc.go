// Package pmi speaks the Process Management Interface, versions 2 and 1, as
// Slurm's mpi/pmi2 plugin serves it: the way a process started by
// `srun --mpi=pmi2` learns its rank and the job's size, publishes a few
// key/value pairs (bcsd's endpoint), waits for every other task of the step
// (a fence) and reads theirs. It is a client (Client, Open) and a server
// (Server) for the same wire formats; the server stands in for slurmstepd in
// tests and serves tasks that a launcher started itself.
//
// Layer L0½ (docs/design.md §4): standard library only, no cgo, no PMIx.
//
// # Glossary
//
//	task     one process of the step (for bcsmpi: one bcsd per host)
//	KVS      the step's key/value space; a put becomes visible to the other
//	         tasks only after a fence that every task entered
//	fence    kvs-fence (PMI-2), barrier_in/barrier_out (PMI-1)
//	jobid    the KVS name, "<jobid>.<stepid>" under Slurm
//
// # Wire formats
//
// Both versions open with the same PMI-1 line, written with one write():
//
//	cmd=init pmi_version=2 pmi_subversion=0\n
//	cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n
//
// PMI-1 then goes on with lines "cmd=NAME key=value ...\n". PMI-2 frames
// every message, both ways, as 6 ASCII bytes of decimal length, left-justified
// and space-padded ("%-6d"), followed by that many bytes of body
// "cmd=NAME;key=value;...;", where a ';' inside a value is written ";;".
//
// Slurm reads each request with a single read() (PMI-1) or exactly the
// header and then the body (PMI-2), so the client writes every request with
// one write and never pipelines: one request, one response. The version is
// fixed by the first task's init for the whole step; the server refuses a
// task that asks for the other one.
//
// # Limits
//
// Keys are at most 64 bytes and values at most 1024 (PMI2_MAX_KEYLEN,
// PMI2_MAX_VALLEN); a longer one is an error naming it, before anything is
// written. Values must not contain '\n' (nor, under PMI-1, a space or '=');
// binary data goes through EncodeValue (unpadded base64url). A message body
// is at most 64 KiB; a peer's header claiming more is an error, never an
// allocation of what it claims.
//
// # Choosing a launcher
//
// Open reads the environment that srun (PMI_FD, PMI_RANK, PMI_SIZE,
// PMI_JOBID) or a Hydra-style launcher (PMI_PORT, PMI_ID) sets. Under a
// launcher that offers only PMIx (PMIX_RANK, PMIX_VERSION, PRTE_LAUNCHED)
// it returns an error saying to use `srun --mpi=pmi2` rather than hanging,
// and without any of them ErrNoPMI, so a caller can fall back to its own
// rendezvous.
//
// # Concurrency
//
// A Client is one conversation and is not safe for concurrent use. A Server
// is safe for concurrent use: each task's connection is served by its own
// Serve call.
//
// The server has no authentication: PMI has none. Serve connections whose
// other end the launcher made itself (a socketpair passed to the child, as
// slurmstepd does) or that it authenticated.
package pmi
