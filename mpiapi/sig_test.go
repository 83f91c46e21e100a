package mpiapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// A typed slice's sends and receives carry its element type; bytes carry
// bytes unless SetSignatures gave the next one a type, once.
func TestSignatureOfTypedSlices(t *testing.T) {
	p := fakeRank(t)
	w := World()
	if _, err := Isend(w, make([]float64, 4), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Irecv(w, make([]int32, 8), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Isend(w, make([]byte, 8), 1, 1); err != nil {
		t.Fatal(err)
	}
	SetSignatures(reduce.Float64, reduce.Int32)
	if _, err := Irecv(w, make([]byte, 8), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Isend(w, make([]byte, 8), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Isend(w, make([]byte, 8), 1, 1); err != nil {
		t.Fatal(err)
	}
	want := []reduce.Type{reduce.Float64, reduce.Int32, reduce.Uint8, reduce.Int32, reduce.Float64, reduce.Uint8}
	ds := posted(t, p)
	if len(ds) != len(want) {
		t.Fatalf("%d descriptors, want %d", len(ds), len(want))
	}
	for i, d := range ds {
		if reduce.Type(d.DType) != want[i] {
			t.Errorf("descriptor %d (%s): type signature %v, want %v", i, d.Describe(), reduce.Type(d.DType), want[i])
		}
	}
}

// A receive the runtime completed with ErrType fails with MPI_ERR_TYPE
// naming both element types and the sender.
func TestTypeMismatchError(t *testing.T) {
	p := fakeRank(t)
	r, err := Irecv(World(), make([]int32, 8), 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	p.blk.Complete(proto.Completion{Req: r.slot, Kind: proto.KindRecv, Source: 1, Tag: 3, Count: 32, Err: proto.ErrType, PeerType: uint8(reduce.Float64)})
	_, err = Wait(r)
	if !errors.Is(err, &Error{Class: ErrType}) {
		t.Fatalf("Wait: %v, want MPI_ERR_TYPE", err)
	}
	for _, s := range []string{"MPI_Irecv", "MPI_ERR_TYPE", "matching send of rank 1 (tag 3)", "this receive's elements are int32", "its elements are float64"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}
