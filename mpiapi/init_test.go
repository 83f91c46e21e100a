package mpiapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
)

// Init reads the launcher's environment through jobenv: a missing or bad
// variable is an MPI_ERR_OTHER naming the variable and its value, before
// anything is mapped.
func TestInitEnvironment(t *testing.T) {
	defer SetErrhandler(errhandler)
	SetErrhandler(ErrorsReturn)
	good := map[string]string{
		jobenv.VarShmFD: "999", jobenv.VarRank: "0", jobenv.VarSize: "2", jobenv.VarLocalRank: "0",
		jobenv.VarNode: "0", jobenv.VarJob: "test", jobenv.VarTimeslice: "500000", jobenv.VarSpin: "20000",
	}
	for _, c := range []struct {
		name, value, want string
	}{
		{jobenv.VarShmFD, "", "BCS_SHM_FD is not set: start the program with bcsrun"},
		{jobenv.VarRank, "2", `BCS_RANK="2", want 0 .. 1 (BCS_SIZE=2)`},
		// Before jobenv, a bad slice length was ignored silently.
		{jobenv.VarTimeslice, "500us", `BCS_TIMESLICE_NS="500us", want nanoseconds > 0`},
		// All good: the descriptor (not open) is what Init checks next.
		{jobenv.VarMDSJobDir, "", "BCS_SHM_FD=999: rank 0's shared memory is not open in this process"},
	} {
		for k, v := range good {
			t.Setenv(k, v)
		}
		t.Setenv(c.name, c.value)
		err := Init()
		if err == nil {
			Finalize()
			t.Fatalf("%s=%q: Init succeeded", c.name, c.value)
		}
		var e *Error
		if !errors.As(err, &e) || e.Class != ErrOther || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: Init: %v, want MPI_ERR_OTHER containing %q", c.name, c.value, err, c.want)
		}
	}
}
