package pmi

import (
	"fmt"
	"strconv"
	"strings"
)

// Block is one entry of PMI_process_mapping: Count nodes from Start, each
// given PerNode consecutive ranks.
type Block struct{ Start, Count, PerNode int }

// ParseProcessMapping parses the PMI_process_mapping job attribute, e.g.
// "(vector,(0,3,2))" for 3 nodes × 2 block-placed tasks (Slurm's
// setup.c:_get_proc_mapping), or "(vector,(0,4,1))" for tasks placed
// cyclically over 4 nodes (the vector repeats until every rank has a node).
// An empty vector "(vector)" is an error.
func ParseProcessMapping(s string) ([]Block, error) {
	bad := func(why string) error {
		return fmt.Errorf("pmi: process mapping %q: %s; want (vector,(start,nodes,per_node),...)", s, why)
	}
	t := strings.ReplaceAll(s, " ", "")
	if !strings.HasPrefix(t, "(vector") || !strings.HasSuffix(t, ")") {
		return nil, bad("not a vector")
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "(vector"), ")")
	var blocks []Block
	for t != "" {
		if !strings.HasPrefix(t, ",(") {
			return nil, bad("expected ,( at " + strconv.Quote(t))
		}
		end := strings.IndexByte(t, ')')
		if end < 0 {
			return nil, bad("unclosed entry")
		}
		f := strings.Split(t[2:end], ",")
		if len(f) != 3 {
			return nil, bad(fmt.Sprintf("entry %q has %d fields, want 3", t[1:end+1], len(f)))
		}
		var n [3]int
		for i, x := range f {
			v, err := strconv.Atoi(x)
			if err != nil || v < 0 || (i > 0 && v == 0) {
				return nil, bad(fmt.Sprintf("field %q of entry %q is not a number (>= 0 for start, >= 1 for counts)", x, t[1:end+1]))
			}
			n[i] = v
		}
		blocks = append(blocks, Block{Start: n[0], Count: n[1], PerNode: n[2]})
		t = t[end+1:]
	}
	if len(blocks) == 0 {
		return nil, bad("empty vector")
	}
	return blocks, nil
}

// NodeOf returns the node of each of size ranks under the mapping, repeating
// the vector as MPICH does until every rank is placed.
func NodeOf(blocks []Block, size int) []int {
	node := make([]int, 0, size)
	for len(node) < size {
		before := len(node)
		for _, b := range blocks {
			for n := b.Start; n < b.Start+b.Count; n++ {
				for i := 0; i < b.PerNode && len(node) < size; i++ {
					node = append(node, n)
				}
			}
		}
		if len(node) == before {
			panic("pmi: NodeOf: a mapping that places no rank (use ParseProcessMapping)")
		}
	}
	return node
}
