package jobenv

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// lookup turns NAME=value entries into a getenv; a later entry wins, as in
// exec.Cmd's environment.
func lookup(env []string) func(string) string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

func full() Env {
	return Env{ShmFD: 3, Rank: 2, Size: 4, LocalRank: 0, Node: 1, Job: "1234-abcd", Timeslice: 500 * time.Microsecond,
		Spin: 20 * time.Microsecond, LeakCheck: LeakError, ReportFD: 4,
		MDS: MDS{Mode: "main,elan", JobDir: "/tmp/bcs-mds/1234-abcd", Ranks: "0-1,3", Primitives: "MPI_Send,MPI_Recv",
			Digits: 3, Interval: 10 * time.Second, FileMode: 0o640}}
}

func TestRoundTrip(t *testing.T) {
	minimal := Env{ShmFD: 3, Size: 1, Job: "j", Timeslice: time.Millisecond}
	recorded, replayed := minimal, minimal
	recorded.Record, replayed.Replay = true, "/tmp/rec"
	for _, e := range []Env{full(), minimal, recorded, replayed} {
		env := e.Environ()
		got, err := Decode(lookup(env))
		if err != nil {
			t.Fatalf("Decode(%q): %v", env, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("Decode(Environ(e)) = %+v, want %+v", got, e)
		}
	}
}

// Environ names every launcher variable, so that what the launcher's own
// environment holds under these names (BCS_MDS_RANKS from the user, say)
// never reaches a rank for which the launcher left the field empty.
func TestEnvironOverridesInherited(t *testing.T) {
	e := Env{ShmFD: 3, Size: 1, Job: "j", Timeslice: time.Millisecond, MDS: MDS{Mode: "none"}}
	inherited := []string{VarMDSRanks + "=7", VarMDSDigits + "=9", VarReportFD + "=1", VarMDSJobDir + "=/elsewhere"}
	got, err := Decode(lookup(append(inherited, e.Environ()...)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Errorf("got %+v, want %+v (inherited values leaked through)", got, e)
	}
	var names []string
	for _, kv := range e.Environ() {
		names = append(names, strings.SplitN(kv, "=", 2)[0])
	}
	if !slices.Equal(names, launcherVars) {
		t.Errorf("Environ names %v, want every launcher variable %v", names, launcherVars)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		set     map[string]string // changes to full().Environ(); "" unsets
		want    string
		notSet  bool
		varName string
	}{
		{map[string]string{VarShmFD: ""}, "BCS_SHM_FD is not set: start the program with bcsrun", true, VarShmFD},
		{map[string]string{VarJob: ""}, "BCS_JOB is not set", true, VarJob},
		{map[string]string{VarShmFD: "1"}, `BCS_SHM_FD="1", want a descriptor above 2`, false, VarShmFD},
		{map[string]string{VarRank: "x"}, `BCS_RANK="x", want a rank >= 0`, false, VarRank},
		{map[string]string{VarRank: "4"}, `BCS_RANK="4", want 0 .. 3 (BCS_SIZE=4)`, false, VarRank},
		{map[string]string{VarSize: "0"}, `BCS_SIZE="0", want a number of ranks >= 1`, false, VarSize},
		{map[string]string{VarLocalRank: "-1"}, `BCS_LOCAL_RANK="-1"`, false, VarLocalRank},
		{map[string]string{VarTimeslice: "500us"}, `BCS_TIMESLICE_NS="500us", want nanoseconds > 0`, false, VarTimeslice},
		{map[string]string{VarSpin: "-5"}, `BCS_SPIN_NS="-5", want nanoseconds >= 0`, false, VarSpin},
		{map[string]string{VarLeakCheck: "strict"}, `BCS_LEAK_CHECK="strict", want "warn", "error" or "off"`, false, VarLeakCheck},
		{map[string]string{VarReportFD: "2"}, `BCS_REPORT_FD="2", want a descriptor above 2`, false, VarReportFD},
		{map[string]string{VarMDSDigits: "0"}, `BCS_MDS_DIGITS="0", want a number of significant digits >= 1`, false, VarMDSDigits},
		{map[string]string{VarMDSInterval: "10"}, `BCS_MDS_INTERVAL="10", want a duration >= 0`, false, VarMDSInterval},
		{map[string]string{VarMDSInterval: "-1s"}, `BCS_MDS_INTERVAL="-1s"`, false, VarMDSInterval},
		{map[string]string{VarMDSFileMode: "0400"}, `BCS_MDS_FILE_MODE="0400", want octal permissions 0600 .. 0777`, false, VarMDSFileMode},
		{map[string]string{VarMDSFileMode: "0689"}, `BCS_MDS_FILE_MODE="0689"`, false, VarMDSFileMode},
		{map[string]string{VarRecord: "yes"}, `BCS_RECORD="yes", want "1" or empty`, false, VarRecord},
		{map[string]string{VarReplay: "rec"}, `BCS_REPLAY="rec", want an absolute directory path`, false, VarReplay},
		{map[string]string{VarRecord: "1", VarReplay: "/tmp/rec"}, `BCS_REPLAY="/tmp/rec", want empty while BCS_RECORD=1`, false, VarReplay},
		// The first bad variable, in the contract's order, is the one named.
		{map[string]string{VarSpin: "x", VarRank: "y"}, `BCS_RANK="y"`, false, VarRank},
	} {
		env := full().Environ()
		for k, v := range c.set {
			env = append(env, k+"="+v)
		}
		_, err := Decode(lookup(env))
		if err == nil {
			t.Errorf("%v: no error, want %q", c.set, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %q, want it to contain %q", c.set, err, c.want)
		}
		var je *Error
		if !errors.As(err, &je) || je.Name != c.varName {
			t.Errorf("%v: error %#v, want an *Error naming %s", c.set, err, c.varName)
		}
		if errors.Is(err, ErrNotSet) != c.notSet {
			t.Errorf("%v: errors.Is(err, ErrNotSet) = %v, want %v", c.set, !c.notSet, c.notSet)
		}
	}
}

func TestNames(t *testing.T) {
	names := Names()
	seen := map[string]bool{}
	for _, n := range names {
		if !strings.HasPrefix(n, "BCS_") || seen[n] {
			t.Errorf("Names() has %q: want distinct BCS_* names", n)
		}
		seen[n] = true
	}
	for _, n := range []string{VarMDSJobDir, VarErrors, VarFaultStallNode, VarCPUProfile, VarShmFD, VarGang, VarRuntimeDir} {
		if !seen[n] {
			t.Errorf("Names() lacks %s", n)
		}
	}
	if seen["BCS_MDS_DIR"] {
		t.Errorf("Names() has BCS_MDS_DIR, the configuration key; a rank's directory is %s", VarMDSJobDir)
	}
	names[0] = "changed"
	if Names()[0] == "changed" {
		t.Error("Names() shares its slice with the caller")
	}
}

// FuzzDecode: any environment decodes to an error or to an Env that encodes
// back to itself; nothing panics.
func FuzzDecode(f *testing.F) {
	f.Add(strings.Join(full().Environ(), "\n"))
	f.Add("BCS_SHM_FD=3\nBCS_SIZE=1\nBCS_RANK=0")
	f.Add("BCS_SHM_FD=99999999999999999999999")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Decode(lookup(strings.Split(s, "\n")))
		if err != nil {
			if je := (*Error)(nil); !errors.As(err, &je) || je.Name == "" {
				t.Fatalf("Decode error %#v is no *Error naming a variable", err)
			}
			return
		}
		again, err := Decode(lookup(e.Environ()))
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("Decode(Environ(%+v)) = %+v, %v", e, again, err)
		}
	})
}
