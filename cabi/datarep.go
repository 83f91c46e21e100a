package main

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// User data representations (MPI_Register_datarep, MPI 5.0 §14.5.3): see
// "I/O" in doc.go for the contract.
//
// A file view in a user representation keeps the program's etype and
// filetype (MPI_File_get_view returns them) and maps the file through their
// file twins: the same constructors over leaves as wide as the
// representation's extent function says, so portable constructors
// (contiguous, vector, indexed, subarray, darray) scale and byte
// displacements (hvector, hindexed, struct, resized) stay as given, as the
// standard says. An access's data in the file is then its basic elements
// one after the other, each at its file extent. A write converts the
// program's buffer chunk by chunk into a conversion buffer with the write
// function (the entries [position, position+count) of the datatype tiled
// over the buffer) and writes each chunk through the view; a read reads
// each chunk and converts it with the read function.

// convChunk bounds a conversion buffer (one chunk of an access, at least
// one basic element).
const convChunk = 256 << 10

// datarep is a registered data representation. A nil conversion function
// is MPI_CONVERSION_FN_NULL: that direction moves the native bytes.
type datarep struct {
	name            string
	read, write     unsafe.Pointer
	extentFn, extra unsafe.Pointer
	large           bool // MPI_Register_datarep_c: conversion functions take an MPI_Count
	builtin         bool // "external32": converted here (external32.go), no C functions
	extents         map[uintptr]int64
}

// e32Rep is "external32" in views: each basic element big-endian at the
// standard's size, as MPI_Pack_external packs it.
var e32Rep = &datarep{name: "external32", builtin: true, extents: map[uintptr]int64{}}

var datareps = map[string]*datarep{}

//export bcs_register_datarep
func bcs_register_datarep(name *C.char, rfn, wfn, efn, extra unsafe.Pointer, large C.int) C.int {
	call := "MPI_Register_datarep"
	if large != 0 {
		call += "_c"
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	if name == nil {
		return nullFail(call, errArg, "datarep = NULL, want a name")
	}
	n := C.GoString(name)
	switch {
	case n == "":
		return nullFail(call, errArg, "datarep = \"\", want a nonempty name")
	case len(n) >= maxDatarepString:
		return nullFail(call, errArg, "datarep = %q has %d characters; MPI_MAX_DATAREP_STRING (%d) allows %d", n, len(n), maxDatarepString, maxDatarepString-1)
	case n == "native" || n == "internal" || n == "external32":
		return nullFail(call, errDupDatarep, "datarep = %q is a predefined data representation", n)
	case datareps[n] != nil:
		return nullFail(call, errDupDatarep, "datarep = %q was registered already (a name is registered once per process)", n)
	case efn == nil:
		return nullFail(call, errArg, "dtype_file_extent_fn = NULL, want a function giving each datatype's extent in the file")
	}
	datareps[n] = &datarep{name: n, read: rfn, write: wfn, extentFn: efn, extra: extra, large: large != 0, extents: map[uintptr]int64{}}
	return 0
}

// lookupDatarep is the representation a view names: nil for "native".
func lookupDatarep(rep string) (*datarep, *ioError) {
	switch rep {
	case "native":
		return nil, nil
	case "external32":
		return e32Rep, nil
	case "internal":
		return nil, ioErr(errUnsupDatarep, "datarep = %q: bcsmpi's views support \"native\", \"external32\" and representations registered with MPI_Register_datarep", rep)
	}
	if d := datareps[rep]; d != nil {
		return d, nil
	}
	return nil, ioErr(errUnsupDatarep, "datarep = %q is not a data representation; want \"native\", \"external32\" or a name registered with MPI_Register_datarep", rep)
}

// extent is the file extent of a basic datatype, from the extent function
// (asked once per datatype).
func (d *datarep) extent(b *dtInfo) (int64, *ioError) {
	if e, ok := d.extents[b.h]; ok {
		return e, nil
	}
	if d.builtin {
		_, n := e32(b)
		d.extents[b.h] = n
		return n, nil
	}
	var e C.MPI_Aint
	if rc := C.bcs_call_datarep_extent(d.extentFn, C.uintptr_t(b.h), &e, d.extra); rc != 0 {
		return 0, ioErr(errConversion, "the extent function of datarep %q returned %d for %s", d.name, int(rc), b.name)
	}
	if e <= 0 || int64(e) > maxTypeBytes {
		return 0, ioErr(errConversion, "the extent function of datarep %q gave %s the extent %d; want 1..%d bytes", d.name, b.name, int64(e), maxTypeBytes)
	}
	d.extents[b.h] = int64(e)
	return int64(e), nil
}

// fileType is t's twin in the file: the same constructors over leaves of
// the representation's extents (see the top of this file).
func (d *datarep) fileType(t *dtInfo) (*dtInfo, *ioError) {
	if t.predefined() {
		var w int64
		if pp, ok := pairParts[t.h]; ok { // its two parts, back to back
			for _, h := range []uintptr{pp.v, pp.i} {
				e, bad := d.extent(predefinedType(h))
				if bad != nil {
					return nil, bad
				}
				w += e
			}
		} else {
			var bad *ioError
			if w, bad = d.extent(t); bad != nil {
				return nil, bad
			}
		}
		leaf := &dtInfo{h: t.h, name: t.name, combiner: combNamed, size: w, wire: w, elems: 1, ub: w, trueUB: w,
			align: 1, kind: C.BCS_NONE, basicKind: C.BCS_NONE, committed: true, contig: true}
		leaf.segs = []seg{{0, w, 1, 0}}
		leaf.sig = []sigRun{{leaf, 1}}
		return leaf, nil
	}
	n := &dtInfo{combiner: t.combiner, large: t.large, ints: t.ints, aints: t.aints, counts: t.counts}
	kids := t.types
	if t.combiner == combSubarray || t.combiner == combDarray {
		kids = kids[:1] // types[1] is the layout build makes
	}
	for _, k := range kids {
		fk, bad := d.fileType(k)
		if bad != nil {
			return nil, bad
		}
		n.types = append(n.types, fk)
	}
	if e := n.build(); e != nil {
		return nil, ioErr(e.class, "%s in datarep %q: %s", t.describe(), d.name, e.msg)
	}
	if !n.compile() {
		return nil, ioErr(errType, "%s in datarep %q has more than %d blocks", t.describe(), d.name, maxSegs)
	}
	n.committed = true
	return n, nil
}

// sigWidths is, for each run of t's signature, the width of one element:
// its file extent (file) or its native packed bytes.
func (d *datarep) sigWidths(t *dtInfo, file bool) ([]int64, *ioError) {
	w := make([]int64, len(t.sig))
	for i, r := range t.sig {
		if !file {
			w[i] = r.basic.wire
			continue
		}
		e, bad := d.extent(r.basic)
		if bad != nil {
			return nil, bad
		}
		w[i] = e
	}
	return w, nil
}

// sigCursor walks the basic elements of a datatype tiled over a buffer,
// each of a width (sigWidths).
type sigCursor struct {
	t     *dtInfo
	w     []int64
	per   int64 // the widths of one item
	total int64 // the elements of the access
}

func newSigCursor(t *dtInfo, w []int64, count int64) *sigCursor {
	c := &sigCursor{t: t, w: w, total: count * t.elems}
	for i, r := range t.sig {
		c.per += r.n * w[i]
	}
	return c
}

// take is how many elements from element pos on fit budget bytes (at
// least one when least is set, if any is left), and their bytes.
func (c *sigCursor) take(pos, budget int64, least bool) (k, bytes int64) {
	left := c.total - pos
	if left <= 0 || c.t.elems == 0 {
		return 0, 0
	}
	// The rest of the item pos lies in, then whole items, then part of one.
	in := pos % c.t.elems
	walk := func() bool { // from element in of an item: false when the budget is spent
		acc := int64(0)
		for i, r := range c.t.sig {
			if in >= acc+r.n {
				acc += r.n
				continue
			}
			avail := min(acc+r.n-in, left-k)
			j := min(avail, max(0, budget-bytes)/c.w[i])
			if j == 0 && least && k == 0 {
				j = 1
			}
			k, bytes, in = k+j, bytes+j*c.w[i], in+j
			if j < avail || k == left {
				return false
			}
			acc += r.n
		}
		in = 0
		return true
	}
	if in != 0 && !walk() {
		return k, bytes
	}
	if c.per > 0 {
		items := max(0, min((left-k)/c.t.elems, (budget-bytes)/c.per))
		k, bytes = k+items*c.t.elems, bytes+items*c.per
	}
	if k < left && (budget-bytes > 0 || least && k == 0) {
		walk()
	}
	return k, bytes
}

// bytesOf is the bytes of count items of t at the widths w.
func bytesOf(t *dtInfo, w []int64, count int64) (int64, bool) {
	c := newSigCursor(t, w, 1)
	return mulCheck(c.per, count)
}

// accessBytes is the bytes an access of count items of t occupies in the
// view: packed bytes in "native", the file extents of its elements in a
// user representation.
func (f *file) accessBytes(t *dtInfo, count int64) (int64, *ioError) {
	if f.rep == nil {
		return t.wire * count, nil
	}
	w, bad := f.rep.sigWidths(t, true)
	if bad != nil {
		return 0, bad
	}
	n, ok := bytesOf(t, w, count)
	if !ok || n > maxTypeBytes {
		return 0, ioErr(errCount, "count = %d of %s takes more than bcsmpi's bound of %d bytes in datarep %q", count, t.describe(), maxTypeBytes, f.rep.name)
	}
	return n, nil
}

// convert calls a conversion function: count elements from element pos of
// dt tiled over user, to (write) or from filebuf.
func (d *datarep) convert(write bool, user unsafe.Pointer, dt uintptr, t *dtInfo, count, pos int64, filebuf []byte) *ioError {
	if d.builtin {
		return e32Range(write, user, t, count, pos, filebuf)
	}
	fn, what := d.read, "read"
	if write {
		fn, what = d.write, "write"
	}
	large := C.int(0)
	if d.large {
		large = 1
	}
	rc := C.bcs_call_datarep_conv(fn, large, user, C.uintptr_t(dt), C.MPI_Count(count), unsafe.Pointer(unsafe.SliceData(filebuf)), C.MPI_Offset(pos), d.extra)
	if rc != 0 {
		return ioErr(errConversion, "the %s conversion function of datarep %q returned %d (%d elements from position %d of %s)", what, d.name, int(rc), count, pos, describe(dt))
	}
	return nil
}

// moveConverted is an access through a view in a user representation
// whose conversion function for its direction is not
// MPI_CONVERSION_FN_NULL: chunk by chunk, convert and write, or read and
// convert. It returns the view bytes moved and the native packed bytes
// they hold: after a short write, those of the whole etypes written (the
// bytes of a partial one are in the file, but neither the status counts
// them nor the file pointer passes them).
func (f *file) moveConverted(write bool, start int64, buf unsafe.Pointer, count int, t *dtInfo, dt uintptr, bytes int64) (int64, int64, *ioError) {
	d := f.rep
	fw, bad := d.sigWidths(t, true)
	if bad != nil {
		return 0, 0, bad
	}
	nw, _ := d.sigWidths(t, false)
	cur := newSigCursor(t, fw, int64(count))
	// stop ends a write that wrote only view bytes written: what counts is
	// the whole etypes written, the unit the file pointers move in, and
	// the elements they hold, so that the status and the pointer agree.
	stop := func(written int64, bad *ioError) (int64, int64, *ioError) {
		k, fbytes := cur.take(0, written/f.etype.wire*f.etype.wire, false)
		return fbytes, nativeBytes(t, nw, k), bad
	}
	var done, pos int64
	fb := make([]byte, min(bytes, convChunk))
	for done < bytes {
		k, n := cur.take(pos, convChunk, true)
		if k == 0 {
			break
		}
		if int64(len(fb)) < n {
			fb = make([]byte, n)
		}
		chunk := fb[:n]
		if write {
			if bad := d.convert(true, buf, dt, t, k, pos, chunk); bad != nil {
				return stop(done, bad)
			}
			got, bad := f.writeView(start+done, chunk)
			if bad != nil || got < n { // a short write: the file system took part of the chunk
				return stop(done+got, bad)
			}
			done += got
		} else {
			got, bad := f.readView(start+done, chunk)
			kk := k
			if got < n { // the file ended: convert the whole elements read
				kk, _ = cur.take(pos, got, false)
			}
			if kk > 0 {
				if b := d.convert(false, buf, dt, t, kk, pos, chunk); b != nil {
					return done, nativeBytes(t, nw, pos), b
				}
			}
			if bad != nil || got < n {
				_, fbytes := cur.take(pos, got, false)
				return done + fbytes, nativeBytes(t, nw, pos+kk), bad
			}
			done += got
		}
		pos += k
	}
	return done, nativeBytes(t, nw, pos), nil
}

// nativeBytes is the native packed bytes of the first n elements of t
// tiled.
func nativeBytes(t *dtInfo, nw []int64, n int64) int64 {
	if t.elems == 0 || n <= 0 {
		return 0
	}
	items := n / t.elems
	b := items * t.wire
	if r := n % t.elems; r > 0 {
		for i, run := range t.sig {
			j := min(r, run.n)
			b += j * nw[i]
			r -= j
			if r == 0 {
				break
			}
		}
	}
	return b
}

// fileExtent is MPI_File_get_type_extent in the view's representation.
func (f *file) fileExtent(t *dtInfo) (int64, *ioError) {
	if f.rep == nil {
		return t.extent(), nil
	}
	ft, bad := f.rep.fileType(t)
	if bad != nil {
		return 0, bad
	}
	return ft.extent(), nil
}

// datarepName is the view's representation, as MPI_File_get_view gives it.
func (f *file) datarepName() string {
	if f.rep == nil {
		return "native"
	}
	return f.rep.name
}

// nameHash is a 64-bit FNV-1a hash of a name (the members compare their
// views' representations by it).
func nameHash(s string) int64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return int64(h)
}

// e32Range converts count basic elements from element pos of t tiled over
// user to or from external32 in filebuf: the items they lie in are packed
// natively (a read keeps the other elements of those items), converted
// element by element, and (a read) unpacked.
func e32Range(write bool, user unsafe.Pointer, t *dtInfo, count, pos int64, filebuf []byte) *ioError {
	if count <= 0 || t.elems == 0 {
		return nil
	}
	first, last := pos/t.elems, (pos+count-1)/t.elems
	n := last - first + 1
	native := make([]byte, n*t.wire)
	base := unsafe.Add(user, first*t.extent())
	t.pack(native, base, int(n))
	skip := pos - first*t.elems
	var no, eo int
	var el int64
	for range n {
		for _, r := range t.sig {
			parts, _ := e32(r.basic)
			for range r.n {
				if el >= skip && el < skip+count {
					for _, p := range parts {
						nb, eb := native[no+p.off:no+p.off+p.size], filebuf[eo:eo+p.ext]
						if !write {
							e32In(p, eb, nb)
						} else if err := e32Out(p, nb, eb); err != nil {
							return ioErr(errConversion, "element %d (%s) in \"external32\": %v", pos+el-skip, r.basic.name, err)
						}
						eo += p.ext
					}
				}
				no += int(r.basic.wire)
				el++
			}
		}
	}
	if !write {
		t.unpack(base, native, int(n))
	}
	return nil
}
