package nicthread

import (
	"runtime"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// A job's worker is its master thread: with the gang's FIFO on it runs
// SCHED_FIFO where this process may have it (probed on a thread of the
// test's own), and its stats say so.
func TestGangWorkerGetsFIFO(t *testing.T) {
	probe := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ok := unix.SetFIFO(10) == nil
		if ok {
			unix.SetNormal()
		}
		probe <- ok
	}()
	allowed := <-probe
	gang, err := NewGang(GangConfig{Slice: gangSlice, FIFO: true, Matrix: strobe.GangConfig{MPL: 1, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	j := newTCPJob(t, time.Minute, nil)
	defer j.close()
	// OnSlice runs on the worker, locked to its thread: the thread's policy.
	var policies []bool
	onSlice := func(*strobe.SliceRecord) {
		fifo, err := unix.IsFIFO()
		if err != nil {
			t.Errorf("sched_getattr: %v", err)
			return
		}
		policies = append(policies, fifo)
	}
	m, err := gang.Join("remote", MasterConfig{Slice: gangSlice, Nodes: 2, MaxSlices: 5, OnSlice: onSlice}, j.remote, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait()
	if err != nil || st.Slices != 5 {
		t.Fatalf("the job: %d slices, %v; want 5, nil", st.Slices, err)
	}
	for i, fifo := range policies {
		if fifo != allowed {
			t.Errorf("slice %d: the worker's thread has SCHED_FIFO %v; want %v", i, fifo, allowed)
		}
	}
	if len(policies) != 5 {
		t.Errorf("OnSlice ran %d times, want 5", len(policies))
	}
	if st.FIFO != allowed {
		t.Errorf("the job's master (its worker) SCHED_FIFO = %v; this process may have it: %v", st.FIFO, allowed)
	}
	t.Logf("SCHED_FIFO allowed here: %v", allowed)
}
