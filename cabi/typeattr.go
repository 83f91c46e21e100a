package main

/*
#include "shim.h"
int bcs_call_copy_attr(void *fn, uintptr_t comm, int keyval, void *extra, void *in, void **out, int *flag);
*/
import "C"

import (
	"slices"
	"unsafe"
)

// Attributes on datatypes (MPI_Type_create_keyval, MPI_Type_set_attr,
// MPI_Type_get_attr, MPI_Type_delete_attr, MPI_Type_free_keyval), as on
// communicators (attr.go), in the same keyval numbering: a datatype keyval
// is refused by the communicator calls and the reverse (MPI_ERR_KEYVAL).
// Copy callbacks run at MPI_Type_dup (MPI_TYPE_NULL_COPY_FN copies
// nothing, MPI_TYPE_DUP_FN the value), delete callbacks when a value is
// replaced or deleted and at MPI_Type_free, newest first. Predefined
// datatypes take attributes too.

//export bcs_type_create_keyval
func bcs_type_create_keyval(copyFn, deleteFn unsafe.Pointer, out *C.int, extra unsafe.Pointer) C.int {
	const call = "MPI_Type_create_keyval"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "type_keyval = NULL")
	}
	keyvals = append(keyvals, keyval{copyFn: copyFn, deleteFn: deleteFn, extra: extra, typ: true})
	*out = C.int(keyvalBase + len(keyvals) - 1)
	return 0
}

// typeKeyval resolves a datatype keyval; live refuses one already freed.
func typeKeyval(call string, k C.int, live bool) (*keyval, C.int) {
	i := int(k) - keyvalBase
	if i < 0 || i >= len(keyvals) || !keyvals[i].typ {
		return nil, fail(0, call, errKeyval, "type_keyval = %d is not a keyval made by MPI_Type_create_keyval", int(k))
	}
	if live && keyvals[i].freed {
		return nil, fail(0, call, errKeyval, "type_keyval = %d was freed with MPI_Type_free_keyval", int(k))
	}
	return &keyvals[i], 0
}

//export bcs_type_free_keyval
func bcs_type_free_keyval(k *C.int) C.int {
	const call = "MPI_Type_free_keyval"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if k == nil {
		return fail(0, call, errArg, "type_keyval = NULL")
	}
	kv, rc := typeKeyval(call, *k, true)
	if rc != 0 {
		return rc
	}
	kv.freed = true
	*k = C.MPI_KEYVAL_INVALID
	return 0
}

// typeAttrArgs checks a datatype handle (predefined, derived, committed or
// not) and a keyval.
func typeAttrArgs(call string, h C.uintptr_t, k C.int, live bool) C.int {
	if rc := enter(call); rc != 0 {
		return rc
	}
	if _, rc := lookupType(0, call, "datatype", uintptr(h)); rc != 0 {
		return rc
	}
	_, rc := typeKeyval(call, k, live)
	return rc
}

//export bcs_type_set_attr
func bcs_type_set_attr(h C.uintptr_t, k C.int, val unsafe.Pointer) C.int {
	const call = "MPI_Type_set_attr"
	if rc := typeAttrArgs(call, h, k, true); rc != 0 {
		return rc
	}
	if j := findAttr(uintptr(h), int(k)); j >= 0 {
		if rc := deleteAttr(0, call, uintptr(h), j); rc != 0 {
			return rc
		}
	}
	attrs[uintptr(h)] = append(attrs[uintptr(h)], attr{key: int(k), val: val})
	return 0
}

//export bcs_type_get_attr
func bcs_type_get_attr(h C.uintptr_t, k C.int, out *unsafe.Pointer, flag *C.int) C.int {
	const call = "MPI_Type_get_attr"
	if rc := typeAttrArgs(call, h, k, false); rc != 0 {
		return rc
	}
	if out == nil || flag == nil {
		return fail(0, call, errArg, "attribute_val or flag = NULL")
	}
	*flag = 0
	if j := findAttr(uintptr(h), int(k)); j >= 0 {
		*flag = 1
		*out = attrs[uintptr(h)][j].val
	}
	return 0
}

//export bcs_type_delete_attr
func bcs_type_delete_attr(h C.uintptr_t, k C.int) C.int {
	const call = "MPI_Type_delete_attr"
	if rc := typeAttrArgs(call, h, k, false); rc != 0 {
		return rc
	}
	j := findAttr(uintptr(h), int(k))
	if j < 0 {
		return fail(0, call, errKeyval, "type_keyval %d has no attribute on datatype = %s", int(k), describe(uintptr(h)))
	}
	return deleteAttr(0, call, uintptr(h), j)
}

// copyTypeAttrs runs the copy callbacks from datatype h to its duplicate
// nh (MPI_Type_dup).
func copyTypeAttrs(call string, h, nh uintptr) C.int {
	for _, a := range slices.Clone(attrs[h]) {
		kv := &keyvals[a.key-keyvalBase]
		var out unsafe.Pointer
		var flag C.int
		switch uintptr(kv.copyFn) {
		case hCommNullCopyFn: // MPI_TYPE_NULL_COPY_FN
			continue
		case hCommDupFn: // MPI_TYPE_DUP_FN
			out, flag = a.val, 1
		default:
			if rc := C.bcs_call_copy_attr(kv.copyFn, C.uintptr_t(h), C.int(a.key), kv.extra, a.val, &out, &flag); rc != 0 {
				return fail(0, call, int(rc), "the copy callback of type_keyval %d returned %d", a.key, int(rc))
			}
		}
		if flag != 0 {
			attrs[nh] = append(attrs[nh], attr{key: a.key, val: out})
		}
	}
	return 0
}

// deleteTypeAttrs deletes every attribute of datatype h, newest first
// (MPI_Type_free).
func deleteTypeAttrs(call string, h uintptr) C.int {
	for n := len(attrs[h]); n > 0; n = len(attrs[h]) {
		if rc := deleteAttr(0, call, h, n-1); rc != 0 {
			return rc
		}
	}
	return 0
}
