package main

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size with the
// "external32" representation (MPI 5.0 §5.2.3 and the external32 table of
// the I/O chapter): every basic element big-endian, at the standard's size,
// with no padding. A datatype is packed into its native packed form first
// (the layout code of datatype.go) and each basic element of its signature
// is then converted; unpacking runs the other way. This library runs on
// little-endian hosts only (x86-64, arm64), which the conversion assumes.

const errConversion = 25 // MPI_ERR_CONVERSION

// e32Part is one component of a basic element: native bytes at off, packed
// into ext bytes. Kinds: 'u' bits or an unsigned integer (reversed; a
// narrower ext must hold the value), 'i' a signed integer (likewise, sign
// extended on the way back), 'x' an x87 80-bit long double (16 native bytes)
// that external32 holds as an IEEE binary128.
type e32Part struct {
	off, size, ext int
	kind           byte
}

// e32Parts gives each predefined datatype's components, by name; a name
// missing here has one part, all of it, kind 'u' (the sizes agree). The
// pair types are two basic elements in a signature (datatype.go), each
// converted as itself.
var e32Parts = map[string][]e32Part{
	"MPI_LONG":                    {{0, 8, 4, 'i'}},
	"MPI_UNSIGNED_LONG":           {{0, 8, 4, 'u'}},
	"MPI_WCHAR":                   {{0, 4, 2, 'u'}},
	"MPI_LONG_DOUBLE":             {{0, 16, 16, 'x'}},
	"MPI_C_LONG_DOUBLE_COMPLEX":   {{0, 16, 16, 'x'}, {16, 16, 16, 'x'}},
	"MPI_CXX_LONG_DOUBLE_COMPLEX": {{0, 16, 16, 'x'}, {16, 16, 16, 'x'}},
	"MPI_C_COMPLEX":               {{0, 4, 4, 'u'}, {4, 4, 4, 'u'}},
	"MPI_CXX_FLOAT_COMPLEX":       {{0, 4, 4, 'u'}, {4, 4, 4, 'u'}},
	"MPI_COMPLEX":                 {{0, 4, 4, 'u'}, {4, 4, 4, 'u'}},
	"MPI_COMPLEX8":                {{0, 4, 4, 'u'}, {4, 4, 4, 'u'}},
	"MPI_C_DOUBLE_COMPLEX":        {{0, 8, 8, 'u'}, {8, 8, 8, 'u'}},
	"MPI_CXX_DOUBLE_COMPLEX":      {{0, 8, 8, 'u'}, {8, 8, 8, 'u'}},
	"MPI_DOUBLE_COMPLEX":          {{0, 8, 8, 'u'}, {8, 8, 8, 'u'}},
	"MPI_COMPLEX16":               {{0, 8, 8, 'u'}, {8, 8, 8, 'u'}},
	"MPI_COMPLEX4":                {{0, 2, 2, 'u'}, {2, 2, 2, 'u'}},
	"MPI_COMPLEX32":               {{0, 16, 16, 'u'}, {16, 16, 16, 'u'}}, // REAL16 is binary128 already
}

// e32 is a basic element's parts and its external32 size.
func e32(b *dtInfo) ([]e32Part, int64) {
	parts, ok := e32Parts[b.name]
	if !ok {
		return []e32Part{{0, int(b.size), int(b.size), 'u'}}, b.size
	}
	var n int64
	for _, p := range parts {
		n += int64(p.ext)
	}
	return parts, n
}

// e32Size is the external32 bytes of one item of t.
func e32Size(t *dtInfo) int64 {
	var n int64
	for _, r := range t.sig {
		_, s := e32(r.basic)
		n += r.n * s
	}
	return n
}

// e32Convert converts count items of t between the native packed form and
// external32 (toExt: native -> ext). It stops at the first value the
// external32 size cannot hold and says which.
func e32Convert(t *dtInfo, native, ext []byte, count int64, toExt bool) error {
	var no, eo int // cursors
	var elem int64
	for range count {
		for _, r := range t.sig {
			parts, _ := e32(r.basic)
			for range r.n {
				for _, p := range parts {
					nb, eb := native[no+p.off:no+p.off+p.size], ext[eo:eo+p.ext]
					if toExt {
						if err := e32Out(p, nb, eb); err != nil {
							return fmt.Errorf("element %d (%s): %v", elem, r.basic.name, err)
						}
					} else {
						e32In(p, eb, nb)
					}
					eo += p.ext
				}
				no += int(r.basic.wire)
				elem++
			}
		}
	}
	return nil
}

// e32Out writes native little-endian bytes nb as big-endian eb.
func e32Out(p e32Part, nb, eb []byte) error {
	switch {
	case p.kind == 'x':
		mant, se := binary.LittleEndian.Uint64(nb), binary.LittleEndian.Uint16(nb[8:])
		hi := uint64(se)<<48 | (mant&(1<<63-1))>>15
		lo := mant << 49
		binary.BigEndian.PutUint64(eb, hi)
		binary.BigEndian.PutUint64(eb[8:], lo)
		return nil
	case p.size == p.ext:
		for i := range p.size {
			eb[i] = nb[p.size-1-i]
		}
		return nil
	}
	// narrower: 8 -> 4 (long) or 4 -> 2 (wchar_t)
	var v int64
	var u uint64
	if p.size == 8 {
		u = binary.LittleEndian.Uint64(nb)
		v = int64(u)
	} else {
		u = uint64(binary.LittleEndian.Uint32(nb))
		v = int64(int32(u))
	}
	bits := uint(p.ext * 8)
	if p.kind == 'i' && (v < -(1<<(bits-1)) || v >= 1<<(bits-1)) {
		return fmt.Errorf("%d does not fit the %d bytes external32 gives it", v, p.ext)
	}
	if p.kind == 'u' && u >= 1<<bits {
		return fmt.Errorf("%d does not fit the %d bytes external32 gives it", u, p.ext)
	}
	for i := range p.ext {
		eb[i] = byte(u >> (8 * uint(p.ext-1-i)))
	}
	return nil
}

// e32In writes big-endian eb as native nb.
func e32In(p e32Part, eb, nb []byte) {
	switch {
	case p.kind == 'x':
		hi, lo := binary.BigEndian.Uint64(eb), binary.BigEndian.Uint64(eb[8:])
		se := uint16(hi >> 48)
		mant := (hi&(1<<48-1))<<15 | lo>>49 // binary128's lowest 49 fraction bits are dropped
		if se&0x7fff != 0 {
			mant |= 1 << 63 // x87 keeps the integer bit
		}
		binary.LittleEndian.PutUint64(nb, mant)
		binary.LittleEndian.PutUint16(nb[8:], se)
		clear(nb[10:16])
		return
	case p.size == p.ext:
		for i := range p.size {
			nb[i] = eb[p.size-1-i]
		}
		return
	}
	var u uint64
	for i := range p.ext {
		u = u<<8 | uint64(eb[i])
	}
	if bits := uint(p.ext * 8); p.kind == 'i' && u&(1<<(bits-1)) != 0 {
		u |= math.MaxUint64 << bits // sign extension
	}
	if p.size == 8 {
		binary.LittleEndian.PutUint64(nb, u)
	} else {
		binary.LittleEndian.PutUint32(nb, uint32(u))
	}
}

// e32Datarep checks the datarep argument.
func e32Datarep(call string, datarep *C.char) C.int {
	if datarep == nil {
		return fail(0, call, errArg, "datarep = NULL, want \"external32\"")
	}
	if s := C.GoString(datarep); s != "external32" {
		return fail(0, call, C.MPI_ERR_UNSUPPORTED_DATAREP, "datarep = %q; bcsmpi packs only \"external32\" here (MPI_Pack and MPI_Unpack use the native form)", s)
	}
	return 0
}

// bcs_pack_external serves MPI_Pack_external (unpack 0) and
// MPI_Unpack_external (1), both forms: user is the inbuf of a pack and the
// outbuf of an unpack, packed the other buffer of size bytes.
//
//export bcs_pack_external
func bcs_pack_external(call *C.char, datarep *C.char, user unsafe.Pointer, count C.int64_t, dt C.uintptr_t, packed unsafe.Pointer, size C.int64_t, pos *C.int64_t, unpack C.int) C.int {
	name := C.GoString(call)
	if rc := enter(name); rc != 0 {
		return rc
	}
	if rc := e32Datarep(name, datarep); rc != 0 {
		return rc
	}
	t, rc := committedType(0, name, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	what, sizeName := "incount", "outsize"
	if unpack != 0 {
		what, sizeName = "outcount", "insize"
	}
	switch {
	case count < 0:
		return fail(0, name, errCount, "%s = %d, want >= 0", what, int64(count))
	case pos == nil:
		return fail(0, name, errArg, "position = NULL")
	case size < 0:
		return fail(0, name, errArg, "%s = %d, want >= 0", sizeName, int64(size))
	case *pos < 0 || *pos > size:
		return fail(0, name, errArg, "position = %d, want 0..%d (%s)", int64(*pos), int64(size), sizeName)
	}
	nativeBytes, e := t.countBytes(what, int64(count))
	if e != nil {
		return fail(0, name, e.class, "%s", e.msg)
	}
	need := e32Size(t) * int64(count) // bounded by nativeBytes' bound: no basic element grows
	if need > int64(size-*pos) {
		verb := "packing"
		if unpack != 0 {
			verb = "unpacking"
		}
		return fail(0, name, errTruncate, "%s %d items of %s needs %d external32 bytes; the buffer has %d left after position %d", verb, int64(count), t.describe(), need, int64(size-*pos), int64(*pos))
	}
	if need == 0 {
		return 0
	}
	if packed == nil || user == nil {
		return fail(0, name, errBuffer, "a buffer is NULL with %d bytes to move", need)
	}
	ext := unsafe.Slice((*byte)(unsafe.Add(packed, int64(*pos))), need)
	native := make([]byte, nativeBytes)
	if unpack != 0 {
		if err := e32Convert(t, native, ext, int64(count), false); err != nil {
			return fail(0, name, errConversion, "%v", err)
		}
		t.unpack(user, native, int(count))
	} else {
		t.pack(native, user, int(count))
		if err := e32Convert(t, native, ext, int64(count), true); err != nil {
			return fail(0, name, errConversion, "%v", err)
		}
	}
	*pos += C.int64_t(need)
	return 0
}

//export bcs_pack_external_size
func bcs_pack_external_size(call *C.char, datarep *C.char, count C.int64_t, dt C.uintptr_t, size *C.int64_t) C.int {
	name := C.GoString(call)
	if rc := enter(name); rc != 0 {
		return rc
	}
	if rc := e32Datarep(name, datarep); rc != 0 {
		return rc
	}
	t, rc := committedType(0, name, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	if count < 0 {
		return fail(0, name, errCount, "incount = %d, want >= 0", int64(count))
	}
	if size == nil {
		return fail(0, name, errArg, "size = NULL")
	}
	if _, e := t.countBytes("incount", int64(count)); e != nil {
		return fail(0, name, e.class, "%s", e.msg)
	}
	*size = C.int64_t(e32Size(t) * int64(count))
	return 0
}
