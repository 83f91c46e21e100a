package main

import (
	"math/rand"
	"testing"
)

// TestSigCursorTake checks sigCursor.take, which cuts an access into
// conversion chunks, against walking the elements one by one: from any
// element, as many whole elements as fit the budget (at least one when
// asked), over signatures of several runs tiled over many items.
func TestSigCursorTake(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 3000; trial++ {
		nruns := 1 + rng.Intn(4)
		ty := &dtInfo{}
		var w []int64
		for range nruns {
			n := int64(1 + rng.Intn(5))
			ty.sig = append(ty.sig, sigRun{n: n})
			ty.elems += n
			w = append(w, int64(1+rng.Intn(9)))
		}
		count := int64(1 + rng.Intn(6))
		c := newSigCursor(ty, w, count)
		var flat []int64 // the width of every element of the access
		for range count {
			for i, r := range ty.sig {
				for range r.n {
					flat = append(flat, w[i])
				}
			}
		}
		pos := int64(rng.Intn(len(flat) + 1))
		budget := int64(rng.Intn(60))
		least := rng.Intn(2) == 0
		var wk, wb int64
		for p := pos; p < int64(len(flat)); p++ {
			if wb+flat[p] > budget && !(least && wk == 0) {
				break
			}
			wk, wb = wk+1, wb+flat[p]
		}
		k, b := c.take(pos, budget, least)
		if k != wk || b != wb {
			t.Fatalf("trial %d: sig %v widths %v count %d: take(%d, %d, %v) = %d elements, %d bytes; want %d, %d",
				trial, ty.sig, w, count, pos, budget, least, k, b, wk, wb)
		}
	}
}
