package mpiapi

import (
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// TestPersistentViews: each Persistent call on a communicator takes the
// next index (the init order), independent of other communicators; inside
// RunPersistent the collectives of that communicator, and only of it, post
// through the view, nested starts restore the outer view, and outside any
// start nothing changes. The keys of two views' steps never meet, nor
// those of a view's k-th and k+1-th start.
func TestPersistentViews(t *testing.T) {
	prev := self
	t.Cleanup(func() { self = prev })
	p := &process{}
	self = p

	world, other := &Comm{id: 0, size: 4}, &Comm{id: 7, size: 2}
	a, b := world.Persistent(), world.Persistent()
	o := other.Persistent()
	if a.pk != 1 || b.pk != 2 || o.pk != 1 || world.pinits != 2 || other.pinits != 1 {
		t.Fatalf("indices: a %d, b %d, other's %d; counts %d, %d; want 1, 2, 1; 2, 1", a.pk, b.pk, o.pk, world.pinits, other.pinits)
	}
	if a.id != world.id || a.size != world.size || a.collSeq != 0 {
		t.Fatalf("view a = {id %d, size %d, collSeq %d}, want world's id and size and no steps", a.id, a.size, a.collSeq)
	}

	if p.view(world) != world {
		t.Fatal("outside a start a collective posts through a view")
	}
	RunPersistent(b, func() {
		if p.view(world) != b {
			t.Error("a start of b: world's collectives do not post through b")
		}
		if p.view(other) != other {
			t.Error("a start of b: another communicator's collectives post through b")
		}
		if p.view(a) != a {
			t.Error("a view passed in was replaced")
		}
		RunPersistent(a, func() {
			if p.view(world) != a {
				t.Error("nested start of a: world's collectives do not post through a")
			}
		})
		if p.view(world) != b {
			t.Error("after the nested start the outer view was not restored")
		}
	})
	if p.pview != nil {
		t.Fatalf("after the start the view is still %p", p.pview)
	}
	ran := false
	RunPersistent(nil, func() { ran = p.view(world) == world })
	if !ran {
		t.Fatal("RunPersistent(nil) did not run the start as it is")
	}

	keys := map[uint32]string{}
	for _, k := range []struct {
		name     string
		pk, step uint32
	}{{"a1", 1, 1}, {"a2", 1, 2}, {"b1", 2, 1}, {"b2", 2, 2}} {
		key := proto.PersistKey(k.pk, k.step)
		if was, dup := keys[key]; dup {
			t.Errorf("%s and %s share key %#x", was, k.name, key)
		}
		keys[key] = k.name
		d := proto.Descriptor{Kind: proto.KindColl, Persist: true, CollSeq: key}
		if d.PersistIndex() != k.pk || d.PersistStep() != k.step {
			t.Errorf("%s: index %d step %d, want %d %d", k.name, d.PersistIndex(), d.PersistStep(), k.pk, k.step)
		}
	}
}
