package mpiapi

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Environment variables that carry the MDS selection from bcsrun to ranks.
//
// Deprecated: the launcher↔rank contract is package internal/jobenv. EnvMDSDir
// is the rank's job directory, since renamed BCS_MDS_JOB_DIR (BCS_MDS_DIR is
// bcsrun's configuration key for the root of all jobs' directories).
const (
	EnvMDS           = jobenv.VarMDS
	EnvMDSDir        = jobenv.VarMDSJobDir
	EnvMDSRanks      = jobenv.VarMDSRanks
	EnvMDSPrimitives = jobenv.VarMDSPrimitives
	EnvMDSDigits     = jobenv.VarMDSDigits
	EnvMDSInterval   = jobenv.VarMDSInterval
	EnvMDSFileMode   = jobenv.VarMDSFileMode
)

// mmds is the rank's MMDS hook: a nil recorder costs one branch per call.
type mmds struct {
	rec      *mds.Recorder
	dir      string
	rank     int
	interval int64 // ns between periodic dumps, 0 = none
	next     int64
	signaled atomic.Bool
	// dumpMu makes the rank's dump one path: the rank's goroutine and the
	// signal goroutine never write at once, and the one that exits holds it.
	dumpMu sync.Mutex
	// quiet > 0: a layer above is inside a call of its own (BeginCall) or
	// its progress (Quiet), and the runtime calls it makes are not recorded.
	quiet int
}

func (m *mmds) init(rank int, env jobenv.MDS) error {
	mode, err := mds.ParseMode(env.Mode)
	if err != nil || !mode.Main {
		return err
	}
	ranks, err := mds.ParseSet(env.Ranks)
	if err != nil || !ranks.Has(rank) {
		return err
	}
	cfg := mds.DefaultConfig()
	if cfg.Primitives, err = mds.ParsePrimitives(env.Primitives); err != nil {
		return err
	}
	if d := env.Digits; d != 0 {
		if d < 1 || d > 5 {
			return fmt.Errorf("%s=%d, want 1 .. 5", jobenv.VarMDSDigits, d)
		}
		cfg.Digits = d
	}
	m.interval = int64(env.Interval)
	if env.FileMode != 0 {
		cfg.FileMode = env.FileMode
	}
	m.dir = env.JobDir
	if m.dir == "" {
		m.dir = "."
	}
	m.rank = rank
	m.rec = mds.New(cfg)
	m.next = m.interval
	// SIGTERM (bcsrun aborting the job, or a user) dumps before the rank dies.
	// The rank's own goroutine dumps if it notices within 200 ms (it checks
	// while blocked and after every call); otherwise this goroutine dumps a
	// best-effort snapshot itself.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() {
		<-sig
		m.signaled.Store(true)
		if self != nil {
			wakeSelf()
		}
		time.Sleep(200 * time.Millisecond)
		m.dumpMu.Lock() // held until the exit: no other dump starts
		m.dumpLocked()
		os.Exit(128 + int(syscall.SIGTERM))
	}()
	return nil
}

func (m *mmds) begin(blocking bool) int64 {
	if m.rec == nil || m.quiet > 0 {
		return 0
	}
	return m.rec.Begin(blocking)
}

func (m *mmds) end(p mds.Prim, t0 int64, bytes int64, blocking bool) {
	if m.rec == nil || m.quiet > 0 {
		return
	}
	m.rec.End(p, t0, bytes, blocking)
	if m.interval > 0 && t0 > m.next {
		m.dump()
		m.next = t0 + m.interval
	}
	m.checkSignal()
}

// BeginCall and EndCall record a call of a layer built on this package
// (the C library's one-sided calls: MPI_Put, MPI_Win_fence, ...) as
// primitive prim, entered at t0 and moving bytes; the runtime calls it
// makes in between (its messages, barriers and waits) are not recorded.
// Every BeginCall needs its EndCall; calls nest (only the outermost is
// recorded). Without MPI_Init, or with the MMDS off, they do nothing.
func BeginCall(blocking bool) int64 {
	if self == nil {
		return 0
	}
	t0 := self.mmds.begin(blocking)
	self.mmds.quiet++
	return t0
}

// EndCall ends the call BeginCall began (see BeginCall).
func EndCall(prim mds.Prim, t0, bytes int64, blocking bool) {
	if self == nil || self.mmds.quiet == 0 {
		return
	}
	self.mmds.quiet--
	self.mmds.end(prim, t0, bytes, blocking)
}

// Quiet(true) stops recording the runtime calls this process makes until
// the matching Quiet(false): for a layer's own progress (the one-sided
// target side), which is no call of the program's. Calls nest.
func Quiet(on bool) {
	switch {
	case self == nil:
	case on:
		self.mmds.quiet++
	case self.mmds.quiet > 0:
		self.mmds.quiet--
	}
}

// checkSignal dumps and exits if SIGTERM arrived (called on the rank's goroutine).
func (m *mmds) checkSignal() {
	if m.rec != nil && m.signaled.Load() {
		m.dumpMu.Lock() // held until the exit: no other dump starts
		m.dumpLocked()
		os.Exit(128 + int(syscall.SIGTERM))
	}
}

func (m *mmds) finish() {
	if m.rec == nil {
		return
	}
	m.rec.Close()
	m.dump()
}

func (m *mmds) dump() {
	if m.rec == nil {
		return
	}
	m.dumpMu.Lock()
	defer m.dumpMu.Unlock()
	m.dumpLocked()
}

// dumpLocked writes the rank's files; dumpMu is held.
func (m *mmds) dumpLocked() {
	if err := m.rec.Dump(m.dir, m.rank); err != nil {
		fmt.Fprintf(os.Stderr, "bcsmpi: rank %d: MMDS dump to %s: %v\n", m.rank, m.dir, err)
	}
}

// wakeSelf wakes the rank's goroutine if it sleeps in a blocking call.
func wakeSelf() {
	atomic.AddUint32(self.blk.Wake(), 1)
	unix.FutexWake(self.blk.Wake(), 1)
}
