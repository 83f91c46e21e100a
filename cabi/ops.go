package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// User operations (MPI_Op_create) are C functions. mpiapi folds reductions
// with user operations in the rank process, in rank order; its fold calls a
// byte-level function (mpiapi.NewOpBytes; types.go's userOp), which calls
// the C function through the shim (Go cannot call a C function pointer). One mpiapi operation is made per
// (operation, datatype) on first use, because the C function is passed the
// datatype handle.

const kindOp = 5

type userOpEntry struct {
	fn      unsafe.Pointer
	ident   string // what fn is on every rank (fnIdentity), for the operation's name
	commute bool
	byType  map[uintptr]*mpiapi.Op
	live    bool
}

var userOps []userOpEntry

// fnIdentity is what a user function is on every rank of the program: its
// symbol, or its object file and offset (bcs_fn_identity). It names the
// mpiapi operation, and the name is what MSM compares across ranks (a hash
// of name, element type and commutativity, mpiapi.NewOp), so two ranks that
// made the operation from the same function agree whatever handles they
// hold; the handle's index, used before, differed between ranks that had
// made other operations first (a correct program was aborted as a
// collective mismatch). Two functions with the same code at different
// addresses are different operations; ranks running different programs
// (MPMD) with a user operation are reported as disagreeing.
//
// A function in no loaded file (code made at run time, as a JIT's or
// libffi's trampolines are) has a different address on every rank and
// nothing else that names it alike everywhere (the ranks may have made
// other operations first, so not the creation order either): all such
// functions share one name, so two of them are not told apart by the
// mismatch check, and one of them is still told from a compiled function.
func fnIdentity(fn unsafe.Pointer) string {
	var buf [512]C.char
	if C.bcs_fn_identity(fn, &buf[0], C.int(len(buf))) == 0 {
		return "a function made at run time"
	}
	return C.GoString(&buf[0])
}

// builtinOps are the predefined operations on predefined types without a
// Go element type (shim_ops.c), made on first use per (operation, type) and
// freed at MPI_Finalize.
var builtinOps = map[[2]uintptr]*mpiapi.Op{}

// retiredOps are the runtime's operations of user operations MPI_Op_free
// has freed: kept for the requests that still use them, freed at Finalize.
var retiredOps []*mpiapi.Op

// operation resolves an operation handle for elements of t.
func operation(ci int, call string, h uintptr, t dtype) (*mpiapi.Op, C.int) {
	return resolveOp(ci, call, h, t, false)
}

// resolveOp is operation; started says a persistent collective is being
// started, which may use a user operation freed since its MPI_X_init (the
// standard: a freed operation stays usable by what refers to it). Its
// runtime operation was made at the init, for this datatype.
func resolveOp(ci int, call string, h uintptr, t dtype, started bool) (*mpiapi.Op, C.int) {
	if o, ok := ops[h]; ok {
		loc := o == mpiapi.Minloc || o == mpiapi.Maxloc
		if why := opCategory(h, t); why != "" {
			return nil, fail(ci, call, errOp, "%s is not defined on %s: %s", o, t.name, why)
		}
		if p := t.info.pair; p != nil && !loc {
			return nil, fail(ci, call, errOp, "%s is not defined on %s, whose elements are %s value-index pairs; use MPI_MINLOC or MPI_MAXLOC", o, t.name, p.name)
		}
		if !t.pairs && t.info.predefined() && (t.info.kind == C.BCS_NONE || t.info.pair != nil) {
			// Long double, complex and the pair types without a runtime
			// element type: the runtime moves their bytes and a C
			// function reduces them, as it would a user operation's.
			if b := builtinOps[[2]uintptr{h, t.h}]; b != nil {
				return b, 0
			}
			if fn := C.bcs_builtin_op(C.uintptr_t(t.h), C.uintptr_t(h)); fn != nil {
				b := userOp(fmt.Sprintf("%s on %s", o, t.name), fn, t, true)
				builtinOps[[2]uintptr{h, t.h}] = b
				return b, 0
			}
		}
		if pair := t.kind >= C.BCS_F32I; loc && !pair {
			if p := t.info.pair; p != nil {
				return nil, fail(ci, call, errOp, "%s on %s, a derived type of %s, is not supported by bcsmpi (on %s itself it is)", o, t.name, p.name, p.name)
			}
			return nil, fail(ci, call, errOp, "%s needs a value-index pair type (MPI_DOUBLE_INT, MPI_2INT, ...), not %s", o, t.name)
		}
		if !t.pairs && t.info.kind == C.BCS_NONE {
			return nil, fail(ci, call, errOp, "%s is not defined on %s: bcsmpi's predefined operations need a datatype whose basic elements are all of one integer, floating-point or pair type", o, t.name)
		}
		return o, 0
	}
	if name, ok := oneSidedOps[h]; ok {
		return nil, fail(ci, call, errOp, "op = %s is for one-sided accumulates only (MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op); a reduction needs MPI_SUM, ..., MPI_MAXLOC or one from MPI_Op_create", name)
	}
	kind, i, _ := splitHandle(h)
	if kind != kindOp || i >= len(userOps) {
		return nil, fail(ci, call, errOp, "op = %s is not an operation (MPI_SUM, ..., MPI_MAXLOC, or one from MPI_Op_create)", describe(h))
	}
	e := &userOps[i]
	if !e.live {
		if o := e.byType[t.h]; started && e.fn != nil && o != nil {
			return o, 0
		}
		return nil, fail(ci, call, errOp, "op = %s was freed with MPI_Op_free", describe(h))
	}
	if o := e.byType[t.h]; o != nil {
		return o, 0
	}
	o := userOp(fmt.Sprintf("user operation %s on %s", e.ident, t.name), e.fn, t, e.commute)
	e.byType[t.h] = o
	return o, 0
}

//export bcs_op_create
func bcs_op_create(fn unsafe.Pointer, commute C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Op_create"
	if fn == nil {
		return fail(0, call, errArg, "user_fn = NULL, want a function")
	}
	userOps = append(userOps, userOpEntry{fn: fn, ident: fnIdentity(fn), commute: commute != 0, byType: map[uintptr]*mpiapi.Op{}, live: true})
	*out = C.uintptr_t(userHandle(kindOp, len(userOps)-1, 0))
	return 0
}

//export bcs_op_free
func bcs_op_free(h *C.uintptr_t) C.int {
	const call = "MPI_Op_free"
	kind, i, _ := splitHandle(uintptr(*h))
	if kind != kindOp || i >= len(userOps) || !userOps[i].live {
		return fail(0, call, errOp, "op = %s is not a live user operation (predefined operations cannot be freed)", describe(uintptr(*h)))
	}
	// The runtime's operations made for it stay usable by what still
	// refers to them (a persistent collective started again after the
	// free, as the standard allows); MPI_Finalize frees them (retiredOps)
	// before the runtime's leak report.
	for _, o := range userOps[i].byType {
		retiredOps = append(retiredOps, o)
	}
	userOps[i].live = false // fn and byType stay for persistent collectives (resolveOp); indices are never reused
	*h = hOpNull
	return 0
}

//export bcs_op_commutative
func bcs_op_commutative(h C.uintptr_t, commute *C.int) C.int {
	if _, ok := ops[uintptr(h)]; ok {
		*commute = 1
		return 0
	}
	kind, i, _ := splitHandle(uintptr(h))
	if kind != kindOp || i >= len(userOps) || !userOps[i].live {
		return fail(0, "MPI_Op_commutative", errOp, "op = %s is not an operation", describe(uintptr(h)))
	}
	*commute = 0
	if userOps[i].commute {
		*commute = 1
	}
	return 0
}

// oneSidedOps are the predefined operations of the one-sided accumulates
// only (mpi.h's MPI_REPLACE and MPI_NO_OP; rmaops.go's redOps).
var oneSidedOps = map[uintptr]string{0x3c: "MPI_REPLACE", 0x3d: "MPI_NO_OP"}

// opCategory says why the predefined operation h is not defined on the
// elements of t by the standard's categories (MPI 5.0 §6.9.2), for the
// two categories whose elements the runtime reduces as integers: Byte
// (MPI_BYTE: MPI_BAND, MPI_BOR, MPI_BXOR only) and Logical (MPI_C_BOOL,
// MPI_CXX_BOOL, MPI_LOGICAL*: MPI_LAND, MPI_LOR, MPI_LXOR only); "" if it
// is, or t's elements are of other categories.
func opCategory(h uintptr, t dtype) string {
	if t.info == nil || len(t.info.sig) == 0 {
		return ""
	}
	cat := ""
	for _, r := range t.info.sig {
		c := ""
		switch n := r.basic.name; {
		case n == "MPI_BYTE":
			c = "byte"
		case n == "MPI_C_BOOL" || n == "MPI_CXX_BOOL" || strings.HasPrefix(n, "MPI_LOGICAL"):
			c = "logical"
		}
		if c == "" || cat != "" && c != cat {
			return ""
		}
		cat = c
	}
	switch {
	case cat == "byte" && (h < 0x28 || h > 0x2a):
		return "its elements are MPI_BYTE, on which only MPI_BAND, MPI_BOR and MPI_BXOR are defined"
	case cat == "logical" && (h < 0x30 || h > 0x32):
		return "its elements are logical (MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL), on which only MPI_LAND, MPI_LOR and MPI_LXOR are defined"
	}
	return ""
}
