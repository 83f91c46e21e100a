//go:generate go run ./genstubs

package main

/*
#include "shim.h"
*/
import "C"

// Handle kinds of the objects this file family adds (kinds 1-5 are in
// handles.go, errors.go, group.go, ops.go; 8 is datatype.go's).
const (
	kindInfo = 9
	kindMsg  = 10
)

// bcs_toint is MPI_X_toint: a predefined handle keeps its value, one this
// library made becomes kind<<24 | index (its generation is dropped and
// restored by bcs_fromint from the slot, so a stale int names whatever the
// slot holds now, as a stale handle would not).
//
//export bcs_toint
func bcs_toint(h C.uintptr_t) C.int {
	if h < 0x1000 {
		return C.int(h)
	}
	kind, i, _ := splitHandle(uintptr(h))
	return C.int(kind<<24 | i)
}

//export bcs_fromint
func bcs_fromint(v C.int) C.uintptr_t {
	if v < 0x1000 {
		return C.uintptr_t(v)
	}
	kind, i := int(v)>>24, int(v)&genMask
	var gen uint32
	switch {
	case kind == kindComm && i < len(comms):
		gen = comms[i].gen
	case kind == kindReq && i < len(reqs):
		gen = reqs[i].gen
	case kind == kindGroup && i < len(groups):
		gen = groups[i].gen
	case kind == kindInfo && i < len(infos):
		gen = infos[i].gen
	case kind == kindMsg && i < len(msgs):
		gen = msgs[i].gen
	case kind == kindType && i < len(typeSlots):
		gen = typeSlots[i].gen
	case kind == kindSession && i < len(sessions):
		gen = sessions[i].gen
	case kind == kindFile && i < len(files): // file.go
		gen = files[i].gen
	}
	return C.uintptr_t(userHandle(kind, i, gen))
}
