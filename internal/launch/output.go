package launch

import (
	"bufio"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// lineHoldMax is the longest part of a tagged line held in memory: a longer
// line is written in pieces of this size while the output lock is held, so
// that no other rank's line lands inside it.
const lineHoldMax = 16 << 20

// output forwards the ranks' stdout and stderr. A destination that is a file
// is given to the ranks as it is (unless lines are tagged); any other
// destination is fed through a pipe that Run reads, so that a rank's exit
// never waits for a copy to finish (exec.Cmd would wait for every holder of
// its pipe, grandchildren included). Not safe for concurrent use except for
// the reader goroutines it starts itself.
type output struct {
	tag   bool
	host  string     // with tag, across hosts: lines read "[rank@host] "
	mu    sync.Mutex // one line (or chunk) at a time on the destinations
	wg    sync.WaitGroup
	pipes []pipeEnd
}

type pipeEnd struct {
	rank int
	rd   *os.File
	done chan struct{}
}

// writer returns the file to give rank as a descriptor for dst: dst itself,
// or the write end of a pipe, which the caller closes once the rank has
// started.
func (o *output) writer(rank int, dst io.Writer) (*os.File, error) {
	if f, ok := dst.(*os.File); ok && !o.tag {
		return f, nil
	}
	// Our own pipes, not cmd.StdoutPipe: Wait closes those as soon as the
	// process exits, possibly before the reader has drained them.
	rd, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := pipeEnd{rank: rank, rd: rd, done: make(chan struct{})}
	o.pipes = append(o.pipes, p)
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer close(p.done)
		defer rd.Close() // ours: released at the end of the pipe (drain may close it first)
		if o.tag {
			o.forwardLines(rank, rd, dst)
		} else {
			o.forward(rd, dst)
		}
	}()
	return w, nil
}

// forward copies chunks as they come.
func (o *output) forward(rd io.Reader, dst io.Writer) {
	buf := make([]byte, 64<<10)
	for {
		n, err := rd.Read(buf)
		if n > 0 {
			o.mu.Lock()
			dst.Write(buf[:n])
			o.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// forwardLines writes every line of rd to dst prefixed with "[rank] " (or
// "[rank@host] " when o.host is set), each
// line whole, of any length; a last line without a newline gets one.
func (o *output) forwardLines(rank int, rd io.Reader, dst io.Writer) {
	br := bufio.NewReaderSize(rd, 64<<10)
	label := strconv.Itoa(rank)
	if o.host != "" {
		label += "@" + o.host
	}
	prefix := []byte("[" + label + "] ")
	line := slices.Clone(prefix)
	held := false // mu is held: part of the current line is written already
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		end := len(frag) > 0 && frag[len(frag)-1] == '\n'
		last := err != nil && !errors.Is(err, bufio.ErrBufferFull)
		if last && !end && (held || len(line) > len(prefix)) {
			line, end = append(line, '\n'), true
		}
		if end || len(line) >= lineHoldMax {
			if !held {
				o.mu.Lock()
				held = true
			}
			dst.Write(line)
			if end {
				o.mu.Unlock()
				held = false
				if cap(line) > 1<<20 {
					line = nil // do not keep one long line's buffer for the job's life
				}
				line = append(line[:0], prefix...)
			} else {
				line = line[:0]
			}
		}
		if last {
			if held {
				o.mu.Unlock()
			}
			return
		}
	}
}

// drain waits for the readers to reach the end of their pipes, at most d,
// then closes the pipes still open and returns the ranks they belonged to.
// Call it when every process of the job has ended: only a process outside the
// job can still hold a pipe then.
func (o *output) drain(d time.Duration) []int {
	all := make(chan struct{})
	go func() { o.wg.Wait(); close(all) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-all:
		return nil
	case <-t.C:
	}
	var held []int
	for _, p := range o.pipes {
		select {
		case <-p.done:
		default:
			held = append(held, p.rank)
			p.rd.Close() // wakes the reader with an error
		}
	}
	<-all
	return slices.Compact(held)
}
