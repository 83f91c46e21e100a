package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

func TestRejects(t *testing.T) {
	cases := []struct {
		yaml string
		env  map[string]string
		args []string
		want string
	}{
		{yaml: "timeslise: 1ms\n", want: "timeslise"},
		{args: []string{"--timeslice", "10us"}, want: "timeslice = 10µs, want 50µs .. 100ms"},
		{env: map[string]string{"BCS_RING_SLOTS": "100"}, want: "ring_slots = 100"},
		{env: map[string]string{"BCS_RESTART": "later"}, want: `restart = "later"`},
		{yaml: "bytes_per_slice_max: 10\n", want: "bytes_per_slice_max = 10"},
		{args: []string{"--nodes", "0"}, want: "nodes = 0"},
		{env: map[string]string{"BCS_MDS": "mian"}, want: `mds (BCS_MDS) = "mian", want none, main, elan, main,elan or all`},
		{env: map[string]string{"BCS_MDS_RANKS": "3-1"}, want: `mds_ranks`},
		{yaml: "emds_metrics: GETTS,NCOL\n", want: `metric "NCOL" unknown`},
		{yaml: "mds_digits: 9\n", want: "mds_digits = 9, want 1 .. 5"},
		{env: map[string]string{"BCS_DEADLOCK_ACTION": "ignore"}, want: `deadlock_action = "ignore", want "abort" or "warn"`},
		{yaml: "emds_slices: 0\n", want: "emds_slices = 0"},
		{env: map[string]string{"BCS_LEAK_CHECK": "strict"}, want: `leak_check = "strict", want "warn", "error" or "off"`},
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
