package proto

import (
	"strings"
	"testing"
)

func TestStatusBytes(t *testing.T) {
	recv := CallCode("MPI_Recv")
	cases := []struct {
		s       uint8
		valid   bool
		blocked bool
		inert   bool
		desc    string
	}{
		{StatusRunning, true, false, false, "running"},
		{recv, true, true, false, "in MPI_Recv"},
		{uint8(len(CallNames) - 1), true, true, false, "in " + CallNames[len(CallNames)-1]},
		{StatusWoken | recv, true, false, false, "in MPI_Recv, woken"},
		{StatusStarting, true, false, false, "has not called MPI_Init yet"},
		{StatusFinalized, true, false, true, "finalized"},
		{StatusNotMPI, true, false, true, "exited without calling MPI_Init"},
		{uint8(len(CallNames)), false, false, false, "status 0x"},
		{StatusWoken, false, false, false, "status 0x80"},
		{StatusWoken + uint8(len(CallNames)), false, false, false, "status 0x"},
		{0xFC, false, false, false, "status 0xfc"},
		// StatusNoPull on running, blocked and woken: read as without it.
		{StatusNoPull, true, false, false, "running, serves no pull orders"},
		{StatusNoPull | recv, true, true, false, "in MPI_Recv, serves no pull orders"},
		{StatusNoPull | StatusWoken | recv, true, false, false, "in MPI_Recv, woken: a completion is waiting for it to run, serves no pull orders"},
		{StatusNoPull | uint8(len(CallNames)), false, false, false, "status 0x"},
		{StatusNoPull | StatusWoken, false, false, false, "status 0xc0"},
	}
	for _, c := range cases {
		err := CheckStatus(c.s)
		if (err == nil) != c.valid {
			t.Errorf("CheckStatus(%#x) = %v, want valid %v", c.s, err, c.valid)
		}
		if err != nil && !strings.Contains(err.Error(), "want 0 (running)") {
			t.Errorf("CheckStatus(%#x): %v does not say what is valid", c.s, err)
		}
		if StatusBlocked(c.s) != c.blocked || StatusInert(c.s) != c.inert {
			t.Errorf("%#x: blocked %v inert %v, want %v %v", c.s, StatusBlocked(c.s), StatusInert(c.s), c.blocked, c.inert)
		}
		if d := DescribeStatus(c.s); !strings.Contains(d, c.desc) {
			t.Errorf("DescribeStatus(%#x) = %q, want it to contain %q", c.s, d, c.desc)
		}
	}
}

func TestSettling(t *testing.T) {
	for _, c := range []struct {
		s    uint8
		want bool
	}{
		{CallCode("MPI_Test"), true}, {CallCode("MPI_Testall"), true}, {CallCode("MPI_Testany"), true}, {CallCode("MPI_Testsome"), true},
		{CallCode("MPI_Waitany"), false}, {CallCode("MPI_Recv"), false}, {StatusWoken | CallCode("MPI_Test"), false},
		{StatusRunning, false}, {StatusFinalized, false}, {StatusNoPull | CallCode("MPI_Test"), true},
	} {
		if got := Settling(c.s); got != c.want {
			t.Errorf("Settling(%s) = %v, want %v", DescribeStatus(c.s), got, c.want)
		}
	}
	if KindRelease.String() != "release" {
		t.Errorf("KindRelease is %q", KindRelease)
	}
}
