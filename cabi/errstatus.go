package main

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// MPI_ERR_IN_STATUS: when a request completed by MPI_Waitall, MPI_Testall,
// MPI_Waitsome or MPI_Testsome failed, the call sets each returned status's
// MPI_ERROR (MPI_SUCCESS or the request's class) and fails with
// MPI_ERR_IN_STATUS through the error handler, once, naming the first
// failure.

const errInStatus = 19

// reqError is the class and text of the error request slot i completed
// with (0 and "" if none).
func reqError(i int) (int, string) {
	e := &reqs[i]
	if e.loc != nil {
		e.loc.gcomplete() // grequest.go
		if e.loc.class == 0 {
			return 0, ""
		}
		return e.loc.class, fmt.Sprintf("rank %d: %s", worldRank, e.loc.msg)
	}
	err := e.r.Err()
	if err == nil {
		err = e.alsoErr // MPI_Isendrecv's send
	}
	if err == nil {
		return 0, ""
	}
	var me *mpiapi.Error
	if errors.As(err, &me) {
		return abiClass(me.Class), me.Error()
	}
	return errIntern, err.Error()
}

// finishAll completes every slot of a Waitall or Testall that found them
// all complete; err is what mpiapi's array call returned.
func finishAll(call string, ci int, handles []C.uintptr_t, slots []int, sts *C.MPI_Status, err error) C.int {
	failed, first, fci := 0, "", ci
	for k, i := range slots {
		st := statusAt(sts, k)
		if i < 0 {
			emptyStatus(st)
			continue
		}
		class, text := reqError(i)
		if class != 0 {
			if failed == 0 {
				first, fci = text, reqs[i].comm
			}
			failed++
		}
		complete(i, &handles[k], st, class)
	}
	if failed > 0 {
		return inStatus(fci, call, failed, len(slots), first)
	}
	return failErr(ci, err) // an error of the call itself, none of a request
}

func inStatus(ci int, call string, failed, n int, first string) C.int {
	return raise(ci, errInStatus, fmt.Sprintf("rank %d: %s: MPI_ERR_IN_STATUS: %d of %d requests failed (each status's MPI_ERROR says which); the first: %s",
		worldRank, call, failed, n, first))
}

// someDone completes, into indices and sts from position count on, every
// request of slots that has completed (slot skip already has: Waitsome's
// Waitany returned it), and reports how many it returned and failed.
func someDone(call string, handles []C.uintptr_t, slots []int, idx []C.int, sts *C.MPI_Status, skip int) (count, failed, fci int, first string) {
	for k, i := range slots {
		if i < 0 {
			continue
		}
		if k != skip {
			if e := &reqs[i]; e.loc != nil {
				if !e.loc.done {
					continue
				}
			} else if !e.sendDone(false) {
				continue
			} else if done, _, _ := mpiapi.Test(e.r); !done {
				continue
			}
		}
		class, text := reqError(i)
		if class != 0 {
			if failed == 0 {
				first, fci = text, reqs[i].comm
			}
			failed++
		}
		idx[count] = C.int(k)
		complete(i, &handles[k], statusAt(sts, count), class)
		count++
	}
	return count, failed, fci, first
}
