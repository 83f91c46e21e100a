package main

import (
	"slices"
	"testing"
)

// TestBalancedDims checks MPI_Dims_create's search on numbers too large for
// the exhaustive check of testdata/diff/topo.c: highly composite numbers
// (where the factorisations are many), a large prime and a power of two,
// over up to 20 dimensions. Each answer must multiply to n, be
// non-increasing, and, where given, be the balanced one (the answers were
// compared with MPICH 4.0's, which agree on every n up to 12000 over 1 to 8
// dimensions; Open MPI 4.1 answers 12 x 6 for 72 over 2).
func TestBalancedDims(t *testing.T) {
	cases := []struct {
		n, k int
		want []int
	}{
		{72, 2, []int{9, 8}},
		{360, 3, []int{10, 6, 6}},
		{102, 4, []int{17, 3, 2, 1}},
		{1, 3, []int{1, 1, 1}},
		{1, 0, nil},
		{2147483647, 3, []int{2147483647, 1, 1}},
		{1 << 30, 4, []int{256, 256, 128, 128}},
		{1 << 30, 20, nil},
		{735134400, 2, []int{27200, 27027}},
		{735134400, 8, []int{17, 15, 14, 13, 12, 12, 11, 10}},
		{735134400, 12, []int{17, 13, 11, 7, 5, 5, 4, 4, 4, 3, 3, 3}},
		{735134400, 20, nil},
		{2095133040, 6, []int{39, 38, 36, 35, 34, 33}},
		{2095133040, 16, nil},
		// Ties on the spread and on the smallest factor go to the larger
		// second smallest: 14 x 12 x 12 x 7 x 7 is as spread.
		{98784, 5, []int{14, 14, 9, 8, 7}},
		{303408, 5, []int{43, 14, 9, 8, 7}},
	}
	for _, c := range cases {
		got := balancedDims(c.n, c.k)
		if len(got) != c.k {
			t.Errorf("balancedDims(%d, %d) = %v: want %d factors", c.n, c.k, got, c.k)
			continue
		}
		p := 1
		for _, d := range got {
			p *= d
		}
		if c.k > 0 && p != c.n {
			t.Errorf("balancedDims(%d, %d) = %v: product %d", c.n, c.k, got, p)
		}
		if !slices.IsSortedFunc(got, func(a, b int) int { return b - a }) {
			t.Errorf("balancedDims(%d, %d) = %v: not non-increasing", c.n, c.k, got)
		}
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("balancedDims(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
		}
	}
}

// naiveDims is the reference for balancedDims: every non-increasing
// factorisation of n into k factors, enumerated, and the best of them by
// the rule of MPI_Dims_create's doc comment, compared factor by factor.
func naiveDims(n, k int) []int {
	var all [][]int
	var walk func(r, m, cap int, f []int)
	walk = func(r, m, cap int, f []int) {
		if m == 0 {
			if r == 1 {
				all = append(all, slices.Clone(f))
			}
			return
		}
		for x := min(r, cap); x >= 1; x-- {
			if r%x == 0 {
				walk(r/x, m-1, x, append(f, x))
			}
		}
	}
	walk(n, k, n, nil)
	better := func(a, b []int) bool {
		if sa, sb := a[0]-a[k-1], b[0]-b[k-1]; sa != sb {
			return sa < sb
		}
		for i := k - 1; i >= 0; i-- {
			if a[i] != b[i] {
				return a[i] > b[i]
			}
		}
		return false
	}
	best := all[0]
	for _, f := range all[1:] {
		if better(f, best) {
			best = f
		}
	}
	return best
}

// TestBalancedDimsAgainstNaive compares the pruned search with the
// enumeration of naiveDims: every n up to 400 over 2 to 5 dimensions, and
// numbers with many factorisations (products of small primes, and such
// numbers times a prime larger than their other factors) over 3 to 6.
func TestBalancedDimsAgainstNaive(t *testing.T) {
	var ns [][2]int
	for k := 2; k <= 5; k++ {
		for n := 1; n <= 400; n++ {
			ns = append(ns, [2]int{n, k})
		}
	}
	for _, base := range []int{2 * 2 * 2 * 2 * 2 * 9 * 343, 5040, 27720, 2 * 2 * 2 * 2 * 3 * 3 * 3 * 5 * 5 * 7} {
		for _, p := range []int{1, 17, 43, 101} {
			for k := 3; k <= 6; k++ {
				ns = append(ns, [2]int{base * p, k})
			}
		}
	}
	for _, c := range ns {
		if got, want := balancedDims(c[0], c[1]), naiveDims(c[0], c[1]); !slices.Equal(got, want) {
			t.Errorf("balancedDims(%d, %d) = %v, want %v", c[0], c[1], got, want)
		}
	}
}
