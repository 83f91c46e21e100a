package main

import (
	"regexp"
	"strings"
	"testing"
)

// A C program that breaks the buffer rules is reported through the C ABI
// under --check buffers: the class MPI_ERR_BUFFER under MPI_ERRORS_RETURN,
// with the report as the error string, then an overlap that the fatal
// handler turns into the job's end. Without the check it runs to the end.
func TestCheckBuffersFromC(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/checkbuf.c")
	r := bcsrun(t, "--check", "buffers", "-n", "2", exe)
	for _, want := range []string{
		"wait: class MPI_ERR_BUFFER", // the C ABI's error string is the class name
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if want := "rank 1: MPI_Irecv: MPI_ERR_BUFFER: its receive (written) buffer"; r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "not reported 1") {
		t.Errorf("exit %d; want the job to fail with %q", r.code, want)
	}
	if t.Failed() {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	r = bcsrun(t, "-n", "2", exe)
	if r.code != 0 || strings.Contains(r.stdout, "MPI_ERR_BUFFER") || !strings.Contains(r.stdout, "not reported 1") {
		t.Fatalf("without the check: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// Buffers that run into unmapped memory (a count larger than the buffer)
// are refused at the post with MPI_ERR_BUFFER naming the buffer and the
// first unmapped address, under buffers and buffers:warn alike; before,
// the check summed them and the rank died of a Go fatal error (a fault in
// crc32) with no MPI report (MPI-Corrbench ArgError-MPISend-Count-1).
func TestCheckUnmappedBufferFromC(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/checkmap.c")
	for _, mode := range []string{"buffers", "buffers:warn"} {
		r := bcsrun(t, "--check", mode, "-n", "2", exe)
		for _, want := range []string{"send: class MPI_ERR_BUFFER", "received ok"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: stdout lacks %q", mode, want)
			}
		}
		want := "rank 1: MPI_Irecv: MPI_ERR_BUFFER: its receive (written) buffer [0x"
		if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "is not all mapped memory: nothing is mapped at 0x") ||
			strings.Contains(r.stdout, "not reported 1") || strings.Contains(r.stderr, "fatal error") {
			t.Errorf("%s: exit %d; want the job to fail with %q", mode, r.code, want)
		}
		if t.Failed() {
			t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	}
}

// A C program that writes the receive buffer of a nonblocking collective
// (MPI_Iallgather) before the runtime writes it is reported at its
// MPI_Wait, within a node and across two, naming the call and the 4 KiB
// block; without the check it runs to the end.
func TestCheckCollectiveFromC(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/checkcoll.c")
	for _, nodes := range []string{"1", "2"} {
		r := bcsrun(t, "--check", "buffers", "-n", "2", "--nodes", nodes, exe)
		for _, want := range []string{
			"rank 0: MPI_Iallgather: MPI_ERR_BUFFER: request #",
			"(collective on communicator 0, 2097152-byte buffer): receive buffer written by the program while in flight: bytes [1060864, 1064960) (4 KiB block 259) changed between the post (slice ",
		} {
			if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "not reported 0") {
				t.Fatalf("nodes %s: exit %d; want the job to fail with %q\nstdout:\n%s\nstderr:\n%s", nodes, r.code, want, r.stdout, r.stderr)
			}
		}
	}
	r := bcsrun(t, "-n", "2", exe)
	if r.code != 0 || strings.Contains(r.stderr, "MPI_ERR_BUFFER") || !strings.Contains(r.stdout, "not reported 0") {
		t.Fatalf("without the check: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// Correct C programs run under --check buffers,flow as without it: the
// suite (every implemented call), the C pingpong and stencil examples,
// within a node and across nodes, with no finding.
func TestCheckCleanCPrograms(t *testing.T) {
	suite := compile(t, "bcscc", "testdata/suite.c")
	pingpong := compile(t, "bcscc", "../examples/c/pingpong.c", "-O2")
	stencil := compile(t, "bcscc", "../examples/c/stencil.c", "-O2", "-lm")
	for _, nodes := range []string{"1", "2"} {
		r := bcsrun(t, "--check", "buffers,flow", "-n", "4", "--nodes", nodes, suite)
		if strings.Contains(r.stderr, "MPI_ERR_BUFFER") || strings.Contains(r.stderr, "flow check") {
			t.Fatalf("suite, nodes %s: a check report\nstderr:\n%s", nodes, r.stderr)
		}
		okRanks(t, r, "suite", 4)
		r = bcsrun(t, "--check", "buffers,flow", "-n", "2", "--nodes", nodes, pingpong, "3000000", "5")
		if r.code != 0 || !strings.Contains(r.stdout, "data verified") || strings.Contains(r.stderr, "MPI_ERR_BUFFER") {
			t.Fatalf("pingpong, nodes %s: exit %d\nstdout:\n%s\nstderr:\n%s", nodes, r.code, r.stdout, r.stderr)
		}
		r = bcsrun(t, "--check", "buffers,flow", "-n", "4", "--nodes", nodes, stencil, "20", "65536", "0.1")
		if r.code != 0 || !strings.Contains(r.stdout, "checksum ok") || strings.Contains(r.stderr, "MPI_ERR_BUFFER") {
			t.Fatalf("stencil, nodes %s: exit %d\nstdout:\n%s\nstderr:\n%s", nodes, r.code, r.stdout, r.stderr)
		}
	}
}

// Under --check flow alone a C program's large messages within a node move
// in spans (one copy by the receiving rank across slices, summed as it
// copies, compared by the agent when the span ends): pingpong's data
// arrive intact, with no report, and spans carried them.
func TestCheckFlowAloneFromC(t *testing.T) {
	t.Setenv("BCS_BYTES_PER_SLICE_MAX", "1048576") // a 3 MB message is a span
	pingpong := compile(t, "bcscc", "../examples/c/pingpong.c", "-O2")
	r := bcsrun(t, "-v", "--check", "flow", "-n", "2", pingpong, "3000000", "5")
	if r.code != 0 || !strings.Contains(r.stdout, "data verified") || strings.Contains(r.stderr, "flow check") {
		t.Fatalf("exit %d, want 0, data verified and no report\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	m := regexp.MustCompile(`; (\d+) spans`).FindStringSubmatch(r.stderr)
	if m == nil || m[1] == "0" {
		t.Errorf("no span under flow alone\n%s", r.stderr)
	}
}
