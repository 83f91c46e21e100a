package check

// Intervals is the set of byte ranges of a rank's active requests: each
// request's buffers, marked read (a send buffer) or written (a receive
// buffer, a collective's output). Insert, Remove and Conflict take
// O(log n) expected time for n ranges (a treap keyed by start address,
// each node holding the largest end in its subtree, and the largest end
// of a written range), plus the ranges of the request being posted that
// Conflict skips. Priorities come from a fixed xorshift sequence, so the
// shape depends only on the operations.
type Intervals struct {
	root *ival
	rnd  uint64
	n    int
}

// Interval is one range of one request.
type Interval struct {
	Lo, Hi uint64 // [Lo, Hi), Hi > Lo
	ID     uint64 // the request (its generation)
	Write  bool
}

type ival struct {
	Interval
	prio        uint64
	max, maxW   uint64 // largest Hi in the subtree; of written ranges (0: none)
	left, right *ival
}

func (n *ival) fix() {
	n.max, n.maxW = n.Hi, 0
	if n.Write {
		n.maxW = n.Hi
	}
	for _, c := range [2]*ival{n.left, n.right} {
		if c != nil {
			n.max, n.maxW = max(n.max, c.max), max(n.maxW, c.maxW)
		}
	}
}

func less(a, b *Interval) bool { return a.Lo < b.Lo || (a.Lo == b.Lo && a.ID < b.ID) }

// Len is the number of ranges in the set.
func (s *Intervals) Len() int { return s.n }

// Insert adds iv (an empty range is ignored).
func (s *Intervals) Insert(iv Interval) {
	if iv.Hi <= iv.Lo {
		return
	}
	if s.rnd == 0 {
		s.rnd = 0x9e3779b97f4a7c15
	}
	s.rnd ^= s.rnd << 13
	s.rnd ^= s.rnd >> 7
	s.rnd ^= s.rnd << 17
	n := &ival{Interval: iv, prio: s.rnd}
	n.fix()
	s.root = insert(s.root, n)
	s.n++
}

func insert(t, n *ival) *ival {
	if t == nil {
		return n
	}
	if less(&n.Interval, &t.Interval) {
		t.left = insert(t.left, n)
		if t.left.prio > t.prio {
			t = rotRight(t)
		}
	} else {
		t.right = insert(t.right, n)
		if t.right.prio > t.prio {
			t = rotLeft(t)
		}
	}
	t.fix()
	return t
}

func rotRight(t *ival) *ival {
	l := t.left
	t.left, l.right = l.right, t
	t.fix()
	l.fix()
	return l
}

func rotLeft(t *ival) *ival {
	r := t.right
	t.right, r.left = r.left, t
	t.fix()
	r.fix()
	return r
}

// Remove deletes the range starting at lo of request id, if present.
func (s *Intervals) Remove(lo, id uint64) {
	var ok bool
	s.root, ok = remove(s.root, &Interval{Lo: lo, ID: id})
	if ok {
		s.n--
	}
}

func remove(t *ival, k *Interval) (*ival, bool) {
	if t == nil {
		return nil, false
	}
	var ok bool
	switch {
	case less(k, &t.Interval):
		t.left, ok = remove(t.left, k)
	case less(&t.Interval, k):
		t.right, ok = remove(t.right, k)
	default:
		return merge(t.left, t.right), true
	}
	t.fix()
	return t, ok
}

func merge(a, b *ival) *ival {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		a.right = merge(a.right, b)
		a.fix()
		return a
	default:
		b.left = merge(a, b.left)
		b.fix()
		return b
	}
}

// Conflict returns a range of another request than iv.ID that overlaps iv
// where at least one of the two is written (any overlapping range if iv is
// written, an overlapping written range if not).
func (s *Intervals) Conflict(iv Interval) (Interval, bool) {
	if iv.Hi <= iv.Lo {
		return Interval{}, false
	}
	return conflict(s.root, &iv)
}

func conflict(t *ival, q *Interval) (Interval, bool) {
	for t != nil {
		bound := t.max
		if !q.Write {
			bound = t.maxW
		}
		if bound <= q.Lo { // nothing here ends after q starts
			return Interval{}, false
		}
		if t.left != nil {
			if x, ok := conflict(t.left, q); ok {
				return x, true
			}
		}
		if t.Lo >= q.Hi { // this and everything right of it start after q ends
			return Interval{}, false
		}
		if t.ID != q.ID && t.Hi > q.Lo && (q.Write || t.Write) {
			return t.Interval, true
		}
		t = t.right
	}
	return Interval{}, false
}
