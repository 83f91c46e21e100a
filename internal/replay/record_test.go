package replay

import "testing"

// A rank continuing one SOME call forever cannot grow the agent's decoder,
// and checking allocates nothing.
func TestDecoderContinuationsAreBounded(t *testing.T) {
	var e Encoder
	some := func(idx int) []byte {
		return e.Append(nil, Record{Op: OpSome, Call: CallTestsome, Seq: 1, Run: 1, NReq: 1000000, Indices: []int{idx}})
	}
	d := Decoder{Ranks: 4, CheckOnly: true}
	for i := 0; i < 2000; i++ { // the first, then continuations (the same call)
		if _, err := d.Check(some(i)); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	b := some(5000)
	allocs := testing.AllocsPerRun(100, func() {
		d2 := d
		if _, err := d2.Check(b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("checking a SOME record allocates %.0f times", allocs)
	}
	// A continuation must still go up from the last index it continues.
	if _, err := d.Check(some(1999)); err == nil {
		t.Errorf("a continuation repeating index 1999 was accepted")
	}
}
