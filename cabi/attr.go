package main

/*
#include "shim.h"
int bcs_call_copy_attr(void *fn, uintptr_t comm, int keyval, void *extra, void *in, void **out, int *flag);
int bcs_call_delete_attr(void *fn, uintptr_t comm, int keyval, void *val, void *extra);
*/
import "C"

import (
	"slices"
	"unsafe"
)

// Attributes on communicators with user keyvals (MPI_Comm_create_keyval,
// MPI_Comm_set_attr, MPI_Comm_get_attr, MPI_Comm_delete_attr,
// MPI_Comm_free_keyval, and the deprecated MPI_Keyval_create, MPI_Attr_*).
// The copy and delete callbacks are C functions the shim calls: copy when
// MPI_Comm_dup (or MPI_Comm_dup_with_info) duplicates a communicator
// (MPI_COMM_NULL_COPY_FN copies nothing, MPI_COMM_DUP_FN the value), delete
// when an attribute is replaced or deleted, when its communicator is freed,
// and, for MPI_COMM_SELF, at the start of MPI_Finalize (newest first). The
// predefined keys (MPI_TAG_UB, ...) are served by the shim; keyvals of
// datatypes are in typeattr.go, those of windows in winattr.go.

const keyvalBase = 0x1000 // user keyvals: keyvalBase + index

type keyval struct {
	copyFn, deleteFn, extra unsafe.Pointer
	freed                   bool // attributes set with it keep working
	typ                     bool // a datatype keyval (typeattr.go)
	win                     bool // a window keyval (winattr.go)
}

type attr struct {
	key int
	val unsafe.Pointer
}

var (
	keyvals []keyval
	// attrs holds each communicator's attributes in the order they were
	// set, by communicator handle (a freed handle's attributes are deleted).
	attrs = map[uintptr][]attr{}
)

const (
	hCommNullCopyFn = 0
	hCommDupFn      = 1
)

//export bcs_comm_create_keyval
func bcs_comm_create_keyval(copyFn, deleteFn unsafe.Pointer, out *C.int, extra unsafe.Pointer) C.int {
	if rc := enter("MPI_Comm_create_keyval"); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, "MPI_Comm_create_keyval", errArg, "comm_keyval = NULL")
	}
	keyvals = append(keyvals, keyval{copyFn: copyFn, deleteFn: deleteFn, extra: extra})
	*out = C.int(keyvalBase + len(keyvals) - 1)
	return 0
}

// userKeyval resolves a user keyval; live refuses one already freed.
func userKeyval(ci int, call string, k C.int, live bool) (*keyval, C.int) {
	i := int(k) - keyvalBase
	if i < 0 || i >= len(keyvals) || keyvals[i].typ || keyvals[i].win {
		return nil, fail(ci, call, errKeyval, "keyval = %d is not a keyval made by MPI_Comm_create_keyval (nor a predefined attribute key)", int(k))
	}
	if live && keyvals[i].freed {
		return nil, fail(ci, call, errKeyval, "keyval = %d was freed with MPI_Comm_free_keyval", int(k))
	}
	return &keyvals[i], 0
}

//export bcs_comm_free_keyval
func bcs_comm_free_keyval(k *C.int) C.int {
	const call = "MPI_Comm_free_keyval"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if k == nil {
		return fail(0, call, errArg, "comm_keyval = NULL")
	}
	kv, rc := userKeyval(0, call, *k, true)
	if rc != 0 {
		return rc
	}
	kv.freed = true
	*k = C.MPI_KEYVAL_INVALID
	return 0
}

func findAttr(h uintptr, key int) int {
	for i, a := range attrs[h] {
		if a.key == key {
			return i
		}
	}
	return -1
}

// deleteAttr calls the delete callback of attribute j of h and removes it.
func deleteAttr(ci int, call string, h uintptr, j int) C.int {
	a := attrs[h][j]
	kv := &keyvals[a.key-keyvalBase]
	if kv.deleteFn != nil {
		if rc := C.bcs_call_delete_attr(kv.deleteFn, C.uintptr_t(h), C.int(a.key), a.val, kv.extra); rc != 0 {
			return fail(ci, call, int(rc), "the delete callback of keyval %d returned %d", a.key, int(rc))
		}
	}
	if j = findAttr(h, a.key); j < 0 { // the callback itself removed it
		return 0
	}
	attrs[h] = slices.Delete(attrs[h], j, j+1)
	if len(attrs[h]) == 0 {
		delete(attrs, h)
	}
	return 0
}

//export bcs_comm_set_attr
func bcs_comm_set_attr(commH C.uintptr_t, k C.int, val unsafe.Pointer) C.int {
	const call = "MPI_Comm_set_attr"
	ci, rc := enterComm(call, uintptr(commH))
	if rc != 0 {
		return rc
	}
	if _, rc := userKeyval(ci, call, k, true); rc != 0 {
		return rc
	}
	h := commHandle(ci)
	if j := findAttr(h, int(k)); j >= 0 {
		if rc := deleteAttr(ci, call, h, j); rc != 0 {
			return rc
		}
	}
	attrs[h] = append(attrs[h], attr{key: int(k), val: val})
	return 0
}

// bcs_comm_get_attr serves the user keyvals of MPI_Comm_get_attr (the shim
// serves the predefined keys).
//
//export bcs_comm_get_attr
func bcs_comm_get_attr(commH C.uintptr_t, k C.int, out *unsafe.Pointer, flag *C.int) C.int {
	const call = "MPI_Comm_get_attr"
	ci, rc := enterComm(call, uintptr(commH))
	if rc != 0 {
		return rc
	}
	if _, rc := userKeyval(ci, call, k, false); rc != 0 {
		return rc
	}
	*flag = 0
	if j := findAttr(commHandle(ci), int(k)); j >= 0 {
		*flag = 1
		*out = attrs[commHandle(ci)][j].val
	}
	return 0
}

//export bcs_comm_delete_attr
func bcs_comm_delete_attr(commH C.uintptr_t, k C.int) C.int {
	const call = "MPI_Comm_delete_attr"
	ci, rc := enterComm(call, uintptr(commH))
	if rc != 0 {
		return rc
	}
	if _, rc := userKeyval(ci, call, k, false); rc != 0 {
		return rc
	}
	h := commHandle(ci)
	j := findAttr(h, int(k))
	if j < 0 {
		return fail(ci, call, errKeyval, "keyval %d has no attribute on comm = %s", int(k), describe(h))
	}
	return deleteAttr(ci, call, h, j)
}

// copyAttrs runs the copy callbacks from communicator slot ci to the new
// handle nh (MPI_Comm_dup).
func copyAttrs(call string, ci int, nh uintptr) C.int {
	list, rc := copiedAttrs(call, ci)
	if len(list) > 0 {
		attrs[nh] = append(attrs[nh], list...)
	}
	return rc
}

// copiedAttrs runs the copy callbacks of communicator slot ci's attributes
// and returns the copies they keep, in order; when a callback fails, the
// copies made before it are returned with its code (the caller drops them
// without their delete callbacks: the program never saw them).
func copiedAttrs(call string, ci int) ([]attr, C.int) {
	h := commHandle(ci)
	var list []attr
	for _, a := range slices.Clone(attrs[h]) {
		kv := &keyvals[a.key-keyvalBase]
		var out unsafe.Pointer
		var flag C.int
		switch uintptr(kv.copyFn) {
		case hCommNullCopyFn:
			continue
		case hCommDupFn:
			out, flag = a.val, 1
		default:
			if rc := C.bcs_call_copy_attr(kv.copyFn, C.uintptr_t(h), C.int(a.key), kv.extra, a.val, &out, &flag); rc != 0 {
				return list, fail(ci, call, int(rc), "the copy callback of keyval %d returned %d", a.key, int(rc))
			}
		}
		if flag != 0 {
			list = append(list, attr{key: a.key, val: out})
		}
	}
	return list, 0
}

// deleteAttrs deletes every attribute of communicator slot ci, newest
// first (MPI_Comm_free; MPI_COMM_SELF at MPI_Finalize).
func deleteAttrs(call string, ci int) C.int {
	h := commHandle(ci)
	for n := len(attrs[h]); n > 0; n = len(attrs[h]) {
		if rc := deleteAttr(ci, call, h, n-1); rc != 0 {
			return rc
		}
	}
	return 0
}

//export bcs_attrs_finalize
func bcs_attrs_finalize() C.int {
	if C.bcs_initialized == 0 || C.bcs_finalized != 0 {
		return 0
	}
	return deleteAttrs("MPI_Finalize", 1)
}
