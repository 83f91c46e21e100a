package mpiapi

import (
	"fmt"
	"os"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
)

// Class is an MPI error class (MPI_ERR_*). A Class is itself an error, so
// that a caller tests a call's failure by class with errors.Is:
//
//	if errors.Is(err, mpiapi.ErrTruncate) { ... }
type Class int

const (
	ErrOther Class = iota + 1
	ErrBuffer
	ErrCount
	ErrTag
	ErrComm
	ErrRank
	ErrRequest
	ErrTruncate
	ErrIntern
	ErrArg
	ErrNotInitialized
	ErrOp
	ErrRoot
	ErrGroup
	ErrType // a send and its receive have different type signatures (sig.go)
)

var classNames = map[Class]string{
	ErrOther: "MPI_ERR_OTHER", ErrBuffer: "MPI_ERR_BUFFER", ErrCount: "MPI_ERR_COUNT", ErrTag: "MPI_ERR_TAG",
	ErrComm: "MPI_ERR_COMM", ErrRank: "MPI_ERR_RANK", ErrRequest: "MPI_ERR_REQUEST", ErrTruncate: "MPI_ERR_TRUNCATE",
	ErrIntern: "MPI_ERR_INTERN", ErrArg: "MPI_ERR_ARG", ErrNotInitialized: "MPI_ERR_NOT_INITIALIZED",
	ErrOp: "MPI_ERR_OP", ErrRoot: "MPI_ERR_ROOT", ErrGroup: "MPI_ERR_GROUP", ErrType: "MPI_ERR_TYPE",
}

// Error makes a Class an error that every *Error of that class matches. It
// is the class's name, as String (fmt prints a Class the same either way).
func (c Class) Error() string { return c.String() }

func (c Class) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return fmt.Sprintf("MPI_ERR(%d)", int(c))
}

// Error is returned by every call that fails. It matches (errors.Is) its
// Class, and another *Error of the same class (errors.Is(err,
// &Error{Class: ErrTruncate}), the older spelling); errors.As finds it under
// any wrapping. Err, when set, is the cause (Unwrap returns it).
type Error struct {
	Class Class
	Rank  int    // the calling rank (-1 before Init)
	Call  string // e.g. "MPI_Send"
	Msg   string
	Err   error // the underlying cause, if any
}

func (e *Error) Error() string {
	return fmt.Sprintf("rank %d: %s: %s: %s", e.Rank, e.Call, e.Class, e.Msg)
}

// Is matches the error's Class and any *Error of the same class.
func (e *Error) Is(t error) bool {
	switch o := t.(type) {
	case Class:
		return o == e.Class
	case *Error:
		return o.Class == e.Class
	}
	return false
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errhandler says what happens when a call fails, as MPI's error handlers do.
type Errhandler int

const (
	// ErrorsAreFatal (the default, MPI_ERRORS_ARE_FATAL) prints the error —
	// rank, call, argument and value — and aborts the whole job.
	ErrorsAreFatal Errhandler = iota
	// ErrorsReturn (MPI_ERRORS_RETURN) hands the error back to the caller.
	ErrorsReturn
)

var errhandler = ErrorsAreFatal

// SetErrhandler chooses the error handler for every communicator (the
// environment variable BCS_ERRORS=return sets ErrorsReturn before Init).
func SetErrhandler(h Errhandler) { errhandler = h }

func init() {
	if os.Getenv(jobenv.VarErrors) == "return" {
		errhandler = ErrorsReturn
	}
}

// newError builds the error of a failed call; it has no effect.
func (p *process) newError(class Class, call, format string, a ...any) *Error {
	r := -1
	if p != nil {
		r = int(p.rank)
	}
	return &Error{Class: class, Rank: r, Call: call, Msg: fmt.Sprintf(format, a...)}
}

// handle applies the error handler to err: under ErrorsAreFatal it prints
// err, dumps the MMDS and ends the process (the launcher then aborts the
// job); under ErrorsReturn it returns err.
func (p *process) handle(err *Error) error {
	if errhandler == ErrorsAreFatal {
		fmt.Fprintf(os.Stderr, "bcsmpi: %v (MPI_ERRORS_ARE_FATAL: aborting the job)\n", err)
		if p != nil {
			p.mmds.dump()
		}
		os.Exit(1)
	}
	return err
}

// errf is the usual path of a failing call: build its error and apply the
// handler.
func (p *process) errf(class Class, call, format string, a ...any) error {
	return p.handle(p.newError(class, call, format, a...))
}
