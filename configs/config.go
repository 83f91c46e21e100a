// Package configs is the only importer of viper: it turns the configuration
// file (bcs.yaml), BCS_* environment variables and command-line flags — in that
// order of precedence, lowest first — into one validated Config.
// bcs.example.yaml beside this file documents every key.
//
// The contract:
//   - An empty BCS_* variable counts as unset.
//   - Unknown keys in the file are errors naming the key and the nearest
//     valid one; a BCS_* variable that is no key (nor one of the runtime's
//     own, such as BCS_RANK) is a warning in Info, naming the nearest key.
//   - Every value is decoded strictly, and the error names the key, the value
//     as given and where it came from (file, BCS_* variable or flag): an
//     integer key refuses 2.7 rather than truncating it, and a negative value
//     for an unsigned key is printed as written (-1), never wrapped.
//   - Ranges are written once, in the bounds table: decoding, Validate and the
//     flag help read it. configs' ranges may be narrower than a package's own
//     (nodes: 1 .. 64 logical nodes on one machine; the strobe allows 4096),
//     and are checked first, so the narrower range is the one reported.
//   - Keys whose sensible value depends on the slice follow the slice unless
//     the user set them: strobe_spin (min(100µs, timeslice/2)) and
//     deadlock_slices (2 s worth of slices, at least 100). A value the user
//     set that does not fit is an error naming that key. The timeouts
//     (tx_timeout, node_timeout) bound one microphase or transmission, not a
//     number of slices, and need no adjusting.
//   - Keys whose sensible value depends on the host follow it unless the
//     user set them: strobe_spin, and spin under restart "slice", are 0
//     where a job's ranks and the runtime's threads outnumber the CPUs
//     (ForHost, called by the launcher once it knows the ranks). "Set" is
//     one rule: a field still holding the default Default or Load gave it
//     follows the host; a key in the file, the environment or the flags, or
//     a value a program assigns after Default or Load, is kept.
//   - A bcs.yaml found by searching (., $HOME/.config/bcsmpi, /etc/bcsmpi) is
//     read only if the current user or root owns it and neither group nor
//     others can write it; otherwise loading fails naming the file, its owner
//     and mode. A file named with --config is the user's choice and is read.
//   - Info says which file was read and which BCS_* variables were used
//     (bcsrun prints it with -v).
package configs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Config is a job's configuration. Field comments give units and limits.
type Config struct {
	Timeslice         time.Duration `mapstructure:"timeslice"`            // 50µs .. 100ms
	Nodes             int           `mapstructure:"nodes"`                // logical nodes on this machine, 1 .. 64
	Restart           string        `mapstructure:"restart"`              // "slice" (paper) or "early"
	MapBy             string        `mapstructure:"map_by"`               // rank placement over nodes: "block" (consecutive ranks together) or "cyclic" (round-robin)
	PPN               int           `mapstructure:"ppn"`                  // ranks per node, 0 .. 4096; 0: spread the ranks over all nodes (hosts); else ceil(ranks/ppn) nodes
	BytesPerSliceMax  uint64        `mapstructure:"bytes_per_slice_max"`  // per node per slice, 1 KiB .. 4 GiB; 0: auto (nicthread.AutoBudget, resolved by the launcher)
	ChunksPerSliceMax int           `mapstructure:"chunks_per_slice_max"` // per node per slice
	SpanSlicesMax     int           `mapstructure:"span_slices_max"`      // slices one large message within a node may be copied over by its blocked receiver (a span, scheduler/doc.go; twice as many when alone on its node and its last span kept up), 0 (off, and no pulled chunks) or 2 .. 64; off under check buffers
	RingSlots         int           `mapstructure:"ring_slots"`           // descriptors in flight per rank, power of two
	RequestsMax       int           `mapstructure:"requests_max"`         // outstanding requests per rank
	InlineMax         int           `mapstructure:"inline_max"`           // bytes copied into the ring with a send
	EagerMax          int           `mapstructure:"eager_max"`            // a rank's blocking sends of at most inline_max bytes that returned before a receive matched them, 1 .. 1048576 (raised to the job's size); beyond it a send waits for a match (mpiapi/eager.go)
	Spin              time.Duration `mapstructure:"spin"`                 // rank busy-wait before sleeping, 0 .. 10ms
	StrobeSpin        time.Duration `mapstructure:"strobe_spin"`          // upper bound of the master's busy-wait before a strobe, 0 .. timeslice; default DefaultStrobeSpin(timeslice)
	FIFO              bool          `mapstructure:"fifo"`                 // try SCHED_FIFO for the strobe thread
	TagOutput         bool          `mapstructure:"tag_output"`           // prefix rank output with "[rank]"
	Deterministic     bool          `mapstructure:"deterministic"`        // wildcards, probes and the Test family answered by logical time (scheduler/doc.go)
	TXTimeout         time.Duration `mapstructure:"tx_timeout"`           // bound on one slice's transmission, 1ms .. 10m
	NodeTimeout       time.Duration `mapstructure:"node_timeout"`         // a node silent this long (missed microphase reports) aborts the job, 10ms .. 10m
	DeadlockSlices    uint64        `mapstructure:"deadlock_slices"`      // stuck slices before a deadlock is declared; 0: off; default DefaultDeadlockSlices(timeslice)
	DeadlockAction    string        `mapstructure:"deadlock_action"`      // "abort" or "warn" (report and keep waiting)
	LeakCheck         string        `mapstructure:"leak_check"`           // resources not released at the end of the job: "warn", "error" (fails the job) or "off"
	MDS               string        `mapstructure:"mds"`                  // none, or a list of main, elan, kernel (implies elan), all (= main,elan) (BCS_MDS)
	MDSDir            string        `mapstructure:"mds_dir"`              // output root; each job writes <mds_dir>/<job-id>/
	MDSRanks          string        `mapstructure:"mds_ranks"`            // MMDS ranks: "all" or a list like 0,2-5
	MDSNodes          string        `mapstructure:"mds_nodes"`            // EMDS nodes: "all" or a list
	MDSPrimitives     string        `mapstructure:"mds_primitives"`       // primitives with distributions: "all" or MPI_Send,MPI_Recv,...
	MDSDigits         int           `mapstructure:"mds_digits"`           // significant digits of distributions, 1 .. 5
	MDSInterval       time.Duration `mapstructure:"mds_interval"`         // also dump MMDS every interval (0: only at exit)
	EMDSFirst         uint64        `mapstructure:"emds_first"`           // first slice of the EMDS window
	EMDSSlices        uint64        `mapstructure:"emds_slices"`          // slices in the window, 1 .. 10,000,000
	EMDSMetrics       string        `mapstructure:"emds_metrics"`         // "all" or a list of global/local metric names
	MDSFileMode       string        `mapstructure:"mds_file_mode"`        // octal permissions of MDS files, "0600" .. "0777"; the directory gets x where r
	MDSKernelBTF      string        `mapstructure:"mds_kernel_btf"`       // the kernel's BTF for the kernel monitor (mds: kernel)
	MDSKernelCache    string        `mapstructure:"mds_kernel_cache"`     // the kernel monitor's CO-RE cache: "" ($XDG_CACHE_HOME/bcsmpi, else ~/.cache/bcsmpi), an absolute directory, or "off"
	Check             string        `mapstructure:"check"`                // opt-in checks: none, or a list of buffers, buffers:warn, flow, all (BCS_CHECK; package internal/check)
	Address           string        `mapstructure:"address"`              // across hosts (bcsd): "auto", an IP address or an interface name to listen on; logical nodes always use loopback
	SSH               string        `mapstructure:"ssh"`                  // bcsrun --hosts: the ssh command and its options, split on spaces
	SlurmMPI          string        `mapstructure:"slurm_mpi"`            // under Slurm, how the bcsds meet: "pmi2" (srun --mpi=pmi2), "none" (srun --mpi=none, through bcsrun), "auto" (pmi2 where srun offers it)
	GangMPL           int           `mapstructure:"gang_mpl"`             // jobs that time-share the nodes under one gang master (bcsd start); more wait in its queue, 1 .. 64
	GangQuantum       uint64        `mapstructure:"gang_quantum"`         // slices a job runs before the next job's turn, 1 .. 1000000
	GangStop          string        `mapstructure:"gang_stop"`            // how the gang stops a descheduled job's ranks: "signal" (SIGSTOP/SIGCONT of each node's process group), "freezer" (the cgroup v2 freezer; refused where there is none) or "auto" (the freezer where this user can make a cgroup, else signals)
	RankPin           string        `mapstructure:"rank_pin"`             // pin each rank to one core of those the launcher may use: "auto" (in a gang, when a host's ranks of the job fit in its cores), "on" (always, round robin), "off"

	// spinAuto and strobeSpinAuto are the defaults Default (or Load, for a
	// key the file, the environment and the flags left unset) gave spin and
	// strobe_spin. ForHost replaces a field only while it still holds its
	// default: a value set by a key, or in code after Default or Load (even
	// one equal to the default, when set by a key), stays.
	spinAuto, strobeSpinAuto autoDuration
}

// autoDuration is a default a field was given, which ForHost may resolve
// for the host; the zero value (a Config not made by Default or Load, or a
// key the user set) is none.
type autoDuration struct {
	v  time.Duration
	on bool
}

func defaulted(d time.Duration) autoDuration { return autoDuration{v: d, on: true} }

// holds reports whether a field still holds the default a was given.
func (a autoDuration) holds(d time.Duration) bool { return a.on && a.v == d }

// Default is the embedded default configuration.
func Default() Config {
	return Config{
		Timeslice:         500 * time.Microsecond,
		Nodes:             1,
		Restart:           "slice",
		MapBy:             "block",
		BytesPerSliceMax:  0, // auto: sized from the host's copy rate at start-up
		ChunksPerSliceMax: core.DefaultSchedConfig.ChunksPerSliceMax,
		SpanSlicesMax:     4,
		RingSlots:         shm.DefaultGeometry.RingSlots,
		RequestsMax:       shm.DefaultGeometry.ReqMax,
		InlineMax:         shm.DefaultGeometry.InlineMax,
		EagerMax:          shm.DefaultEagerMax,
		Spin:              20 * time.Microsecond,
		StrobeSpin:        DefaultStrobeSpin(500 * time.Microsecond),
		FIFO:              true,
		TXTimeout:         10 * time.Second,
		NodeTimeout:       5 * time.Second,
		DeadlockSlices:    DefaultDeadlockSlices(500 * time.Microsecond),
		DeadlockAction:    "abort",
		LeakCheck:         "warn",
		MDS:               "none",
		MDSDir:            "./bcs-mds",
		MDSRanks:          "all",
		MDSNodes:          "all",
		MDSPrimitives:     "all",
		MDSDigits:         2,
		EMDSSlices:        10000,
		EMDSMetrics:       "all",
		MDSFileMode:       "0600",
		MDSKernelBTF:      "/sys/kernel/btf/vmlinux",
		Check:             "none",
		Address:           "auto",
		SSH:               "ssh",
		SlurmMPI:          "auto",
		GangMPL:           2,
		GangQuantum:       20,
		GangStop:          "signal",
		RankPin:           "auto",
		spinAuto:          defaulted(20 * time.Microsecond),
		strobeSpinAuto:    defaulted(DefaultStrobeSpin(500 * time.Microsecond)),
	}
}

// DefaultStrobeSpin is strobe_spin when the user did not set it: 100µs, but
// at most half the slice, so every slice length in the timeslice range works
// without touching strobe_spin.
func DefaultStrobeSpin(slice time.Duration) time.Duration {
	return min(100*time.Microsecond, slice/2)
}

// ForHost resolves the defaults that depend on the host: threads is how
// many threads of the job want a CPU at once on this machine (its ranks and
// the runtime's own: the strobe thread, and each logical node's agent when
// there are several) and cpus how many CPUs the launcher may use (0:
// unknown, nothing changes). When threads > cpus every microsecond a
// runtime thread or a blocked rank busy-waits is taken from a rank that
// computes, so, where they still hold their defaults (not set by a key of
// the file, the environment or the flags, nor changed in code after Default
// or Load), strobe_spin becomes 0 (the master
// sleeps up to the strobe and strobes as late as clock_nanosleep wakes it;
// bcsrun -v prints the strobes' mean and largest lateness) and, under
// restart "slice", so does spin: a blocked call sleeps on its futex at once,
// since its completion arrives at a strobe at least a slice after it was
// posted and a spin of microseconds never catches it. Under restart "early"
// a completion arrives when the slice's transmission ends, often just after
// the call blocked, and spin stays. With a CPU to spare, the defaults stay
// (spin 20µs, strobe_spin min(100µs, timeslice/2)).
func (c Config) ForHost(threads, cpus int) Config {
	if cpus <= 0 || threads <= cpus {
		return c
	}
	if c.spinAuto.holds(c.Spin) && c.RestartPolicy() == core.RestartSlice {
		c.Spin = 0
	}
	if c.strobeSpinAuto.holds(c.StrobeSpin) {
		c.StrobeSpin = 0
	}
	return c
}

// DeadlockQuiet is how long a job must show no progress, every rank blocked,
// before it is declared deadlocked when deadlock_slices is not set.
const DeadlockQuiet = 2 * time.Second

// DefaultDeadlockSlices is deadlock_slices when the user did not set it: the
// slices in DeadlockQuiet, at least 100. A fixed count would be 50 ms at a
// 50µs slice, shorter than a loaded host may leave a rank off the CPU.
func DefaultDeadlockSlices(slice time.Duration) uint64 {
	if slice <= 0 {
		return 100
	}
	return max(100, uint64((DeadlockQuiet+slice-1)/slice))
}

// bound is the allowed range of an integer or duration key (durations in ns).
type bound struct {
	min, max int64
	text     string // the range as printed, if not "min .. max"
	low      int64  // if set, 0 (off) or low .. max: 1 .. low-1 is out of range too
}

// out reports whether n is out of b's range.
func (b bound) out(n int64) bool { return n < b.min || n > b.max || (b.low > 0 && n > 0 && n < b.low) }

// bounds holds the range of every integer and duration key: decoding,
// Validate and the flag help all read it, so a range is written down once.
// strobe_spin is bounded by the slice and checked on its own.
var bounds = map[string]bound{
	"timeslice":            {min: int64(50 * time.Microsecond), max: int64(100 * time.Millisecond)},
	"nodes":                {min: 1, max: 64},
	"ppn":                  {min: 0, max: 4096, text: "0 (all nodes) or 1 .. 4096"},
	"bytes_per_slice_max":  {min: 0, max: 1 << 32, text: "0 (auto) or 1024 .. 4294967296"},
	"chunks_per_slice_max": {min: 1, max: 1 << 20},
	"span_slices_max":      {min: 0, max: 64, text: "0 (off) or 2 .. 64", low: 2},
	"ring_slots":           {min: 8, max: 65536, text: "a power of two in 8 .. 65536"},
	"requests_max":         {min: 16, max: 1 << 20},
	"inline_max":           {min: 0, max: 65536, text: "a multiple of 64 in 0 .. 65536"},
	"eager_max":            {min: 1, max: 1 << 20},
	"spin":                 {min: 0, max: int64(10 * time.Millisecond)},
	"tx_timeout":           {min: int64(time.Millisecond), max: int64(10 * time.Minute)},
	"node_timeout":         {min: int64(10 * time.Millisecond), max: int64(10 * time.Minute)},
	"deadlock_slices":      {min: 0, max: 100_000_000, text: "0 (off) .. 100000000"},
	"mds_digits":           {min: 1, max: 5},
	"mds_interval":         {min: 0, max: math.MaxInt64, text: "0 (off) or a positive duration"},
	"emds_first":           {min: 0, max: math.MaxInt64, text: "0 or more"},
	"emds_slices":          {min: 1, max: 10_000_000},
	"gang_mpl":             {min: 1, max: 64, text: "1 .. 64 jobs"},
	"gang_quantum":         {min: 1, max: 1_000_000, text: "1 .. 1000000 slices"},
}

func (b bound) String(duration bool) string {
	if b.text != "" {
		return b.text
	}
	if duration {
		return fmt.Sprintf("%v .. %v", time.Duration(b.min), time.Duration(b.max))
	}
	return fmt.Sprintf("%d .. %d", b.min, b.max)
}

// keyField is one configuration key and the Config field it fills.
type keyField struct {
	name  string
	index int
	kind  reflect.Kind // Int, Uint64, Bool, String; Int64 for durations
}

// keys lists every configuration key in Config's order, from the struct tags.
var keys = func() []keyField {
	t := reflect.TypeFor[Config]()
	out := make([]keyField, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue // Load's own bookkeeping, no key
		}
		out = append(out, keyField{name: f.Tag.Get("mapstructure"), index: i, kind: f.Type.Kind()})
	}
	return out
}()

// Keys returns the names of every configuration key.
func Keys() []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string { return "BCS_" + strings.ToUpper(key) }

// runtimeEnv are BCS_* variables that are not configuration keys but are
// read elsewhere (the launcher→rank contract, fault injection, profiling:
// package jobenv); Load does not warn about them.
var runtimeEnv = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range jobenv.Names() {
		m[name] = true
	}
	return m
}()

// Flags declares the command-line flags that override configuration keys.
func Flags(fs *pflag.FlagSet) {
	d := Default()
	fs.Duration("timeslice", d.Timeslice, fmt.Sprintf("time slice length, %s (key timeslice)", bounds["timeslice"].String(true)))
	fs.Int("nodes", d.Nodes, fmt.Sprintf("logical nodes on this machine, %s; >1 runs agents over loopback TCP (key nodes)", bounds["nodes"].String(false)))
	fs.String("map-by", d.MapBy, `rank placement over nodes: "block" (also slot, core) or "cyclic" (also node) (key map_by)`)
	fs.Int("ppn", d.PPN, "ranks per node (host); 0 spreads the ranks over every node (key ppn)")
	fs.String("restart", d.Restart, `when blocked ranks wake: "slice" (next strobe) or "early" (end of transmission) (key restart)`)
	fs.String("address", d.Address, `across hosts: "auto", an IP address or an interface name for bcsd to listen on (key address)`)
	fs.Bool("tag-output", d.TagOutput, "prefix every output line with [rank] (key tag_output)")
	fs.String("check", d.Check, `opt-in checks: none, or a comma list of buffers, buffers:warn, flow, all (key check)`)
	fs.Bool("deterministic", d.Deterministic, "deterministic mode: wildcard receives, probes and Test-family results depend on the program alone, not on timing (key deterministic)")
	fs.String("config", "", "configuration file (default: bcs.yaml in ., $HOME/.config/bcsmpi, /etc/bcsmpi)")
}

// flagKeys maps a key to the command-line flag that sets it.
var flagKeys = map[string]string{"timeslice": "timeslice", "nodes": "nodes", "restart": "restart", "tag_output": "tag-output", "check": "check", "deterministic": "deterministic", "address": "address", "map_by": "map-by", "ppn": "ppn"}

// Info says where a configuration came from, for bcsrun -v, and what looked
// wrong without being an error.
type Info struct {
	File     string   // the configuration file read; "" if none
	Searched []string // where a file was looked for, when --config was not given
	Env      []string // the BCS_* configuration variables used, as NAME=value
	Warnings []string // e.g. a BCS_* variable that is no configuration key
}

// Print writes the warnings to w, and with verbose also where the
// configuration came from.
func (i Info) Print(w io.Writer, verbose bool) {
	for _, s := range i.Warnings {
		fmt.Fprintln(w, "bcsrun: warning:", s)
	}
	if !verbose {
		return
	}
	if i.File != "" {
		fmt.Fprintln(w, "bcsrun: configuration file:", i.File)
	} else {
		fmt.Fprintf(w, "bcsrun: no configuration file (looked for %s)\n", strings.Join(i.Searched, ", "))
	}
	if len(i.Env) > 0 {
		fmt.Fprintln(w, "bcsrun: configuration from the environment:", strings.Join(i.Env, " "))
	}
}

// Load reads the file, the environment and the flags (fs may be nil).
func Load(fs *pflag.FlagSet) (Config, error) {
	c, _, err := LoadInfo(fs)
	return c, err
}

// LoadInfo is Load, and also says where the configuration came from. Info is
// filled as far as loading got, also when the error is not nil.
func LoadInfo(fs *pflag.FlagSet) (Config, Info, error) {
	var info Info
	explicit := ""
	if fs != nil {
		if f := fs.Lookup("config"); f != nil {
			explicit = f.Value.String()
		}
	}
	info.Warnings = envWarnings(os.Environ())
	file, err := findFile(explicit, &info)
	if err != nil {
		return Config{}, info, err
	}
	v := viper.New()
	if file != "" {
		v.SetConfigFile(file)
		if filepath.Ext(file) == "" {
			v.SetConfigType("yaml")
		}
		if err := v.ReadInConfig(); err != nil {
			return Config{}, info, fmt.Errorf("configs: reading %s: %w", file, err)
		}
		info.File = file
		for _, k := range v.AllKeys() {
			top, _, _ := strings.Cut(k, ".")
			if !slices.Contains(Keys(), top) {
				return Config{}, info, fmt.Errorf("configs: %s: unknown key %q%s (valid keys are listed in configs/bcs.example.yaml)", file, top, suggest(top, Keys(), ""))
			}
		}
	}
	c := Default()
	set := map[string]bool{}
	for _, k := range keys {
		var val any
		var src string
		flag := orDefault(flagKeys[k.name], "-")
		if f := lookupFlag(fs, flag); f != nil && f.Changed {
			val, src = f.Value.String(), "from --"+flag
		} else if e := os.Getenv(EnvName(k.name)); e != "" { // set but empty counts as unset
			val, src = e, "from "+EnvName(k.name)
			info.Env = append(info.Env, EnvName(k.name)+"="+e)
		} else if file != "" && v.InConfig(k.name) {
			val, src = v.Get(k.name), "in "+file
		} else {
			continue
		}
		set[k.name] = true
		if err := assign(reflect.ValueOf(&c).Elem().Field(k.index), k, val, src); err != nil {
			return Config{}, info, err
		}
	}
	c.spinAuto, c.strobeSpinAuto = autoDuration{}, autoDuration{}
	if !set["spin"] {
		c.spinAuto = defaulted(c.Spin)
	}
	if !set["strobe_spin"] {
		c.StrobeSpin = DefaultStrobeSpin(c.Timeslice)
		c.strobeSpinAuto = defaulted(c.StrobeSpin)
	}
	if !set["deadlock_slices"] {
		c.DeadlockSlices = DefaultDeadlockSlices(c.Timeslice)
	}
	return c, info, c.Validate()
}

func lookupFlag(fs *pflag.FlagSet, name string) *pflag.Flag {
	if fs == nil {
		return nil
	}
	return fs.Lookup(name)
}

// assign decodes one key's value into its field. Integers must be integers
// (2.7 is refused, not truncated) and in range before they are stored, so a
// negative value is reported as given rather than wrapped.
func assign(f reflect.Value, k keyField, val any, src string) error {
	b, bounded := bounds[k.name]
	bad := func(want string) error {
		return fmt.Errorf("configs: %s = %s, want %s (%s)", k.name, show(val), want, src)
	}
	isDuration := f.Type() == reflect.TypeFor[time.Duration]()
	switch {
	case isDuration:
		var d time.Duration
		switch x := val.(type) {
		case string:
			var err error
			if d, err = time.ParseDuration(strings.TrimSpace(x)); err != nil {
				return bad("a duration such as 500us, 10ms or 5s")
			}
		case int:
			if x != 0 {
				return bad("a duration with a unit, such as 500us")
			}
		default:
			return bad("a duration such as 500us, 10ms or 5s")
		}
		if bounded && (int64(d) < b.min || int64(d) > b.max) {
			return fmt.Errorf("configs: %s = %v, want %s (%s)", k.name, d, b.String(true), src)
		}
		f.SetInt(int64(d))
	case k.kind == reflect.Int || k.kind == reflect.Uint64:
		var n int64
		switch x := val.(type) {
		case int:
			n = int64(x)
		case int64:
			n = x
		case uint64:
			if x > math.MaxInt64 {
				return bad("an integer, " + b.String(false))
			}
			n = int64(x)
		case string:
			var err error
			if n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64); err != nil {
				return bad("an integer, " + b.String(false))
			}
		default: // floats, lists, maps
			return bad("an integer, " + b.String(false))
		}
		if bounded && b.out(n) {
			return fmt.Errorf("configs: %s = %d, want %s (%s)", k.name, n, b.String(false), src)
		}
		if k.kind == reflect.Uint64 {
			f.SetUint(uint64(n))
		} else {
			f.SetInt(n)
		}
	case k.kind == reflect.Bool:
		switch x := val.(type) {
		case bool:
			f.SetBool(x)
		case string:
			t, err := strconv.ParseBool(strings.TrimSpace(x))
			if err != nil {
				return bad("true or false")
			}
			f.SetBool(t)
		default:
			return bad("true or false")
		}
	case k.kind == reflect.String:
		switch x := val.(type) {
		case string:
			f.SetString(x)
		case int:
			if k.name == "mds_file_mode" { // YAML reads 0600 as the number 384
				return bad(`an octal mode in quotes, such as "0600"`)
			}
			f.SetString(strconv.Itoa(x))
		default:
			return bad("a string")
		}
	default:
		panic(fmt.Sprintf("configs: key %s has a field of kind %v that assign does not decode", k.name, k.kind))
	}
	return nil
}

// show prints a raw value as the user wrote it (strings quoted).
func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// envWarnings names the BCS_* variables that are no configuration key, with
// the nearest valid one.
func envWarnings(environ []string) []string {
	var valid []string
	for _, k := range keys {
		valid = append(valid, EnvName(k.name))
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "BCS_") || runtimeEnv[name] || slices.Contains(valid, name) {
			continue
		}
		out = append(out, fmt.Sprintf("%s is not a configuration variable and is ignored%s", name, suggest(name, valid, "every key K is set by BCS_<K>")))
	}
	sort.Strings(out)
	return out
}

// suggest says which of valid is nearest to s (by edit distance), if one is
// near enough to be a misspelling; otherwise fallback, if any.
func suggest(s string, valid []string, fallback string) string {
	best, bestD := "", math.MaxInt
	for _, v := range valid {
		if d := editDistance(strings.ToLower(s), strings.ToLower(v)); d < bestD {
			best, bestD = v, d
		}
	}
	if best != "" && bestD <= max(2, len(s)/4) {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	if fallback != "" {
		return " (" + fallback + ")"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// findFile returns the configuration file to read: the one named by
// --config, or the first bcs.yaml in the search path. A searched file is
// read only if it is trustworthy (see trusted): a bcs.yaml that another user
// put or can change in the working directory must not steer the job.
func findFile(explicit string, info *Info) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("configs: reading %s: %w", explicit, err)
		}
		return explicit, nil
	}
	dirs := []string{"."}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".config", "bcsmpi"))
	}
	dirs = append(dirs, "/etc/bcsmpi")
	for _, d := range dirs {
		path := filepath.Join(d, "bcs.yaml")
		if d == "." {
			path = "./bcs.yaml"
		}
		info.Searched = append(info.Searched, path)
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("configs: reading %s: %w", path, err)
		}
		if err := trusted(path, fi, os.Geteuid()); err != nil {
			return "", err
		}
		return path, nil
	}
	return "", nil
}

// trusted refuses a searched configuration file that a user other than euid
// (or root) owns, or that group or others may write.
func trusted(path string, fi os.FileInfo, euid int) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	owner := int(st.Uid)
	ownerOK := owner == euid || owner == 0
	if ownerOK && fi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	name := strconv.Itoa(owner)
	if u, err := user.LookupId(name); err == nil {
		name = fmt.Sprintf("%s (uid %d)", u.Username, owner)
	} else {
		name = "uid " + name
	}
	why := "owned by " + name
	if ownerOK {
		why = "writable by group or others"
	}
	return fmt.Errorf("configs: refusing %s: %s, owner %s, mode %v; another user could change this job's settings (make it yours and chmod go-w, or name a file with --config)", path, why, name, fi.Mode().Perm())
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Validate checks every key; the error names the key and the allowed range.
func (c Config) Validate() error {
	rv := reflect.ValueOf(c)
	for _, k := range keys {
		b, ok := bounds[k.name]
		if !ok {
			continue
		}
		f := rv.Field(k.index)
		switch {
		case f.Type() == reflect.TypeFor[time.Duration]():
			if d := f.Int(); d < b.min || d > b.max {
				return fmt.Errorf("configs: %s = %v, want %s", k.name, time.Duration(d), b.String(true))
			}
		case k.kind == reflect.Int:
			if n := f.Int(); b.out(n) {
				return fmt.Errorf("configs: %s = %d, want %s", k.name, n, b.String(false))
			}
		case k.kind == reflect.Uint64:
			if n := f.Uint(); n > math.MaxInt64 || b.out(int64(n)) {
				return fmt.Errorf("configs: %s = %d, want %s", k.name, n, b.String(false))
			}
		}
	}
	if err := (strobe.Config{Slice: c.Timeslice, Nodes: c.Nodes}).Validate(); err != nil {
		return err
	}
	if _, err := core.ParseRestart(c.Restart); err != nil {
		return fmt.Errorf("configs: restart = %q, want \"slice\" or \"early\"", c.Restart)
	}
	if _, ok := mapBy[c.MapBy]; !ok {
		return fmt.Errorf("configs: map_by = %q, want \"block\" (or slot, core) or \"cyclic\" (or node)", c.MapBy)
	}
	if c.BytesPerSliceMax == 0 { // auto: the launcher sizes it (nicthread.AutoBudget)
		sc := c.Sched()
		sc.BytesPerSliceMax = 1 << 20
		if err := sc.Validate(); err != nil {
			return err
		}
	} else if err := c.Sched().Validate(); err != nil {
		return err
	}
	g := c.Geometry(1)
	if err := g.Validate(); err != nil {
		return err
	}
	if c.BytesPerSliceMax != 0 && uint64(c.InlineMax) > c.BytesPerSliceMax {
		return fmt.Errorf("configs: inline_max = %d exceeds bytes_per_slice_max = %d", c.InlineMax, c.BytesPerSliceMax)
	}
	if c.StrobeSpin < 0 || c.StrobeSpin > c.Timeslice {
		return fmt.Errorf("configs: strobe_spin = %v, want 0 .. timeslice (%v); unset, it defaults to min(100µs, timeslice/2)", c.StrobeSpin, c.Timeslice)
	}
	if c.DeadlockAction != "abort" && c.DeadlockAction != "warn" {
		return fmt.Errorf("configs: deadlock_action = %q, want \"abort\" or \"warn\"", c.DeadlockAction)
	}
	if c.GangStop != "auto" && c.GangStop != "freezer" && c.GangStop != "signal" {
		return fmt.Errorf("configs: gang_stop = %q, want \"auto\", \"freezer\" or \"signal\"", c.GangStop)
	}
	if c.RankPin != "auto" && c.RankPin != "on" && c.RankPin != "off" {
		return fmt.Errorf("configs: rank_pin = %q, want \"auto\", \"on\" or \"off\"", c.RankPin)
	}
	if c.LeakCheck != "warn" && c.LeakCheck != "error" && c.LeakCheck != "off" {
		return fmt.Errorf("configs: leak_check = %q, want \"warn\", \"error\" or \"off\"", c.LeakCheck)
	}
	if _, err := check.Parse(c.Check); err != nil {
		return fmt.Errorf("configs: check (BCS_CHECK) = %q, want %s", c.Check, check.Valid)
	}
	if _, err := mds.ParseMode(c.MDS); err != nil {
		return fmt.Errorf("configs: mds (BCS_MDS) = %q, want none, or a comma list of main, elan, kernel and all", c.MDS)
	}
	if _, err := mds.ParseSet(c.MDSRanks); err != nil {
		return fmt.Errorf("configs: mds_ranks: %w", err)
	}
	if _, err := mds.ParseSet(c.MDSNodes); err != nil {
		return fmt.Errorf("configs: mds_nodes: %w", err)
	}
	if _, err := mds.ParsePrimitives(c.MDSPrimitives); err != nil {
		return fmt.Errorf("configs: mds_primitives: %w", err)
	}
	if _, _, err := c.EMDSSelection(); err != nil {
		return fmt.Errorf("configs: emds_metrics: %w", err)
	}
	if c.MDSKernelBTF == "" {
		return fmt.Errorf("configs: mds_kernel_btf is empty, want the kernel's BTF file (default /sys/kernel/btf/vmlinux)")
	}
	if k := c.MDSKernelCache; k != "" && k != "off" && !filepath.IsAbs(k) {
		return fmt.Errorf("configs: mds_kernel_cache = %q, want an absolute directory, off, or empty ($XDG_CACHE_HOME/bcsmpi, else ~/.cache/bcsmpi)", k)
	}
	if c.MDSDir == "" {
		return fmt.Errorf("configs: mds_dir is empty, want a directory")
	}
	if _, err := mds.ParseFileMode(c.MDSFileMode); err != nil {
		return fmt.Errorf("configs: mds_file_mode: %w", err)
	}
	if len(strings.Fields(c.SSH)) == 0 {
		return fmt.Errorf("configs: ssh is empty, want the ssh command (default \"ssh\"), e.g. \"ssh -i /path/key\"")
	}
	switch c.SlurmMPI {
	case "auto", "pmi2", "none":
	default:
		return fmt.Errorf("configs: slurm_mpi = %q, want \"auto\", \"pmi2\" or \"none\"", c.SlurmMPI)
	}
	if c.Address == "" || strings.ContainsAny(c.Address, " \t\n/:") && net.ParseIP(c.Address) == nil {
		return fmt.Errorf("configs: address = %q, want \"auto\", an IP address (10.0.0.5) or an interface name (eth0)", c.Address)
	}
	return nil
}

// MDSFileModes are the permissions of the MDS files and of the job's MDS
// directory (mds_file_mode, with search permission wherever read is given).
func (c Config) MDSFileModes() (file, dir os.FileMode) {
	m, _ := mds.ParseFileMode(c.MDSFileMode)
	return m, mds.DirMode(m)
}

// MDSMode is the parsed mds key.
func (c Config) MDSMode() mds.Mode {
	m, _ := mds.ParseMode(c.MDS)
	return m
}

// EMDSSelection splits emds_metrics into the global and local metrics it selects.
func (c Config) EMDSSelection() (global, local []bool, err error) {
	if c.EMDSMetrics == "" || c.EMDSMetrics == "all" {
		return nil, nil, nil
	}
	global = make([]bool, len(emds.GlobalMetrics))
	local = make([]bool, len(emds.LocalMetrics))
	for _, m := range strings.Split(c.EMDSMetrics, ",") {
		g, gerr := emds.SelectMetrics(emds.GlobalMetrics, m)
		l, lerr := emds.SelectMetrics(emds.LocalMetrics, m)
		if gerr != nil && lerr != nil {
			return nil, nil, fmt.Errorf("metric %q unknown; global: %s; local: %s", m, strings.Join(emds.GlobalMetrics, ","), strings.Join(emds.LocalMetrics, ","))
		}
		for i := range g {
			global[i] = global[i] || g[i]
		}
		for i := range l {
			local[i] = local[i] || l[i]
		}
	}
	return global, local, nil
}

// SpanRate, in quarters, is the rate at which a span's chunk is given bytes
// per slice relative to bytes_per_slice_max: 6/4. The automatic budget is
// what one copy moves in half a slice (nicthread.AutoBudget), so a span
// asks its receiver's copy for three quarters of its measured rate, leaving
// a quarter for a loaded host and the wake-up.
const SpanRate = 6

// Sched is the scheduler part.
func (c Config) Sched() core.SchedConfig {
	sc := core.SchedConfig{BytesPerSliceMax: c.BytesPerSliceMax, ChunksPerSliceMax: c.ChunksPerSliceMax, Deterministic: c.Deterministic}
	if c.SpanSlicesMax > 0 && !c.CheckMode().Buffers {
		// A span's chunk moves at SpanRate times the budget per slice
		// (scheduler doc.go, "Spans"); the buffer checks' piecewise
		// copies are not made for spans, so a job under them moves
		// per-slice chunks (the flow check alone keeps spans: package
		// nicthread, flow.go).
		// At most 4 GiB, the scheduler's bound (a budget near it gets no
		// spans then: a span must move more than chunks would).
		sc.PullBytesPerSlice = min(c.BytesPerSliceMax*SpanRate/4, 1<<32)
		sc.SpanSlicesMax = c.SpanSlicesMax
		// Chunks the receiver copies (pull orders, from shm.PullMin
		// bytes) count on the budget at the same rate (scheduler doc.go,
		// "Pulled chunks").
		sc.PullChunkMin, sc.PullEntriesMax = shm.PullMin, shm.PullMax
	}
	return sc
}

// Geometry is the shared-memory geometry of a node with ranks ranks.
func (c Config) Geometry(ranks int) shm.Geometry {
	return shm.Geometry{Ranks: ranks, RingSlots: c.RingSlots, ReqMax: c.RequestsMax, InlineMax: c.InlineMax, EagerMax: c.EagerMax, Deterministic: c.Deterministic}
}

// CheckMode is the parsed check key.
func (c Config) CheckMode() check.Mode {
	m, _ := check.Parse(c.Check)
	return m
}

// mapBy maps the map_by words, Open MPI's --map-by spellings included, to
// whether placement is cyclic.
var mapBy = map[string]bool{"block": false, "slot": false, "core": false, "cyclic": true, "node": true}

// Cyclic reports whether map_by places ranks round-robin over the nodes.
func (c Config) Cyclic() bool { return mapBy[c.MapBy] }

// RestartPolicy is the parsed restart key.
func (c Config) RestartPolicy() core.Restart {
	r, _ := core.ParseRestart(c.Restart)
	return r
}
