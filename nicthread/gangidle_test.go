package nicthread

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/strobe"
	"github.com/bcsmpi/bcsmpi/transport"
)

// watchSeen is node 0's link: it closes on the first read of the master's
// frames by the endpoint's watcher (a read with no bound of its own), that
// is, once TX has waited waitWatch for another node's data.
type watchSeen struct {
	transport.Link
	once sync.Once
	on   chan struct{}
}

func (w *watchSeen) Recv(from int, m *proto.Msg, timeout time.Duration) error {
	if from == 0 && timeout == watchForever {
		w.once.Do(func() { close(w.on) })
	}
	return w.Link.Recv(from, m, timeout)
}

// txDoneLate is node 1's link: in the slice that matches rank 1's send with
// rank 0's receive it passes the master's MsgTX on only once node 0's
// watcher reads (watchSeen: node 0 has waited in TX for this node's data),
// noting how many events node 0 had then (from), then holds its own TXDone
// of that slice back until release is closed: node 0 has its data, ends
// its TX and waits idle for the master's next frame while the master
// waits for node 1.
type txDoneLate struct {
	transport.Link
	j        atomic.Pointer[txJob]
	watching chan struct{}
	release  chan struct{}
	seen     int           // descriptors exchanged so far (Recv's goroutine only)
	k        atomic.Uint64 // 1 + that slice; 0 before
	from     atomic.Int64  // node 0's events when the MsgTX was passed on; -1 before
}

func (d *txDoneLate) Recv(from int, m *proto.Msg, timeout time.Duration) error {
	if err := d.Link.Recv(from, m, timeout); err != nil {
		return err
	}
	if from == 0 && m.Type == proto.MsgMSM {
		d.seen += len(m.Descs)
	}
	if from != 0 || m.Type != proto.MsgTX || d.seen < 2 || !d.k.CompareAndSwap(0, uint64(m.Slice)+1) {
		return nil
	}
	select {
	case <-d.watching:
		d.from.Store(int64(len(d.j.Load().node0())))
	case <-d.Link.Done():
		*m = proto.Msg{Type: proto.MsgStop}
	}
	return nil
}

func (d *txDoneLate) Send(to int, m *proto.Msg) error {
	if to == 0 && m.Type == proto.MsgTXDone && uint64(m.Slice)+1 == d.k.Load() {
		select {
		case <-d.release:
		case <-d.Link.Done():
		}
	}
	return d.Link.Send(to, m)
}

// A hold that the watcher reads while Serve waits idle for the master's
// next frame is applied there, not when that frame comes. Node 0's TX
// waits for node 1's data long enough for its watcher to start; the data
// arrives, node 0 reports its TX done and waits for the next frame, the
// watcher still reading; node 1 holds back its own TX report, so the gang
// holds the job. Node 0 stops its ranks (a stop outside TX) while node 1's
// report is still held back (before, the hold was applied only with the
// next DEM, which comes after the release: its ranks kept running through
// the hold). Released, the job goes on: node 0's ranks are continued, the
// message is intact.
func TestGangHoldReachesAgentIdleAfterTX(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	watching, release := make(chan struct{}), make(chan struct{})
	late := &txDoneLate{watching: watching, release: release}
	late.from.Store(-1)
	txJobLink = func(i int, l transport.Link) transport.Link {
		if i == 0 {
			return &watchSeen{Link: l, on: watching}
		}
		late.Link = l
		return late
	}
	passed := make(chan struct{}) // node 1's txLate passes the MsgTX on at once
	close(passed)
	j := newTXJob(t, 10*time.Minute, passed)
	txJobLink = nil
	late.j.Store(j)
	defer j.close()
	stop := make(chan struct{})
	jl, err := gang.Join("late", MasterConfig{Slice: gangSlice, Nodes: 2}, j.remote, stop)
	if err != nil {
		t.Fatal(err)
	}
	j.post(t)
	stopAt := -1
	waitFor(t, "node 0 stops its ranks after its TX while node 1 holds back its TX report", func() bool {
		from := late.from.Load()
		if from < 0 {
			return false
		}
		ev := j.node0()
		if i := slices.Index(ev[from:], "stop"); i >= 0 {
			stopAt = int(from) + i
			return true
		}
		return false
	})
	if !jl.Held() {
		t.Errorf("node 0 stopped its ranks while its job is not held")
	}
	close(release)
	waitFor(t, "the released job's node 0 continues its ranks", func() bool {
		ev := j.node0()
		return len(ev)-1 > stopAt && ev[len(ev)-1] == "continue"
	})
	waitFor(t, "the receive completes", func() bool { return j.nodes[0].rank[0].Done(0) })
	if string(j.dst) != string(j.src) {
		t.Errorf("the message arrived damaged")
	}
	close(stop)
	if _, err := jl.Wait(); err != nil {
		t.Fatalf("the job: %v; want nil (stopped)", err)
	}
	if err := j.served0(t); err != nil {
		t.Fatalf("node 0: %v; want nil (stopped)", err)
	}
}
