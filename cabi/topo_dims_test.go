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
