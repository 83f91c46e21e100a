package main

/*
#include "shim.h"
*/
import "C"

import (
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// Info objects (MPI_Info_*): ordered (key, value) pairs. Handles are
// kindInfo|generation|index; MPI_INFO_ENV is a read-only object made at its
// first use.

const (
	hInfoNull = 0x130
	hInfoEnv  = 0x131
	maxKey    = 255  // MPI_MAX_INFO_KEY - 1
	maxVal    = 1023 // MPI_MAX_INFO_VAL - 1
)

type infoEntry struct {
	keys, vals []string
	gen        uint32
	live       bool
}

var (
	infos     []infoEntry
	freeInfos []int
	envInfo   *infoEntry
)

func newInfo(keys, vals []string) uintptr {
	var i int
	if n := len(freeInfos); n > 0 {
		i, freeInfos = freeInfos[n-1], freeInfos[:n-1]
	} else {
		i = len(infos)
		infos = append(infos, infoEntry{})
	}
	e := &infos[i]
	e.keys, e.vals, e.live = keys, vals, true
	return userHandle(kindInfo, i, e.gen)
}

// env is MPI_INFO_ENV: how the process was started.
func env() *infoEntry {
	if envInfo == nil {
		e := &infoEntry{live: true}
		add := func(k, v string) { e.keys, e.vals = append(e.keys, k), append(e.vals, v) }
		if len(os.Args) > 0 {
			add("command", os.Args[0])
			add("argv", strings.Join(os.Args[1:], " "))
		}
		add("maxprocs", strconv.Itoa(int(C.bcs_world_size)))
		add("thread_level", threadLevelName(C.bcs_thread_level))
		if h, err := os.Hostname(); err == nil {
			add("host", h)
		}
		if wd, err := os.Getwd(); err == nil {
			add("wdir", wd)
		}
		envInfo = e
	}
	return envInfo
}

// info resolves an info handle; writable refuses MPI_INFO_ENV.
func info(call string, h uintptr, writable bool) (*infoEntry, C.int) {
	switch h {
	case hInfoNull:
		return nil, fail(0, call, errInfo, "info = MPI_INFO_NULL, want an info object (MPI_Info_create)")
	case hInfoEnv:
		if writable {
			return nil, fail(0, call, errInfo, "info = MPI_INFO_ENV is read-only")
		}
		return env(), 0
	}
	kind, i, gen := splitHandle(h)
	if kind == kindInfo && i < len(infos) {
		if e := &infos[i]; e.live && e.gen == gen {
			return e, 0
		}
		return nil, fail(0, call, errInfo, "info = 0x%x was freed with MPI_Info_free", h)
	}
	return nil, fail(0, call, errInfo, "info = %s is not an info object", describe(h))
}

// infoArg checks an info argument that may be MPI_INFO_NULL (hints to a call).
func infoArg(call string, h uintptr) C.int {
	if h == hInfoNull {
		return 0
	}
	_, rc := info(call, h, false)
	return rc
}

func (e *infoEntry) find(k string) int {
	for i, key := range e.keys {
		if key == k {
			return i
		}
	}
	return -1
}

func infoKey(call string, k *C.char) (string, C.int) {
	if k == nil {
		return "", fail(0, call, errInfoKey, "key = NULL")
	}
	s := C.GoString(k)
	if s == "" || len(s) > maxKey {
		return "", fail(0, call, errInfoKey, "key %q has %d characters, want 1..%d", s, len(s), maxKey)
	}
	return s, 0
}

// infoAt is the prologue of the calls on one key: the info object h (to
// write when writable), the key k, and the key's index in it (-1: absent).
func infoAt(call string, h C.uintptr_t, k *C.char, writable bool) (e *infoEntry, key string, i int, rc C.int) {
	if e, rc = info(call, uintptr(h), writable); rc != 0 {
		return nil, "", -1, rc
	}
	if key, rc = infoKey(call, k); rc != 0 {
		return nil, "", -1, rc
	}
	return e, key, e.find(key), 0
}

const (
	errInfoKey   = 31
	errInfoNokey = 32
	errInfoValue = 33
)

// bcs_info_create is MPI_Info_create, which MPI-4 allows before MPI_Init
// and after MPI_Finalize (an info object is local; MPI_Session_init takes
// one).
//
//export bcs_info_create
func bcs_info_create(out *C.uintptr_t) C.int {
	if out == nil {
		return fail(0, "MPI_Info_create", errArg, "info = NULL")
	}
	*out = C.uintptr_t(newInfo(nil, nil))
	return 0
}

//export bcs_info_set
func bcs_info_set(h C.uintptr_t, k, v *C.char) C.int {
	const call = "MPI_Info_set"
	e, key, i, rc := infoAt(call, h, k, true)
	if rc != 0 {
		return rc
	}
	if v == nil {
		return fail(0, call, errInfoValue, "value = NULL")
	}
	val := C.GoString(v)
	if val == "" || len(val) > maxVal {
		return fail(0, call, errInfoValue, "value for key %q has %d characters, want 1..%d", key, len(val), maxVal)
	}
	if i >= 0 {
		e.vals[i] = val
	} else {
		e.keys, e.vals = append(e.keys, key), append(e.vals, val)
	}
	return 0
}

// copyOut writes s NUL-terminated into buf of n bytes, truncating.
func copyOut(buf *C.char, n int, s string) {
	if buf == nil || n <= 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), n)
	k := copy(b[:n-1], s)
	b[k] = 0
}

// bcs_info_get serves MPI_Info_get_string (buflen in and out, the value's
// length + 1) and, with valuelen >= 0 and buflen NULL, MPI_Info_get.
//
//export bcs_info_get
func bcs_info_get(h C.uintptr_t, k *C.char, valuelen C.int, buflen *C.int, value *C.char, flag *C.int) C.int {
	call := "MPI_Info_get_string"
	if buflen == nil {
		call = "MPI_Info_get"
	}
	e, _, i, rc := infoAt(call, h, k, false)
	if rc != 0 {
		return rc
	}
	*flag = C.int(b2i(i >= 0))
	if i < 0 {
		return 0
	}
	if buflen == nil {
		if valuelen < 0 {
			return fail(0, call, errArg, "valuelen = %d, want >= 0", int(valuelen))
		}
		copyOut(value, int(valuelen)+1, e.vals[i])
		return 0
	}
	n := int(*buflen)
	*buflen = C.int(len(e.vals[i]) + 1)
	copyOut(value, n, e.vals[i])
	return 0
}

//export bcs_info_get_valuelen
func bcs_info_get_valuelen(h C.uintptr_t, k *C.char, valuelen, flag *C.int) C.int {
	const call = "MPI_Info_get_valuelen"
	e, _, i, rc := infoAt(call, h, k, false)
	if rc != 0 {
		return rc
	}
	*flag = C.int(b2i(i >= 0))
	if i >= 0 {
		*valuelen = C.int(len(e.vals[i]))
	}
	return 0
}

//export bcs_info_delete
func bcs_info_delete(h C.uintptr_t, k *C.char) C.int {
	const call = "MPI_Info_delete"
	e, key, i, rc := infoAt(call, h, k, true)
	if rc != 0 {
		return rc
	}
	if i < 0 {
		return fail(0, call, errInfoNokey, "key %q is not in the info object", key)
	}
	e.keys = append(e.keys[:i], e.keys[i+1:]...)
	e.vals = append(e.vals[:i], e.vals[i+1:]...)
	return 0
}

//export bcs_info_get_nkeys
func bcs_info_get_nkeys(h C.uintptr_t, n *C.int) C.int {
	e, rc := info("MPI_Info_get_nkeys", uintptr(h), false)
	if rc != 0 {
		return rc
	}
	*n = C.int(len(e.keys))
	return 0
}

//export bcs_info_get_nthkey
func bcs_info_get_nthkey(h C.uintptr_t, n C.int, key *C.char) C.int {
	const call = "MPI_Info_get_nthkey"
	e, rc := info(call, uintptr(h), false)
	if rc != 0 {
		return rc
	}
	if n < 0 || int(n) >= len(e.keys) {
		return fail(0, call, errArg, "n = %d, want 0..%d (the object has %d keys)", int(n), len(e.keys)-1, len(e.keys))
	}
	copyOut(key, maxKey+1, e.keys[n])
	return 0
}

//export bcs_info_dup
func bcs_info_dup(h C.uintptr_t, out *C.uintptr_t) C.int {
	e, rc := info("MPI_Info_dup", uintptr(h), false)
	if rc != 0 {
		return rc
	}
	*out = C.uintptr_t(newInfo(append([]string(nil), e.keys...), append([]string(nil), e.vals...)))
	return 0
}

//export bcs_info_create_env
func bcs_info_create_env(out *C.uintptr_t) C.int {
	e := env()
	*out = C.uintptr_t(newInfo(append([]string(nil), e.keys...), append([]string(nil), e.vals...)))
	return 0
}

//export bcs_info_free
func bcs_info_free(h *C.uintptr_t) C.int {
	const call = "MPI_Info_free"
	if h == nil {
		return fail(0, call, errArg, "info = NULL")
	}
	if _, rc := info(call, uintptr(*h), true); rc != 0 {
		return rc
	}
	_, i, _ := splitHandle(uintptr(*h))
	e := &infos[i]
	e.keys, e.vals, e.live = nil, nil, false
	e.gen = (e.gen + 1) & genMask
	freeInfos = append(freeInfos, i)
	*h = hInfoNull
	return 0
}

// bcs_comm_set_info accepts any hints and uses none; bcs_comm_get_info
// therefore returns a new, empty object (the hints in use), as the
// standard allows.
//
//export bcs_comm_set_info
func bcs_comm_set_info(c, h C.uintptr_t) C.int {
	const call = "MPI_Comm_set_info"
	if _, rc := enterComm(call, uintptr(c)); rc != 0 {
		return rc
	}
	return infoArg(call, uintptr(h))
}

//export bcs_comm_get_info
func bcs_comm_get_info(c C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_get_info"
	if _, rc := enterComm(call, uintptr(c)); rc != 0 {
		return rc
	}
	*out = C.uintptr_t(newInfo(nil, nil))
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// threadLevels names the thread levels, lowest first, as info values
// ("thread_level" of MPI_INFO_ENV and of a session).
var threadLevels = []struct {
	level C.int
	name  string
}{
	{C.MPI_THREAD_SINGLE, "MPI_THREAD_SINGLE"},
	{C.MPI_THREAD_FUNNELED, "MPI_THREAD_FUNNELED"},
	{C.MPI_THREAD_SERIALIZED, "MPI_THREAD_SERIALIZED"},
	{C.MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE"},
}

func threadLevelName(l C.int) string {
	for _, t := range threadLevels {
		if t.level == l {
			return t.name
		}
	}
	return ""
}

// threadLevelByName is the level an info value names (case ignored).
func threadLevelByName(s string) (C.int, bool) {
	for _, t := range threadLevels {
		if strings.EqualFold(strings.TrimSpace(s), t.name) {
			return t.level, true
		}
	}
	return 0, false
}
