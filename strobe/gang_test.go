package strobe

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// The matrix's rules, slice by slice: quantum rotation in slot order,
// work-conserving hand-over, a stuck job's turn, join and leave.
func TestGangMatrixRules(t *testing.T) {
	g := NewGang(GangConfig{MPL: 3, Quantum: 3})
	for _, id := range []int{10, 20} {
		if _, err := g.Join(id); err != nil {
			t.Fatal(err)
		}
	}
	running := []uint8{proto.StatusRunning}
	blocked := []uint8{proto.CallCode("MPI_Recv")}
	var got strings.Builder
	step := func(n int, st map[int][]uint8) {
		for range n {
			id, sw := g.Slice()
			for j, s := range st {
				g.Observe(j, s, 0)
			}
			got.WriteString(map[int]string{-1: "-", 10: "a", 20: "b", 30: "c"}[id])
			if sw {
				got.WriteString("|")
			}
		}
	}
	step(7, map[int][]uint8{10: running, 20: running}) // a a a | b b b | a
	step(4, map[int][]uint8{10: blocked, 20: running}) // a stuck: b takes the rest of a's quantum, then b's own
	if _, err := g.Join(30); err != nil {
		t.Fatal(err)
	}
	step(6, map[int][]uint8{10: blocked, 20: running, 30: running})
	g.Leave(20)
	step(3, map[int][]uint8{10: blocked, 30: running})
	// "|" follows a slice that is a switch.
	want := "aaab|bba|" + // a quantum each
		"ab|a|b|" + // a runs a slice, is seen stuck: b gets the rest; b's quantum ends: a's turn, one slice again
		"bc|cca|b|" + // b ends its quantum, c's turn; then stuck a's turn, passed on to b
		"c|cc" // b left while running: the first able job in slot order
	if got.String() != want {
		t.Fatalf("decisions\n got %s\nwant %s", got.String(), want)
	}
	if _, err := g.Join(40); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Join(50); !errors.Is(err, ErrGangFull) || !strings.Contains(err.Error(), "gang_mpl 3") {
		t.Fatalf("a fourth job at MPL 3: %v", err)
	}
	if err := (GangConfig{MPL: 65, Quantum: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "gang_mpl = 65, want 1 .. 64") {
		t.Fatalf("MPL 65: %v", err)
	}
}

// Rule 1 after the running job leaves: the turn goes to the slot after it,
// not back to slot 0, so the jobs in later slots are not passed over.
func TestGangLeaveKeepsTheTurnOrder(t *testing.T) {
	g := NewGang(GangConfig{MPL: 3, Quantum: 2})
	for _, id := range []int{10, 20, 30} {
		if _, err := g.Join(id); err != nil {
			t.Fatal(err)
		}
	}
	running := []uint8{proto.StatusRunning}
	var seq []int
	for range 4 { // a a b b
		id, _ := g.Slice()
		seq = append(seq, id)
		for _, j := range []int{10, 20, 30} {
			g.Observe(j, running, 1)
		}
	}
	g.Leave(20) // b leaves while running
	id, _ := g.Slice()
	seq = append(seq, id)
	if want := []int{10, 10, 20, 20, 30}; !slices.Equal(seq, want) {
		t.Fatalf("jobs run %v, want %v (after b left, c's turn)", seq, want)
	}
}

// A held job (its previous slice still under way) is passed over: the
// running job that is held hands over at once, a held job's turn goes to
// the next, with every job held none runs, and a held job is not counted
// alive; released, it takes its turns again.
func TestGangHeldJobIsPassedOver(t *testing.T) {
	g := NewGang(GangConfig{MPL: 3, Quantum: 2})
	for _, id := range []int{10, 20, 30} {
		if _, err := g.Join(id); err != nil {
			t.Fatal(err)
		}
	}
	var got strings.Builder
	step := func(n int) {
		for range n {
			id, sw := g.Slice()
			got.WriteString(map[int]string{-1: "-", 10: "a", 20: "b", 30: "c"}[id])
			if sw {
				got.WriteString("|")
			}
		}
	}
	step(1)          // a
	g.Hold(10, true) // a's host goes silent while a runs
	step(5)          // b b c c b: a passed over
	g.Hold(20, true)
	g.Hold(30, true)
	step(2) // none can be told to run
	g.Hold(10, false)
	g.Hold(20, false)
	g.Hold(30, false)
	step(4)
	// Released, the turn goes on after the last running job (b): c, then
	// a (no switch mark after "-": no job ran in the slice before).
	want := "a" + "b|bc|cb|" + "--" + "cca|a"
	if got.String() != want {
		t.Fatalf("decisions\n got %s\nwant %s", got.String(), want)
	}
	ranA, aliveA := g.Counts(10)
	ranB, aliveB := g.Counts(20)
	if ranA != 3 || aliveA != 1+4 || ranB != 3 || aliveB != 6+4 {
		t.Fatalf("counts: a ran %d of %d (want 3 of 5), b ran %d of %d (want 3 of 10)", ranA, aliveA, ranB, aliveB)
	}
}

// Given counts the slices of a job's quantum that another job ran because
// its ranks were all blocked (rule 3), and only those.
func TestGangGivenCountsLentSlices(t *testing.T) {
	g := NewGang(GangConfig{MPL: 2, Quantum: 4})
	for _, id := range []int{10, 20} {
		if _, err := g.Join(id); err != nil {
			t.Fatal(err)
		}
	}
	running := []uint8{proto.StatusRunning}
	blocked := []uint8{proto.CallCode("MPI_Recv")}
	var owners []int
	for range 4 { // a's quantum: one slice of a, three lent to b
		g.Slice()
		owners = append(owners, g.Owner())
		g.Observe(10, blocked, 0)
		g.Observe(20, running, 0)
	}
	if g.Given(10) != 3 || g.Given(20) != 0 {
		t.Fatalf("after a's quantum with a blocked: given a %d, b %d; want 3, 0", g.Given(10), g.Given(20))
	}
	if !slices.Equal(owners, []int{10, 10, 10, 10}) {
		t.Fatalf("owners %v, want a's quantum throughout", owners)
	}
	for range 4 { // the quantum ends with b running: a's turn (the next slot), a runs it all
		g.Slice()
		g.Observe(10, running, 0)
		g.Observe(20, running, 0)
	}
	if g.Given(10) != 3 || g.Given(20) != 0 || g.Owner() != 10 {
		t.Fatalf("after a's second quantum: given a %d, b %d, owner %d; want 3, 0, 10", g.Given(10), g.Given(20), g.Owner())
	}
	if ran, alive := g.Counts(10); ran != 5 || alive != 8 {
		t.Fatalf("a ran %d of %d slices, want 5 of 8", ran, alive)
	}
	g.Slice()
	if g.Owner() != 20 || g.Given(20) != 0 {
		t.Fatalf("b's turn: owner %d, given b %d; want 20, 0", g.Owner(), g.Given(20))
	}
	g.Leave(20)
	if g.Given(20) != 0 || g.Owner() != -1 {
		t.Fatalf("b left: given %d, owner %d; want 0, -1", g.Given(20), g.Owner())
	}
}
