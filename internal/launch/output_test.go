package launch

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestForwardLines(t *testing.T) {
	long := strings.Repeat("x", lineHoldMax+lineHoldMax/2) // written in pieces under the lock
	cases := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"lines", "a\nbc\n", "[3] a\n[3] bc\n"},
		{"empty line", "\n", "[3] \n"},
		{"no final newline", "a\nb", "[3] a\n[3] b\n"},
		{"2 MiB line", strings.Repeat("y", 2<<20) + "\nz\n", "[3] " + strings.Repeat("y", 2<<20) + "\n[3] z\n"},
		{"line longer than lineHoldMax", long + "\nend", "[3] " + long + "\n[3] end\n"},
	}
	for _, c := range cases {
		for _, r := range []struct {
			name string
			rd   func(string) io.Reader
		}{{"whole", func(s string) io.Reader { return strings.NewReader(s) }}, {"bytewise", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }}} {
			if r.name == "bytewise" && len(c.in) > 1<<20 {
				continue
			}
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				var o output
				var dst bytes.Buffer
				o.forwardLines(3, r.rd(c.in), &dst)
				if dst.String() != c.want {
					t.Fatalf("got %d bytes %.60q, want %d bytes %.60q", dst.Len(), dst.String(), len(c.want), c.want)
				}
				if !o.mu.TryLock() {
					t.Fatal("output lock still held")
				}
			})
			if c.name == "lines" && r.name == "whole" {
				t.Run("with host", func(t *testing.T) {
					o := output{host: "h2"}
					var dst bytes.Buffer
					o.forwardLines(3, r.rd(c.in), &dst)
					if want := "[3@h2] a\n[3@h2] bc\n"; dst.String() != want {
						t.Fatalf("got %q, want %q", dst.String(), want)
					}
				})
			}
		}
	}
}

// TestDrainStopsAtHeldPipes: a pipe whose write end is still open (as held by
// a process outside the job) is closed by drain, and named.
func TestDrainStopsAtHeldPipes(t *testing.T) {
	o := &output{tag: true}
	dst := &notifyingWriter{want: "[1] held\n", seen: make(chan struct{})}
	w0, err := o.writer(0, dst)
	if err != nil {
		t.Fatal(err)
	}
	w1, err := o.writer(1, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	w0.Write([]byte("done\n"))
	w0.Close()
	<-o.pipes[0].done // rank 0's pipe reached its end
	w1.Write([]byte("held\n"))
	<-dst.seen // rank 1's line went through; its pipe stays open
	if held := o.drain(time.Millisecond); len(held) != 1 || held[0] != 1 {
		t.Fatalf("held = %v, want [1]", held)
	}
	if got := dst.buf.String(); got != "[0] done\n[1] held\n" {
		t.Fatalf("output %q", got)
	}
}

// notifyingWriter closes seen once want has been written (writes come from
// the output lock's holder, one at a time).
type notifyingWriter struct {
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *notifyingWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if string(p) == w.want {
		close(w.seen)
	}
	return len(p), nil
}
