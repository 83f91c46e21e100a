// Package jobenv is the contract between a launcher and the rank processes it
// starts: the BCS_* environment variables a rank is started with, their
// meaning and their syntax, in one place. The launcher fills an Env and adds
// Env.Environ to the rank's environment; the rank reads it back with Decode.
// Nothing else in the repository spells these names.
//
// Layer L0 (docs/design.md §4): standard library only, so that the launcher,
// the Go API (mpiapi), the C ABI and tests can all depend on it without
// depending on each other.
//
// # The variables
//
//	BCS_SHM_FD          inherited descriptor of the node's shared-memory region (> 2)  required
//	BCS_RANK            world rank, 0 .. BCS_SIZE-1                                    required
//	BCS_SIZE            ranks in the job, >= 1                                         required
//	BCS_LOCAL_RANK      the rank's block in the node's region, >= 0                    required
//	BCS_NODE            the rank's logical node, >= 0                                  required
//	BCS_JOB             the job's id (also what tests look for in /proc/PID/environ)   required
//	BCS_TIMESLICE_NS    the strobe period in nanoseconds, > 0                          required
//	BCS_SPIN_NS         a blocked call's busy-wait before it sleeps, ns, >= 0          required
//	BCS_LEAK_CHECK      end-of-job leak report: warn, error or off                     (empty: warn)
//	BCS_REPORT_FD       inherited pipe for the rank's part of the leak report (> 2)    (empty: none)
//	BCS_MDS             the MDS selection, as the mds key (none, main, elan, ...)      (empty: none)
//	BCS_MDS_JOB_DIR     the job's MDS directory, where the rank writes its MMDS files  (empty: .)
//	BCS_MDS_RANKS       ranks that record MMDS (mds_ranks syntax)                      (empty: all)
//	BCS_MDS_PRIMITIVES  primitives with distributions (mds_primitives syntax)          (empty: default)
//	BCS_MDS_DIGITS      distribution resolution, >= 1                                  (empty: default)
//	BCS_MDS_INTERVAL    periodic MMDS dump interval, a Go duration >= 0                (empty: none)
//	BCS_MDS_FILE_MODE   octal permissions of the MMDS files, owner read+write          (empty: default)
//	BCS_CHECK           the opt-in checks, as the check key (package internal/check)   (empty: none)
//	BCS_RECORD          1: log the rank's replay records into its log ring (--record)  (empty: not recorded)
//	BCS_REPLAY          absolute path of the recording the rank replays (--replay)     (empty: no replay)
//
// BCS_RECORD and BCS_REPLAY exclude each other (package internal/replay
// describes both).
//
// Several of these are also configuration keys of bcsrun (BCS_MDS,
// BCS_MDS_RANKS, BCS_LEAK_CHECK, …: see package configs): the launcher reads
// them as configuration and hands each rank the validated value under the
// same name. The rank's MDS directory has its own name, BCS_MDS_JOB_DIR,
// because BCS_MDS_DIR is the configuration key for the root under which
// bcsrun makes one directory per job.
//
// Environ lists every launcher variable, with an empty value for an unset
// optional one: appended after the launcher's own environment (exec.Cmd keeps
// the last of duplicate names), it leaves the rank nothing of the launcher's
// environment under these names. Decode counts an empty value as unset.
//
// Variables set by a user, not by a launcher, that the runtime also reads:
// BCS_ERRORS (ranks), BCS_CPUPROFILE and BCS_FAULT_STALL_NODE (bcsrun),
// BCS_GANG (bcsrun: attach to the user's bcsd or not) and BCS_RUNTIME_DIR
// (bcsrun and bcsd: where the user's bcsd socket is; package internal/gangd).
// Names lists all of them, for configs' warning about unknown BCS_* names.
//
// Values are plain data, safe to copy; the package has no state.
package jobenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Variables a launcher sets for each rank (see the package comment).
const (
	VarShmFD     = "BCS_SHM_FD"
	VarRank      = "BCS_RANK"
	VarSize      = "BCS_SIZE"
	VarLocalRank = "BCS_LOCAL_RANK"
	VarNode      = "BCS_NODE"
	VarJob       = "BCS_JOB"
	VarTimeslice = "BCS_TIMESLICE_NS"
	VarSpin      = "BCS_SPIN_NS"
	VarLeakCheck = "BCS_LEAK_CHECK"
	VarReportFD  = "BCS_REPORT_FD"

	VarMDS           = "BCS_MDS"
	VarMDSJobDir     = "BCS_MDS_JOB_DIR"
	VarMDSRanks      = "BCS_MDS_RANKS"
	VarMDSPrimitives = "BCS_MDS_PRIMITIVES"
	VarMDSDigits     = "BCS_MDS_DIGITS"
	VarMDSInterval   = "BCS_MDS_INTERVAL"
	VarMDSFileMode   = "BCS_MDS_FILE_MODE"

	VarCheck  = "BCS_CHECK"
	VarRecord = "BCS_RECORD"
	VarReplay = "BCS_REPLAY"
)

// Variables a user sets that the runtime reads; no launcher sets them.
const (
	// VarErrors = "return" makes a rank start with MPI_ERRORS_RETURN.
	VarErrors = "BCS_ERRORS"
	// VarCPUProfile names a file for a CPU profile of bcsrun's runtime.
	VarCPUProfile = "BCS_CPUPROFILE"
	// VarFaultStallNode = "node@slice" makes that node's agent stop answering
	// the master from that slice on (fault injection for tests). Only a
	// bcsrun or bcsd built with -tags bcsfault reads it (internal/launch);
	// a normal build ignores it.
	VarFaultStallNode = "BCS_FAULT_STALL_NODE"
	// VarGang is bcsrun's --gang: auto (attach to this user's bcsd when one
	// is up), on (attach, or fail) or off (run the job in bcsrun itself).
	VarGang = "BCS_GANG"
	// VarRuntimeDir is the directory of this user's bcsd socket and lock,
	// overriding $XDG_RUNTIME_DIR/bcsmpi and /tmp/bcsmpi-<uid>.
	VarRuntimeDir = "BCS_RUNTIME_DIR"
)

// launcherVars is the order in which Environ writes the launcher's
// variables and Decode reports the first missing one: a program started
// without a launcher hears about BCS_SHM_FD.
var launcherVars = []string{
	VarShmFD, VarRank, VarSize, VarLocalRank, VarNode, VarJob, VarTimeslice, VarSpin, VarLeakCheck, VarReportFD,
	VarMDS, VarMDSJobDir, VarMDSRanks, VarMDSPrimitives, VarMDSDigits, VarMDSInterval, VarMDSFileMode,
	VarCheck,
	VarRecord, VarReplay,
}

// Names returns every BCS_* variable of the contract: those a launcher sets
// and those a user sets for the runtime. The slice is the caller's.
func Names() []string {
	return append(append([]string(nil), launcherVars...), VarErrors, VarCPUProfile, VarFaultStallNode, VarGang, VarRuntimeDir)
}

// Leak check modes (BCS_LEAK_CHECK).
const (
	LeakWarn  = "warn"
	LeakError = "error"
	LeakOff   = "off"
)

// Env is what a launcher tells one rank.
type Env struct {
	ShmFD     int           // inherited descriptor of the node's region, > 2
	Rank      int           // world rank, 0 .. Size-1
	Size      int           // ranks in the job, >= 1
	LocalRank int           // the rank's block in its node's region, >= 0
	Node      int           // the rank's logical node, >= 0
	Job       string        // the job's id, not empty
	Timeslice time.Duration // strobe period, > 0
	Spin      time.Duration // busy-wait of a blocked call before it sleeps, >= 0
	LeakCheck string        // LeakWarn, LeakError or LeakOff; "" reads as LeakWarn
	ReportFD  int           // inherited leak-report pipe, > 2; 0: none
	MDS       MDS
	Check     string // the check selection, internal/check syntax (parsed by the rank); "": none
	Record    bool   // log replay records (bcsrun --record)
	Replay    string // the recording to replay, an absolute directory path; "": none
}

// MDS is the rank's part of the monitoring selection. Mode, Ranks and
// Primitives are carried as text in the syntax of package mds, which
// parses them (this package stays below it).
type MDS struct {
	Mode       string        // "none", "main", "elan", "main,elan", "all"; "" reads as none
	JobDir     string        // the job's MDS directory; "": the current directory
	Ranks      string        // which ranks record, mds.ParseSet syntax; "": all
	Primitives string        // mds.ParsePrimitives syntax; "": the default
	Digits     int           // distribution resolution, >= 1; 0: the default
	Interval   time.Duration // periodic dump interval, >= 0; 0: none
	FileMode   os.FileMode   // permissions of the dump files, owner rw, <= 0777; 0: the default
}

// ErrNotSet is matched (errors.Is) by the Error for a required variable that
// is unset or empty.
var ErrNotSet = errors.New("jobenv: variable not set")

// Error is a variable with a bad value, or a required one missing. Its
// message names the variable, the value and what would be valid.
type Error struct {
	Name  string // the variable
	Value string // its value ("" when unset)
	Want  string // what would be valid
}

func (e *Error) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s is not set: start the program with bcsrun", e.Name)
	}
	return fmt.Sprintf("%s=%q, want %s", e.Name, e.Value, e.Want)
}

// Is matches ErrNotSet when the variable was unset.
func (e *Error) Is(target error) bool { return target == ErrNotSet && e.Value == "" }

// Environ encodes e as NAME=value entries, one for every launcher variable
// (empty for an unset optional one), to append to a rank's environment.
func (e Env) Environ() []string {
	opt := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	vals := map[string]string{
		VarShmFD:     strconv.Itoa(e.ShmFD),
		VarRank:      strconv.Itoa(e.Rank),
		VarSize:      strconv.Itoa(e.Size),
		VarLocalRank: strconv.Itoa(e.LocalRank),
		VarNode:      strconv.Itoa(e.Node),
		VarJob:       e.Job,
		VarTimeslice: strconv.FormatInt(e.Timeslice.Nanoseconds(), 10),
		VarSpin:      strconv.FormatInt(e.Spin.Nanoseconds(), 10),
		VarLeakCheck: e.LeakCheck,
		VarReportFD:  opt(e.ReportFD),

		VarMDS:           e.MDS.Mode,
		VarMDSJobDir:     e.MDS.JobDir,
		VarMDSRanks:      e.MDS.Ranks,
		VarMDSPrimitives: e.MDS.Primitives,
		VarMDSDigits:     opt(e.MDS.Digits),
		VarCheck:         e.Check,
	}
	if e.Record {
		vals[VarRecord] = "1"
	}
	vals[VarReplay] = e.Replay
	if e.MDS.Interval != 0 {
		vals[VarMDSInterval] = e.MDS.Interval.String()
	}
	if e.MDS.FileMode != 0 {
		vals[VarMDSFileMode] = fmt.Sprintf("%#o", uint32(e.MDS.FileMode))
	}
	out := make([]string, 0, len(launcherVars))
	for _, name := range launcherVars {
		out = append(out, name+"="+vals[name])
	}
	return out
}

// Decode reads a rank's Env through getenv (os.Getenv, or a map in tests).
// An empty value counts as unset. The first bad or missing variable is
// returned as an *Error naming it, its value and what would be valid.
func Decode(getenv func(string) string) (Env, error) {
	var e Env
	d := decoder{getenv: getenv}
	e.ShmFD = d.int(VarShmFD, true, 3, "a descriptor above 2 inherited from the launcher")
	e.Rank = d.int(VarRank, true, 0, "a rank >= 0")
	e.Size = d.int(VarSize, true, 1, "a number of ranks >= 1")
	e.LocalRank = d.int(VarLocalRank, true, 0, "a block index >= 0")
	e.Node = d.int(VarNode, true, 0, "a node >= 0")
	e.Job = d.str(VarJob, true)
	e.Timeslice = time.Duration(d.int(VarTimeslice, true, 1, "nanoseconds > 0"))
	e.Spin = time.Duration(d.int(VarSpin, true, 0, "nanoseconds >= 0"))
	switch e.LeakCheck = d.str(VarLeakCheck, false); e.LeakCheck {
	case "", LeakWarn, LeakError, LeakOff:
	default:
		d.fail(VarLeakCheck, e.LeakCheck, `"warn", "error" or "off"`)
	}
	e.ReportFD = d.int(VarReportFD, false, 3, "a descriptor above 2 inherited from the launcher, or empty")

	e.Check = d.str(VarCheck, false)
	e.MDS.Mode = d.str(VarMDS, false)
	e.MDS.JobDir = d.str(VarMDSJobDir, false)
	e.MDS.Ranks = d.str(VarMDSRanks, false)
	e.MDS.Primitives = d.str(VarMDSPrimitives, false)
	e.MDS.Digits = d.int(VarMDSDigits, false, 1, "a number of significant digits >= 1, or empty")
	if v := d.str(VarMDSInterval, false); v != "" {
		iv, err := time.ParseDuration(v)
		if err != nil || iv < 0 {
			d.fail(VarMDSInterval, v, "a duration >= 0 such as 10s, or empty")
		}
		e.MDS.Interval = iv
	}
	if v := d.str(VarMDSFileMode, false); v != "" {
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil || m > 0o777 || m&0o600 != 0o600 {
			d.fail(VarMDSFileMode, v, "octal permissions 0600 .. 0777 that let the owner read and write, or empty")
		}
		e.MDS.FileMode = os.FileMode(m)
	}
	switch v := d.str(VarRecord, false); v {
	case "":
	case "1":
		e.Record = true
	default:
		d.fail(VarRecord, v, `"1" or empty`)
	}
	if e.Replay = d.str(VarReplay, false); e.Replay != "" && !filepath.IsAbs(e.Replay) {
		d.fail(VarReplay, e.Replay, "an absolute directory path (of a recording), or empty")
	}
	if d.err == nil && e.Record && e.Replay != "" {
		d.fail(VarReplay, e.Replay, fmt.Sprintf("empty while %s=1 (a job is recorded or replayed, not both)", VarRecord))
	}
	if d.err == nil && e.Rank >= e.Size {
		d.fail(VarRank, strconv.Itoa(e.Rank), fmt.Sprintf("0 .. %d (%s=%d)", e.Size-1, VarSize, e.Size))
	}
	if d.err != nil {
		return Env{}, d.err
	}
	return e, nil
}

// decoder keeps the first error; later reads still run (and are ignored).
type decoder struct {
	getenv func(string) string
	err    *Error
}

func (d *decoder) fail(name, value, want string) {
	if d.err == nil {
		d.err = &Error{Name: name, Value: value, Want: want}
	}
}

func (d *decoder) str(name string, required bool) string {
	v := d.getenv(name)
	if v == "" && required {
		d.fail(name, "", "")
	}
	return v
}

// int reads a decimal integer >= min; unset (optional) reads as 0.
func (d *decoder) int(name string, required bool, min int, want string) int {
	v := d.str(name, required)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		d.fail(name, v, want)
		return 0
	}
	return n
}
