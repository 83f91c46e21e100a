package main

/*
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Small functions of the ABI: the size-specific Fortran datatypes
// (MPI_Type_create_f90_*), the ABI's own info (MPI_Abi_*), the hardware
// resource info and the non-blocking buffer flushes. doc.go says what each
// answers.

const (
	errAbi       = 62 // MPI_ERR_ABI
	mpiUndefined = -32766

	hInteger1, hInteger2, hInteger4, hInteger8, hInteger16 = 0x2c1, 0x2c9, 0x2d1, 0x2d9, 0x2e1
	hReal4, hReal8, hReal16                                = 0x2d2, 0x2da, 0x2e2
	hComplex8, hComplex16, hComplex32                      = 0x2db, 0x2e3, 0x2eb
)

// f90Int is the integer kind SELECTED_INT_KIND(r) picks, as gfortran and
// every common Fortran compiler has them: the smallest whose range covers
// 10^-r .. 10^r.
var f90Int = []struct {
	r int
	h uintptr
}{{2, hInteger1}, {4, hInteger2}, {9, hInteger4}, {18, hInteger8}, {38, hInteger16}}

// f90Real is the real kinds SELECTED_REAL_KIND(p, r) picks from: IEEE
// single, double and quadruple precision (the x87 80-bit kind has no MPI
// datatype; a request only it would meet gets quadruple).
var f90Real = []struct {
	p, r       int
	real, cplx uintptr
}{{6, 37, hReal4, hComplex8}, {15, 307, hReal8, hComplex16}, {33, 4931, hReal16, hComplex32}}

//export bcs_type_create_f90
func bcs_type_create_f90(which, p, r C.int, out *C.uintptr_t) C.int {
	call := [...]string{"MPI_Type_create_f90_integer", "MPI_Type_create_f90_real", "MPI_Type_create_f90_complex"}[which]
	if rc := enter(call); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "newtype = NULL")
	}
	if which == 0 {
		for _, k := range f90Int {
			if int(r) <= k.r {
				return f90Type(call, combF90Integer, []int32{int32(r)}, k.h, out)
			}
		}
		return fail(0, call, errArg, "r = %d: no integer kind has a decimal exponent range that large (at most 38, MPI_INTEGER16)", int(r))
	}
	if p == mpiUndefined && r == mpiUndefined {
		return fail(0, call, errArg, "p and r are both MPI_UNDEFINED; at least one must be given")
	}
	for _, k := range f90Real {
		if (p == mpiUndefined || int(p) <= k.p) && (r == mpiUndefined || int(r) <= k.r) {
			if which == 1 {
				return f90Type(call, combF90Real, []int32{int32(p), int32(r)}, k.real, out)
			}
			return f90Type(call, combF90Complex, []int32{int32(p), int32(r)}, k.cplx, out)
		}
	}
	show := func(v C.int) string {
		if v == mpiUndefined {
			return "MPI_UNDEFINED"
		}
		return strconv.Itoa(int(v))
	}
	return fail(0, call, errArg, "p = %s, r = %s: no real kind has that precision and range (at most p = 33, r = 4931: quadruple precision)", show(p), show(r))
}

// f90Types holds the types MPI_Type_create_f90_* returned, by combiner and
// arguments: the same call gives the same handle, as the standard's
// predefined-like types (never freed, so made once).
var f90Types = map[[3]int32]uintptr{}

// f90Handles is f90Types' reverse: MPI_Type_get_contents of a type made
// from one returns that handle itself, which, predefined, the caller does
// not free.
var f90Handles = map[*dtInfo]uintptr{}

// f90Type answers an MPI_Type_create_f90_* call whose kind is the named type
// named: a type laid out as that one, committed, whose envelope says
// combiner and ints (r, or p and r) and that MPI_Type_free refuses.
func f90Type(call string, combiner int, ints []int32, named uintptr, out *C.uintptr_t) C.int {
	key := [3]int32{int32(combiner), ints[0], -1}
	if len(ints) > 1 {
		key[2] = ints[1]
	}
	if h, ok := f90Types[key]; ok {
		*out = C.uintptr_t(h)
		return 0
	}
	o, rc := lookupType(0, call, "newtype", named)
	if rc != 0 {
		return rc
	}
	t := &dtInfo{combiner: combiner, ints: ints, types: []*dtInfo{o}}
	if e := t.build(); e != nil {
		return fail(0, call, e.class, "%s", e.msg)
	}
	if !t.compile() {
		return fail(0, call, errIntern, "the type of %s did not compile", o.name)
	}
	t.committed = true
	h := newTypeHandle(t)
	f90Types[key] = h
	f90Handles[t] = h
	*out = C.uintptr_t(h)
	return 0
}

// bcs_abi_get_info is MPI_Abi_get_info: the sizes of the ABI's integer
// types, in bytes.
//
//export bcs_abi_get_info
func bcs_abi_get_info(out *C.uintptr_t) C.int {
	if out == nil {
		return fail(-1, "MPI_Abi_get_info", errArg, "info = NULL")
	}
	*out = C.uintptr_t(newInfo([]string{"mpi_aint_size", "mpi_count_size", "mpi_offset_size"},
		[]string{strconv.Itoa(int(unsafe.Sizeof(C.MPI_Aint(0)))), strconv.Itoa(int(unsafe.Sizeof(C.MPI_Count(0)))),
			strconv.Itoa(int(unsafe.Sizeof(C.MPI_Offset(0))))}))
	return 0
}

// The Fortran details a Fortran binding layer gives this library (bcsmpi
// has no Fortran of its own): nil and empty until set.
var (
	fortranInfo     *infoEntry
	fortranBooleans = map[int][2][]byte{} // by LOGICAL size: true, false
)

//export bcs_abi_get_fortran_info
func bcs_abi_get_fortran_info(out *C.uintptr_t) C.int {
	if out == nil {
		return fail(-1, "MPI_Abi_get_fortran_info", errArg, "info = NULL")
	}
	if fortranInfo == nil {
		*out = hInfoNull
		return 0
	}
	*out = C.uintptr_t(newInfo(append([]string(nil), fortranInfo.keys...), append([]string(nil), fortranInfo.vals...)))
	return 0
}

//export bcs_abi_set_fortran_info
func bcs_abi_set_fortran_info(h C.uintptr_t) C.int {
	const call = "MPI_Abi_set_fortran_info"
	e, rc := info(call, uintptr(h), false)
	if rc != 0 {
		return rc
	}
	if fortranInfo != nil {
		return fail(-1, call, errAbi, "the Fortran information is already set (it may be set once)")
	}
	fortranInfo = &infoEntry{keys: append([]string(nil), e.keys...), vals: append([]string(nil), e.vals...), live: true}
	return 0
}

func logicalSize(call string, n C.int) C.int {
	switch n {
	case 1, 2, 4, 8, 16:
		return 0
	}
	return fail(-1, call, errArg, "logical_size = %d, want 1, 2, 4, 8 or 16 (bytes of a Fortran LOGICAL kind)", int(n))
}

//export bcs_abi_get_fortran_booleans
func bcs_abi_get_fortran_booleans(n C.int, t, f unsafe.Pointer, isSet *C.int) C.int {
	const call = "MPI_Abi_get_fortran_booleans"
	if rc := logicalSize(call, n); rc != 0 {
		return rc
	}
	if isSet == nil {
		return fail(-1, call, errArg, "is_set = NULL")
	}
	v, ok := fortranBooleans[int(n)]
	*isSet = 0
	if !ok {
		return 0
	}
	if t == nil || f == nil {
		return fail(-1, call, errArg, "logical_true or logical_false = NULL")
	}
	copy(unsafe.Slice((*byte)(t), int(n)), v[0])
	copy(unsafe.Slice((*byte)(f), int(n)), v[1])
	*isSet = 1
	return 0
}

//export bcs_abi_set_fortran_booleans
func bcs_abi_set_fortran_booleans(n C.int, t, f unsafe.Pointer) C.int {
	const call = "MPI_Abi_set_fortran_booleans"
	if rc := logicalSize(call, n); rc != 0 {
		return rc
	}
	if t == nil || f == nil {
		return fail(-1, call, errArg, "logical_true or logical_false = NULL")
	}
	if _, ok := fortranBooleans[int(n)]; ok {
		return fail(-1, call, errAbi, "the booleans of LOGICAL size %d are already set (they may be set once)", int(n))
	}
	tv := bytes.Clone(unsafe.Slice((*byte)(t), int(n)))
	fv := bytes.Clone(unsafe.Slice((*byte)(f), int(n)))
	if bytes.Equal(tv, fv) {
		return fail(-1, call, errArg, "logical_true and logical_false are the same %d bytes", int(n))
	}
	fortranBooleans[int(n)] = [2][]byte{tv, fv}
	return 0
}

// bcs_get_hw_resource_info is MPI_Get_hw_resource_info: what this process
// runs on.
//
//export bcs_get_hw_resource_info
func bcs_get_hw_resource_info(out *C.uintptr_t) C.int {
	const call = "MPI_Get_hw_resource_info"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "hw_info = NULL")
	}
	var keys, vals []string
	add := func(k, v string) {
		if v != "" {
			keys, vals = append(keys, k), append(vals, v)
		}
	}
	host, _ := os.Hostname()
	add("host", host)
	arch := runtime.GOARCH
	if a, ok := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[arch]; ok {
		arch = a // the names uname -m gives
	}
	add("arch", arch)
	add("ncpus", strconv.Itoa(runtime.NumCPU())) // the CPUs this process may run on
	add("cpus_allowed", procField("/proc/self/status", "Cpus_allowed_list:"))
	if kb := procField("/proc/meminfo", "MemTotal:"); kb != "" {
		if n, err := strconv.ParseInt(strings.TrimSuffix(kb, " kB"), 10, 64); err == nil {
			add("memory_bytes", strconv.FormatInt(n*1024, 10))
		}
	}
	add("mpi_hw_resource_type", "mpi_shared_memory") // the one MPI_Comm_split_type knows
	if !singleton {
		add("bcs_node", os.Getenv(jobenv.VarNode))
	}
	*out = C.uintptr_t(newInfo(keys, vals))
	return 0
}

// procField is the value of the line starting with key in a /proc file, or "".
func procField(file, key string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// bcs_buffer_iflush is MPI_Buffer_iflush (commH NULL) and
// MPI_Comm_iflush_buffer: the request completes once every buffered send
// pending in the buffer now has (mpiapi.Watch); it does not wait for sends
// made after it. With none pending it has completed already.
//
//export bcs_buffer_iflush
func bcs_buffer_iflush(commH *C.uintptr_t, out *C.uintptr_t) C.int {
	call := "MPI_Buffer_iflush"
	if commH != nil {
		call = "MPI_Comm_iflush_buffer"
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	ci := 0
	if commH != nil {
		var rc C.int
		if ci, rc = comm(call, uintptr(*commH)); rc != 0 {
			return rc
		}
	}
	if out == nil {
		return fail(ci, call, errArg, "request = NULL")
	}
	owner := procBuf
	if commH != nil {
		owner = commBufs[ci]
	}
	var rs []*mpiapi.Request
	for _, m := range bsends {
		if owner != nil && m.owner == owner {
			rs = append(rs, m.r)
		}
	}
	if len(rs) == 0 {
		*out = C.uintptr_t(newReq(nil, doneReq(ci), ci))
		return 0
	}
	w, err := mpiapi.Watch(call, rs)
	if err != nil {
		return failErr(ci, err)
	}
	*out = C.uintptr_t(newReq(w, nil, ci))
	return 0
}
