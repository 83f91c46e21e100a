package main

/*
#include "shim.h"
int bcs_call_delete_attr(void *fn, uintptr_t comm, int keyval, void *val, void *extra);
*/
import "C"

import (
	"slices"
	"unsafe"
)

// Attributes on windows (MPI_Win_create_keyval, MPI_Win_set_attr,
// MPI_Win_get_attr, MPI_Win_delete_attr, MPI_Win_free_keyval), as on
// communicators (attr.go), in the same keyval numbering: a window keyval
// is refused by the communicator and datatype calls and the reverse
// (MPI_ERR_KEYVAL). A window is never duplicated, so copy callbacks are
// kept and never called; delete callbacks run when a value is replaced or
// deleted, and at MPI_Win_free (newest first, before the window is freed:
// a callback that fails fails MPI_Win_free, and the window stays). The
// predefined keys (MPI_WIN_BASE, ...) are served by bcs_win_get_attr
// (rma.go) and cannot be set or deleted.

//export bcs_win_create_keyval
func bcs_win_create_keyval(copyFn, deleteFn unsafe.Pointer, out *C.int, extra unsafe.Pointer) C.int {
	const call = "MPI_Win_create_keyval"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "win_keyval = NULL")
	}
	keyvals = append(keyvals, keyval{copyFn: copyFn, deleteFn: deleteFn, extra: extra, win: true})
	*out = C.int(keyvalBase + len(keyvals) - 1)
	return 0
}

// winKeyval resolves a window keyval; live refuses one already freed. w,
// when not nil, takes the error.
func winKeyval(w *window, call string, k C.int, live bool) (*keyval, C.int) {
	raise := func(format string, a ...any) C.int {
		if w != nil {
			return w.fail(call, errKeyval, format, a...)
		}
		return fail(0, call, errKeyval, format, a...)
	}
	i := int(k) - keyvalBase
	if i < 0 || i >= len(keyvals) || !keyvals[i].win {
		switch k {
		case C.MPI_WIN_BASE, C.MPI_WIN_SIZE, C.MPI_WIN_DISP_UNIT, C.MPI_WIN_CREATE_FLAVOR, C.MPI_WIN_MODEL:
			return nil, raise("win_keyval = %d is a predefined window attribute, which cannot be set or deleted", int(k))
		}
		return nil, raise("win_keyval = %d is not a keyval made by MPI_Win_create_keyval", int(k))
	}
	if live && keyvals[i].freed {
		return nil, raise("win_keyval = %d was freed with MPI_Win_free_keyval", int(k))
	}
	return &keyvals[i], 0
}

//export bcs_win_free_keyval
func bcs_win_free_keyval(k *C.int) C.int {
	const call = "MPI_Win_free_keyval"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if k == nil {
		return fail(0, call, errArg, "win_keyval = NULL")
	}
	kv, rc := winKeyval(nil, call, *k, true)
	if rc != 0 {
		return rc
	}
	kv.freed = true
	*k = C.MPI_KEYVAL_INVALID
	return 0
}

//export bcs_win_set_attr
func bcs_win_set_attr(h C.uintptr_t, k C.int, val unsafe.Pointer) C.int {
	const call = "MPI_Win_set_attr"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if _, rc := winKeyval(w, call, k, true); rc != 0 {
		return rc
	}
	wh := w.handle()
	if j := findAttr(wh, int(k)); j >= 0 {
		if rc := w.deleteAttr(call, j); rc != 0 {
			return rc
		}
	}
	attrs[wh] = append(attrs[wh], attr{key: int(k), val: val})
	return 0
}

// userAttr serves MPI_Win_get_attr for a user keyval.
func (w *window) userAttr(call string, k C.int, val *unsafe.Pointer, flag *C.int) C.int {
	if _, rc := winKeyval(w, call, k, false); rc != 0 {
		return rc
	}
	*flag = 0
	if j := findAttr(w.handle(), int(k)); j >= 0 {
		*flag = 1
		*val = attrs[w.handle()][j].val
	}
	return 0
}

//export bcs_win_delete_attr
func bcs_win_delete_attr(h C.uintptr_t, k C.int) C.int {
	const call = "MPI_Win_delete_attr"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if _, rc := winKeyval(w, call, k, false); rc != 0 {
		return rc
	}
	j := findAttr(w.handle(), int(k))
	if j < 0 {
		return w.fail(call, errKeyval, "win_keyval %d has no attribute on this window", int(k))
	}
	return w.deleteAttr(call, j)
}

// deleteAttr runs the delete callback of the window's attribute j and
// removes it; a failing callback is raised on the window's handler.
func (w *window) deleteAttr(call string, j int) C.int {
	wh := w.handle()
	a := attrs[wh][j]
	kv := &keyvals[a.key-keyvalBase]
	if kv.deleteFn != nil {
		if rc := C.bcs_call_delete_attr(kv.deleteFn, C.uintptr_t(wh), C.int(a.key), a.val, kv.extra); rc != 0 {
			return w.fail(call, int(rc), "the delete callback of win_keyval %d returned %d", a.key, int(rc))
		}
	}
	if j = findAttr(wh, a.key); j < 0 { // the callback itself removed it
		return 0
	}
	attrs[wh] = slices.Delete(attrs[wh], j, j+1)
	if len(attrs[wh]) == 0 {
		delete(attrs, wh)
	}
	return 0
}

// deleteAttrs deletes every attribute of the window, newest first
// (MPI_Win_free).
func (w *window) deleteAttrs(call string) C.int {
	for n := len(attrs[w.handle()]); n > 0; n = len(attrs[w.handle()]) {
		if rc := w.deleteAttr(call, n-1); rc != 0 {
			return rc
		}
	}
	return 0
}
