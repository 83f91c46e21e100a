package configs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/spf13/pflag"
)

func load(t *testing.T, yaml string, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	dir := t.TempDir()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	Flags(fs)
	if yaml != "" {
		f := filepath.Join(dir, "bcs.yaml")
		if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"--config", f}, args...)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return Load(fs)
}

func TestExampleFileIsTheDefault(t *testing.T) {
	raw, err := os.ReadFile("bcs.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := load(t, string(raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c != Default() {
		t.Fatalf("example file differs from Default():\n%+v\n%+v", c, Default())
	}
}

func TestPrecedence(t *testing.T) {
	c, err := load(t, "timeslice: 1ms\nnodes: 2\n", map[string]string{"BCS_TIMESLICE": "300us", "BCS_NODES": "3"}, "--nodes", "4")
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeslice != 300*time.Microsecond || c.Nodes != 4 {
		t.Fatalf("timeslice %v nodes %d: want env 300us over file, flag 4 over env", c.Timeslice, c.Nodes)
	}
}

func TestFlagsAndEmptyEnv(t *testing.T) {
	c, err := load(t, "nodes: 3\n", map[string]string{"BCS_NODES": "", "BCS_RESTART": "early"}, "--tag-output", "--timeslice", "1ms")
	if err != nil {
		t.Fatal(err)
	}
	if !c.TagOutput || c.Timeslice != time.Millisecond || c.Restart != "early" || c.Nodes != 3 {
		t.Fatalf("%+v: want tag_output and timeslice from flags, restart from the environment, nodes from the file (BCS_NODES empty)", c)
	}
}

func TestDeterministicKey(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		env  map[string]string
		args []string
	}{
		{yaml: "deterministic: true\n"},
		{env: map[string]string{"BCS_DETERMINISTIC": "true"}},
		{args: []string{"--deterministic"}},
	} {
		t.Run("", func(t *testing.T) { // t.Setenv lasts for the subtest only
			c, err := load(t, tc.yaml, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Deterministic || !c.Sched().Deterministic || !c.Geometry(1).Deterministic {
				t.Fatalf("%+v: deterministic not set through to the scheduler and the region", tc)
			}
		})
	}
	if c, err := load(t, "", nil); err != nil || c.Deterministic {
		t.Fatalf("default: deterministic %v, %v; want off", c.Deterministic, err)
	}
}

func TestRejects(t *testing.T) {
	cases := []struct {
		yaml string
		env  map[string]string
		args []string
		want string
	}{
		{yaml: "timeslise: 1ms\n", want: "timeslise"},
		{args: []string{"--timeslice", "10us"}, want: "timeslice = 10µs, want 50µs .. 100ms (from --timeslice)"},
		{env: map[string]string{"BCS_RING_SLOTS": "100"}, want: "ring_slots = 100"},
		{env: map[string]string{"BCS_RESTART": "later"}, want: `restart = "later"`},
		{yaml: "bytes_per_slice_max: 10\n", want: "bytes_per_slice_max = 10"},
		{args: []string{"--nodes", "0"}, want: "nodes = 0, want 1 .. 64"},
		{args: []string{"--nodes", "65"}, want: "nodes = 65, want 1 .. 64"},
		{yaml: "nodes: 0\n", want: "nodes = 0, want 1 .. 64"},
		// strobe_spin set by the user and longer than the slice names strobe_spin.
		{yaml: "strobe_spin: 100us\n", args: []string{"--timeslice", "60us"}, want: "strobe_spin = 100µs, want 0 .. timeslice (60µs)"},
		// Negative values are printed as given, not wrapped to 2^64-1.
		{env: map[string]string{"BCS_DEADLOCK_SLICES": "-1"}, want: "deadlock_slices = -1, want 0 (off) .. 100000000 (from BCS_DEADLOCK_SLICES)"},
		{yaml: "deadlock_slices: -1\n", want: "deadlock_slices = -1, want 0 (off) .. 100000000 (in "},
		{yaml: "gang_mpl: 0\n", want: "gang_mpl = 0, want 1 .. 64 jobs (in "},
		{env: map[string]string{"BCS_GANG_QUANTUM": "0"}, want: "gang_quantum = 0, want 1 .. 1000000 slices (from BCS_GANG_QUANTUM)"},
		{yaml: "emds_slices: -5\n", want: "emds_slices = -5, want 1 .. 10000000"},
		{yaml: "bytes_per_slice_max: -1\n", want: "bytes_per_slice_max = -1, want 0 (auto) or 1024 .. 4294967296"},
		// Floats for integer keys are refused, not truncated.
		{yaml: "nodes: 2.7\n", want: "nodes = 2.7, want an integer, 1 .. 64 (in "},
		{env: map[string]string{"BCS_NODES": "2.7"}, want: `nodes = "2.7", want an integer, 1 .. 64 (from BCS_NODES)`},
		{yaml: "mds_digits: 2.0\n", want: "mds_digits = 2, want an integer, 1 .. 5"},
		// An unparsable BCS_* value names the variable and the value.
		{env: map[string]string{"BCS_TIMESLICE": "fast"}, want: `timeslice = "fast", want a duration such as 500us, 10ms or 5s (from BCS_TIMESLICE)`},
		{env: map[string]string{"BCS_FIFO": "maybe"}, want: `fifo = "maybe", want true or false (from BCS_FIFO)`},
		{env: map[string]string{"BCS_DETERMINISTIC": "sometimes"}, want: `deterministic = "sometimes", want true or false (from BCS_DETERMINISTIC)`},
		{yaml: "timeslice: 500\n", want: "timeslice = 500, want a duration with a unit"},
		{yaml: "timeslice: [1, 2]\n", want: "timeslice = [1 2], want a duration"},
		{yaml: "mds_file_mode: \"0400\"\n", want: `mds_file_mode: mds: file mode "0400", want octal permissions 0600 .. 0777`},
		{yaml: "mds_file_mode: 0600\n", want: `mds_file_mode = 384, want an octal mode in quotes, such as "0600"`},
		{yaml: "timeslise: 1ms\n", want: `unknown key "timeslise" (did you mean timeslice?)`},
		{env: map[string]string{"BCS_MDS": "mian"}, want: `mds (BCS_MDS) = "mian", want none, or a comma list of main, elan, kernel and all`},
		{yaml: "mds_kernel_btf: \"\"\n", want: "mds_kernel_btf is empty"},
		{env: map[string]string{"BCS_MDS_KERNEL_CACHE": "cache"}, want: `mds_kernel_cache = "cache", want an absolute directory, off, or empty`},
		{env: map[string]string{"BCS_MDS_RANKS": "3-1"}, want: `mds_ranks`},
		{yaml: "emds_metrics: GETTS,NCOL\n", want: `metric "NCOL" unknown`},
		{yaml: "mds_digits: 9\n", want: "mds_digits = 9, want 1 .. 5"},
		{env: map[string]string{"BCS_DEADLOCK_ACTION": "ignore"}, want: `deadlock_action = "ignore", want "abort" or "warn"`},
		{yaml: "emds_slices: 0\n", want: "emds_slices = 0"},
		{env: map[string]string{"BCS_LEAK_CHECK": "strict"}, want: `leak_check = "strict", want "warn", "error" or "off"`},
		{env: map[string]string{"BCS_SLURM_MPI": "pmix"}, want: `slurm_mpi = "pmix", want "auto", "pmi2" or "none"`},
		{env: map[string]string{"BCS_CHECK": "buffers,flwo"}, want: `check (BCS_CHECK) = "buffers,flwo", want a comma list of "buffers", "buffers:warn", "flow", "all", or "none"`},
		{yaml: "check: buffers:error\n", want: `check (BCS_CHECK) = "buffers:error", want a comma list of`},
		{env: map[string]string{"BCS_SPAN_SLICES_MAX": "1"}, want: "span_slices_max = 1, want 0 (off) or 2 .. 64 (from BCS_SPAN_SLICES_MAX)"},
		{env: map[string]string{"BCS_EAGER_MAX": "0"}, want: "eager_max = 0, want 1 .. 1048576 (from BCS_EAGER_MAX)"},
		{yaml: "eager_max: 1048577\n", want: "eager_max = 1048577, want 1 .. 1048576 (in "},
		{env: map[string]string{"BCS_ADDRESS": "10.0.0.1:80"}, want: `address = "10.0.0.1:80", want "auto", an IP address (10.0.0.5) or an interface name (eth0)`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			_, err := load(t, c.yaml, c.env, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: err = %v, want it to mention %q", c, err, c.want)
			}
		})
	}
}

// FuzzLoad: any configuration file either loads into a Config that passes
// Validate, or is refused with an error; it never panics.
func FuzzLoad(f *testing.F) {
	raw, _ := os.ReadFile("bcs.example.yaml")
	f.Add(string(raw))
	f.Add("timeslice: 250us\nnodes: 2\n")
	f.Add("timeslice: [1, 2]\n")
	f.Add("mds: main,elan\nemds_metrics: GETTS,NCOLLMSM\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, yaml string) {
		path := filepath.Join(dir, "bcs.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("fuzz", pflag.ContinueOnError)
		Flags(fs)
		if err := fs.Parse([]string{"--config", path}); err != nil {
			t.Fatal(err)
		}
		c, err := Load(fs)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("Load accepted a config that Validate refuses: %v", verr)
			}
		}
	})
}

// TestSliceDerivedDefaults: every timeslice the help allows works on its own;
// strobe_spin follows the slice unless it was set.
func TestSliceDerivedDefaults(t *testing.T) {
	for _, c := range []struct {
		args []string
		yaml string
		want time.Duration
	}{
		{args: []string{"--timeslice", "50us"}, want: 25 * time.Microsecond},
		{args: []string{"--timeslice", "60us"}, want: 30 * time.Microsecond},
		{args: []string{"--timeslice", "100ms"}, want: 100 * time.Microsecond},
		{want: 100 * time.Microsecond},
		{args: []string{"--timeslice", "60us"}, yaml: "strobe_spin: 10us\n", want: 10 * time.Microsecond},
		{args: []string{"--timeslice", "60us"}, yaml: "strobe_spin: 0s\n", want: 0},
	} {
		c := c
		t.Run(strings.Join(c.args, " ")+" "+c.yaml, func(t *testing.T) {
			cfg, err := load(t, c.yaml, nil, c.args...)
			if err != nil {
				t.Fatalf("%v %q: %v", c.args, c.yaml, err)
			}
			if cfg.StrobeSpin != c.want {
				t.Errorf("%v %q: strobe_spin %v, want %v", c.args, c.yaml, cfg.StrobeSpin, c.want)
			}
		})
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want uint64
	}{
		{want: 4000},
		{args: []string{"--timeslice", "50us"}, want: 40000},
		{args: []string{"--timeslice", "250us"}, want: 8000},
		{args: []string{"--timeslice", "100ms"}, want: 100},
		{args: []string{"--timeslice", "50us"}, env: map[string]string{"BCS_DEADLOCK_SLICES": "50"}, want: 50},
		{args: []string{"--timeslice", "50us"}, env: map[string]string{"BCS_DEADLOCK_SLICES": "0"}, want: 0},
	} {
		t.Run(fmt.Sprint(c.args, c.env), func(t *testing.T) {
			cfg, err := load(t, "", c.env, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.DeadlockSlices != c.want {
				t.Errorf("deadlock_slices %d, want %d", cfg.DeadlockSlices, c.want)
			}
		})
	}
}

func TestValidateNamesRangeOfConfigs(t *testing.T) {
	c := Default()
	c.Nodes = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "nodes = 0, want 1 .. 64") {
		t.Fatalf("err = %v, want configs' range 1 .. 64, not the strobe's", err)
	}
	c = Default()
	c.DeadlockSlices = 1 << 63
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "deadlock_slices = 9223372036854775808") {
		t.Fatalf("err = %v", err)
	}
}

func TestFlagHelpShowsTheRanges(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	Flags(fs)
	if u := fs.Lookup("nodes").Usage; !strings.Contains(u, "1 .. 64") {
		t.Errorf("--nodes help %q does not give 1 .. 64", u)
	}
	if u := fs.Lookup("timeslice").Usage; !strings.Contains(u, "50µs .. 100ms") {
		t.Errorf("--timeslice help %q does not give 50µs .. 100ms", u)
	}
}

func TestEnvWarnings(t *testing.T) {
	t.Setenv("BCS_TIMESLISE", "1ms")
	t.Setenv("BCS_MDS_DIRR", "/tmp/x")
	t.Setenv("BCS_ZZZZZZZZZZZZZZZZ", "1")
	t.Setenv("BCS_RANK", "3")             // the runtime's own (package jobenv): no warning
	t.Setenv("BCS_MDS_JOB_DIR", "/tmp/j") // the same
	t.Setenv("BCS_NODES", "2")
	_, info, err := LoadInfo(nil)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(info.Warnings, "\n")
	for _, want := range []string{
		"BCS_TIMESLISE is not a configuration variable and is ignored (did you mean BCS_TIMESLICE?)",
		"BCS_MDS_DIRR is not a configuration variable and is ignored (did you mean BCS_MDS_DIR?)",
		"BCS_ZZZZZZZZZZZZZZZZ is not a configuration variable and is ignored (every key K is set by BCS_<K>)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings\n%s\nlack %q", all, want)
		}
	}
	if strings.Contains(all, "BCS_RANK") || strings.Contains(all, "BCS_NODES") || strings.Contains(all, "BCS_MDS_JOB_DIR") {
		t.Errorf("warnings name a valid variable:\n%s", all)
	}
	if !slices.Contains(info.Env, "BCS_NODES=2") {
		t.Errorf("info.Env = %v, want BCS_NODES=2", info.Env)
	}
	var b strings.Builder
	info.Print(&b, false)
	if !strings.Contains(b.String(), "bcsrun: warning: BCS_TIMESLISE") || strings.Contains(b.String(), "configuration file") {
		t.Errorf("Print(verbose=false):\n%s", b.String())
	}
}

// inDir runs in a fresh working directory with an empty HOME, so only the
// bcs.yaml the test writes can be found.
func inDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", t.TempDir())
	return dir
}

func TestVerboseNamesTheFile(t *testing.T) {
	dir := inDir(t)
	var b strings.Builder
	_, info, err := LoadInfo(nil)
	if err != nil {
		t.Fatal(err)
	}
	info.Print(&b, true)
	if !strings.Contains(b.String(), "no configuration file (looked for ./bcs.yaml, ") {
		t.Errorf("verbose without a file:\n%s", b.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "bcs.yaml"), []byte("nodes: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, info, err := LoadInfo(nil)
	if err != nil || c.Nodes != 2 || info.File != "./bcs.yaml" {
		t.Fatalf("nodes %d file %q err %v", c.Nodes, info.File, err)
	}
	b.Reset()
	info.Print(&b, true)
	if !strings.Contains(b.String(), "bcsrun: configuration file: ./bcs.yaml") {
		t.Errorf("verbose:\n%s", b.String())
	}
}

func TestWorkingDirFileOthersCanWriteIsRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o666, 0o620, 0o602} {
		dir := inDir(t)
		path := filepath.Join(dir, "bcs.yaml")
		if err := os.WriteFile(path, []byte("deadlock_slices: 5\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Load(nil)
		if err == nil || !strings.Contains(err.Error(), "refusing ./bcs.yaml: writable by group or others") || !strings.Contains(err.Error(), "mode "+mode.String()) {
			t.Errorf("mode %v: err = %v", mode, err)
		}
		// Named explicitly, the same file is the user's choice.
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		Flags(fs)
		if err := fs.Parse([]string{"--config", path}); err != nil {
			t.Fatal(err)
		}
		if c, err := Load(fs); err != nil || c.DeadlockSlices != 5 {
			t.Errorf("--config %s: deadlock_slices %d, err %v", path, c.DeadlockSlices, err)
		}
	}
}

func TestFileOfAnotherUserIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bcs.yaml")
	if err := os.WriteFile(path, []byte("nodes: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	owner := int(fi.Sys().(*syscall.Stat_t).Uid)
	if owner != 0 {
		if err := trusted(path, fi, owner); err != nil {
			t.Errorf("own file refused: %v", err)
		}
	}
	// Seen by another user (not root), the file belongs to someone else.
	err = trusted(path, fi, owner+4242)
	if owner == 0 { // root's files are trusted by everyone
		if err != nil {
			t.Errorf("root's file refused: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "refusing "+path+": owned by") || !strings.Contains(err.Error(), "mode -rw-r--r--") {
		t.Errorf("err = %v, want a refusal naming the file, owner and mode", err)
	}
}

func TestAnotherUsersFileInWorkingDirIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	dir := inDir(t)
	path := filepath.Join(dir, "bcs.yaml")
	if err := os.WriteFile(path, []byte("mds_dir: /tmp/elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	// Root runs as itself but the file is nobody's: refused although root could read anything.
	_, err := Load(nil)
	if err == nil || !strings.Contains(err.Error(), "refusing ./bcs.yaml: owned by") || !strings.Contains(err.Error(), "65534") {
		t.Fatalf("err = %v", err)
	}
}

// TestExampleDocumentsEveryKey: every key is in bcs.example.yaml, set or (for
// slice-derived keys) commented out with its value.
func TestExampleDocumentsEveryKey(t *testing.T) {
	raw, err := os.ReadFile("bcs.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		if !strings.Contains(string(raw), "\n"+k+": ") && !strings.Contains(string(raw), "\n# "+k+": ") {
			t.Errorf("bcs.example.yaml does not document %s", k)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"timeslise", "timeslice", 1}, {"nodse", "nodes", 2}, {"kitten", "sitting", 3}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// TestSpanKeys: span_slices_max is checked whatever the budget (the
// automatic one included), and every bytes_per_slice_max the key allows
// still validates with spans on, the span's rate capped at 4 GiB.
func TestSpanKeys(t *testing.T) {
	for _, c := range []struct {
		budget uint64
		slices int
		want   string // "": valid
	}{
		{0, 1, "span_slices_max = 1, want 0 (off) or 2 .. 64"},
		{2048, 1, "span_slices_max = 1, want 0 (off) or 2 .. 64"},
		{0, 65, "span_slices_max = 65, want 0 (off) or 2 .. 64"},
		{0, -1, "span_slices_max = -1, want 0 (off) or 2 .. 64"},
		{0, 0, ""},
		{0, 2, ""},
		{2048, 64, ""},
		{3 << 30, 4, ""},
		{1 << 32, 4, ""},
	} {
		cf := Default()
		cf.BytesPerSliceMax, cf.SpanSlicesMax = c.budget, c.slices
		err := cf.Validate()
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("bytes_per_slice_max %d, span_slices_max %d: err = %v, want %q", c.budget, c.slices, err, c.want)
		}
		if err != nil || c.budget == 0 || c.slices == 0 {
			continue
		}
		if p, want := cf.Sched().PullBytesPerSlice, min(c.budget*SpanRate/4, 1<<32); p != want {
			t.Errorf("bytes_per_slice_max %d: pull bytes per slice %d, want %d", c.budget, p, want)
		}
		if sc := cf.Sched(); sc.PullChunkMin != shm.PullMin || sc.PullEntriesMax != shm.PullMax {
			t.Errorf("bytes_per_slice_max %d: pull chunk min %d, entries max %d; want shm.PullMin (%d), shm.PullMax (%d)", c.budget, sc.PullChunkMin, sc.PullEntriesMax, shm.PullMin, shm.PullMax)
		}
	}
}

// TestHostSpinSetInCode: ForHost resolves only the fields that still hold
// their defaults: values a program sets after Default or Load stay (even
// the default value itself, when a key set it), and restart "" is "slice".
func TestHostSpinSetInCode(t *testing.T) {
	over := func(c Config) Config { return c.ForHost(3, 2) }
	c := Default()
	c.Spin, c.StrobeSpin = 50*time.Microsecond, 80*time.Microsecond
	if got := over(c); got.Spin != 50*time.Microsecond || got.StrobeSpin != 80*time.Microsecond {
		t.Errorf("Default with spin 50µs, strobe_spin 80µs set in code: ForHost gives %v and %v, want them kept", got.Spin, got.StrobeSpin)
	}
	c = Default()
	c.Spin = 5 * time.Microsecond
	if got := over(c); got.Spin != 5*time.Microsecond || got.StrobeSpin != 0 {
		t.Errorf("Default with spin 5µs set in code: ForHost gives spin %v strobe_spin %v, want 5µs and 0 (still the default)", got.Spin, got.StrobeSpin)
	}
	c = Default()
	c.Restart = ""
	if got := over(c); got.Spin != 0 || got.StrobeSpin != 0 {
		t.Errorf("restart \"\" (slice): ForHost gives spin %v strobe_spin %v, want 0 and 0", got.Spin, got.StrobeSpin)
	}
	c = Default()
	c.Restart = "early"
	if got := over(c); got.Spin != c.Spin || got.StrobeSpin != 0 {
		t.Errorf("restart early: ForHost gives spin %v strobe_spin %v, want %v and 0", got.Spin, got.StrobeSpin, c.Spin)
	}
	var lit Config // not made by Default or Load: nothing is a default
	lit.Spin, lit.StrobeSpin = 7*time.Microsecond, 9*time.Microsecond
	if got := over(lit); got.Spin != lit.Spin || got.StrobeSpin != lit.StrobeSpin {
		t.Errorf("a Config literal: ForHost gives %v and %v, want them kept", got.Spin, got.StrobeSpin)
	}
	loaded, err := load(t, "", map[string]string{"BCS_TIMESLICE": "1ms"})
	if err != nil {
		t.Fatal(err)
	}
	if got := over(loaded); got.Spin != 0 || got.StrobeSpin != 0 {
		t.Errorf("loaded with defaults (timeslice 1ms): ForHost gives %v and %v, want 0 and 0", got.Spin, got.StrobeSpin)
	}
	loaded.StrobeSpin = 30 * time.Microsecond
	if got := over(loaded); got.Spin != 0 || got.StrobeSpin != 30*time.Microsecond {
		t.Errorf("loaded, strobe_spin 30µs set in code: ForHost gives %v and %v, want 0 and 30µs", got.Spin, got.StrobeSpin)
	}
}

// TestHostDerivedDefaults: strobe_spin, and spin under restart "slice",
// drop to 0 on an oversubscribed host unless the user set them.
func TestHostDerivedDefaults(t *testing.T) {
	for _, c := range []struct {
		name             string
		env              map[string]string
		threads, cpus    int
		spin, strobeSpin time.Duration
	}{
		{name: "fits", threads: 2, cpus: 2, spin: 20 * time.Microsecond, strobeSpin: 100 * time.Microsecond},
		{name: "cpus unknown", threads: 3, cpus: 0, spin: 20 * time.Microsecond, strobeSpin: 100 * time.Microsecond},
		{name: "oversubscribed", threads: 3, cpus: 2, spin: 0, strobeSpin: 0},
		{name: "user set both", env: map[string]string{"BCS_SPIN": "20us", "BCS_STROBE_SPIN": "100us"}, threads: 3, cpus: 2,
			spin: 20 * time.Microsecond, strobeSpin: 100 * time.Microsecond},
		{name: "user set spin", env: map[string]string{"BCS_SPIN": "5us"}, threads: 17, cpus: 16, spin: 5 * time.Microsecond, strobeSpin: 0},
		{name: "restart early keeps the rank spin", env: map[string]string{"BCS_RESTART": "early"}, threads: 3, cpus: 2, spin: 20 * time.Microsecond, strobeSpin: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := load(t, "", c.env)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.ForHost(c.threads, c.cpus)
			if got.Spin != c.spin || got.StrobeSpin != c.strobeSpin {
				t.Errorf("%d threads on %d CPUs: spin %v strobe_spin %v, want %v and %v", c.threads, c.cpus, got.Spin, got.StrobeSpin, c.spin, c.strobeSpin)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("resolved config invalid: %v", err)
			}
		})
	}
}
