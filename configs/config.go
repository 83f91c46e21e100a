// Package configs is the only importer of viper: it turns the configuration
// file (bcs.yaml), BCS_* environment variables and command-line flags — in that
// order of precedence, lowest first — into one validated Config. Unknown keys
// in the file are errors, and every out-of-range value is reported with its key
// and the allowed range. bcs.example.yaml beside this file documents every key.
package configs

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/scheduler"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Config is a job's configuration. Field comments give units and limits.
type Config struct {
	Timeslice         time.Duration `mapstructure:"timeslice"`            // 50µs .. 100ms
	Nodes             int           `mapstructure:"nodes"`                // logical nodes on this machine, 1 .. 64
	Restart           string        `mapstructure:"restart"`              // "slice" (paper) or "early"
	BytesPerSliceMax  uint64        `mapstructure:"bytes_per_slice_max"`  // per node per slice, 1 KiB .. 4 GiB
	ChunksPerSliceMax int           `mapstructure:"chunks_per_slice_max"` // per node per slice
	RingSlots         int           `mapstructure:"ring_slots"`           // descriptors in flight per rank, power of two
	RequestsMax       int           `mapstructure:"requests_max"`         // outstanding requests per rank
	InlineMax         int           `mapstructure:"inline_max"`           // bytes copied into the ring with a send
	Spin              time.Duration `mapstructure:"spin"`                 // rank busy-wait before sleeping, 0 .. 10ms
	StrobeSpin        time.Duration `mapstructure:"strobe_spin"`          // upper bound of the master's busy-wait before a strobe, 0 .. timeslice
	FIFO              bool          `mapstructure:"fifo"`                 // try SCHED_FIFO for the strobe thread
	TagOutput         bool          `mapstructure:"tag_output"`           // prefix rank output with "[rank]"
	TXTimeout         time.Duration `mapstructure:"tx_timeout"`           // bound on one slice's transmission, 1ms .. 10m
	NodeTimeout       time.Duration `mapstructure:"node_timeout"`         // a node silent this long (missed microphase reports) aborts the job, 10ms .. 10m
	DeadlockSlices    uint64        `mapstructure:"deadlock_slices"`      // stuck slices before a deadlock is declared; 0: off
	DeadlockAction    string        `mapstructure:"deadlock_action"`      // "abort" or "warn" (report and keep waiting)
	LeakCheck         string        `mapstructure:"leak_check"`           // resources not released at the end of the job: "warn", "error" (fails the job) or "off"
	MDS               string        `mapstructure:"mds"`                  // none, main, elan, main,elan, all (BCS_MDS)
	MDSDir            string        `mapstructure:"mds_dir"`              // output root; each job writes <mds_dir>/<job-id>/
	MDSRanks          string        `mapstructure:"mds_ranks"`            // MMDS ranks: "all" or a list like 0,2-5
	MDSNodes          string        `mapstructure:"mds_nodes"`            // EMDS nodes: "all" or a list
	MDSPrimitives     string        `mapstructure:"mds_primitives"`       // primitives with distributions: "all" or MPI_Send,MPI_Recv,...
	MDSDigits         int           `mapstructure:"mds_digits"`           // significant digits of distributions, 1 .. 5
	MDSInterval       time.Duration `mapstructure:"mds_interval"`         // also dump MMDS every interval (0: only at exit)
	EMDSFirst         uint64        `mapstructure:"emds_first"`           // first slice of the EMDS window
	EMDSSlices        uint64        `mapstructure:"emds_slices"`          // slices in the window, 1 .. 10,000,000
	EMDSMetrics       string        `mapstructure:"emds_metrics"`         // "all" or a list of global/local metric names
}

// Default is the embedded default configuration.
func Default() Config {
	return Config{
		Timeslice:         500 * time.Microsecond,
		Nodes:             1,
		Restart:           "slice",
		BytesPerSliceMax:  scheduler.DefaultConfig.BytesPerSliceMax,
		ChunksPerSliceMax: scheduler.DefaultConfig.ChunksPerSliceMax,
		RingSlots:         shm.DefaultGeometry.RingSlots,
		RequestsMax:       shm.DefaultGeometry.ReqMax,
		InlineMax:         shm.DefaultGeometry.InlineMax,
		Spin:              20 * time.Microsecond,
		StrobeSpin:        100 * time.Microsecond,
		FIFO:              true,
		TXTimeout:         10 * time.Second,
		NodeTimeout:       5 * time.Second,
		DeadlockSlices:    1000,
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
	}
}

// Flags declares the command-line flags that override configuration keys.
func Flags(fs *pflag.FlagSet) {
	d := Default()
	fs.Duration("timeslice", d.Timeslice, "time slice length (key timeslice)")
	fs.Int("nodes", d.Nodes, "logical nodes on this machine; >1 runs agents over loopback TCP (key nodes)")
	fs.String("restart", d.Restart, `when blocked ranks wake: "slice" (next strobe) or "early" (end of transmission) (key restart)`)
	fs.Bool("tag-output", d.TagOutput, "prefix every output line with [rank] (key tag_output)")
	fs.String("config", "", "configuration file (default: bcs.yaml in ., $HOME/.config/bcsmpi, /etc/bcsmpi)")
}

var flagKeys = map[string]string{"timeslice": "timeslice", "nodes": "nodes", "restart": "restart", "tag-output": "tag_output"}

// Load reads the file, the environment and the flags (fs may be nil).
func Load(fs *pflag.FlagSet) (Config, error) {
	v := viper.New()
	d := Default()
	defaults := map[string]any{
		"timeslice": d.Timeslice, "nodes": d.Nodes, "restart": d.Restart, "bytes_per_slice_max": d.BytesPerSliceMax,
		"chunks_per_slice_max": d.ChunksPerSliceMax, "ring_slots": d.RingSlots, "requests_max": d.RequestsMax,
		"inline_max": d.InlineMax, "spin": d.Spin, "strobe_spin": d.StrobeSpin, "fifo": d.FIFO,
		"tag_output": d.TagOutput, "tx_timeout": d.TXTimeout, "mds": d.MDS,
		"deadlock_slices": d.DeadlockSlices, "deadlock_action": d.DeadlockAction, "node_timeout": d.NodeTimeout,
		"mds_dir": d.MDSDir, "mds_ranks": d.MDSRanks, "mds_nodes": d.MDSNodes, "mds_primitives": d.MDSPrimitives,
		"mds_digits": d.MDSDigits, "mds_interval": d.MDSInterval, "emds_first": d.EMDSFirst, "emds_slices": d.EMDSSlices,
		"emds_metrics": d.EMDSMetrics, "leak_check": d.LeakCheck,
	}
	for k, val := range defaults {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix("BCS")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()

	file := ""
	if fs != nil {
		if f := fs.Lookup("config"); f != nil {
			file = f.Value.String()
		}
	}
	if file != "" {
		v.SetConfigFile(file)
	} else {
		v.SetConfigName("bcs")
		v.SetConfigType("yaml")
		v.AddConfigPath(".")
		v.AddConfigPath("$HOME/.config/bcsmpi")
		v.AddConfigPath("/etc/bcsmpi")
	}
	if err := v.ReadInConfig(); err != nil {
		var nf viper.ConfigFileNotFoundError
		if file != "" || !errors.As(err, &nf) {
			return Config{}, fmt.Errorf("configs: reading %s: %w", orDefault(file, "bcs.yaml"), err)
		}
	}
	if fs != nil {
		for flag, key := range flagKeys {
			if f := fs.Lookup(flag); f != nil {
				if err := v.BindPFlag(key, f); err != nil {
					return Config{}, err
				}
			}
		}
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return Config{}, fmt.Errorf("configs: %s: %w (valid keys are listed in configs/bcs.example.yaml)", orDefault(v.ConfigFileUsed(), "configuration"), err)
	}
	return c, c.Validate()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Validate checks every key; the error names the key and the allowed range.
func (c Config) Validate() error {
	if err := (strobe.Config{Slice: c.Timeslice, Nodes: c.Nodes}).Validate(); err != nil {
		return err
	}
	if c.Nodes > 64 {
		return fmt.Errorf("configs: nodes = %d, want 1 .. 64 logical nodes on one machine", c.Nodes)
	}
	if _, err := core.ParseRestart(c.Restart); err != nil {
		return fmt.Errorf("configs: restart = %q, want \"slice\" or \"early\"", c.Restart)
	}
	if err := c.Sched().Validate(); err != nil {
		return err
	}
	g := c.Geometry(1)
	if err := g.Validate(); err != nil {
		return err
	}
	if uint64(c.InlineMax) > c.BytesPerSliceMax {
		return fmt.Errorf("configs: inline_max = %d exceeds bytes_per_slice_max = %d", c.InlineMax, c.BytesPerSliceMax)
	}
	if c.Spin < 0 || c.Spin > 10*time.Millisecond {
		return fmt.Errorf("configs: spin = %v, want 0 .. 10ms", c.Spin)
	}
	if c.StrobeSpin < 0 || c.StrobeSpin > c.Timeslice {
		return fmt.Errorf("configs: strobe_spin = %v, want 0 .. timeslice (%v)", c.StrobeSpin, c.Timeslice)
	}
	if c.TXTimeout < time.Millisecond || c.TXTimeout > 10*time.Minute {
		return fmt.Errorf("configs: tx_timeout = %v, want 1ms .. 10m", c.TXTimeout)
	}
	if c.NodeTimeout < 10*time.Millisecond || c.NodeTimeout > 10*time.Minute {
		return fmt.Errorf("configs: node_timeout = %v, want 10ms .. 10m", c.NodeTimeout)
	}
	if c.DeadlockSlices > 100_000_000 {
		return fmt.Errorf("configs: deadlock_slices = %d, want 0 (off) .. 100000000", c.DeadlockSlices)
	}
	if c.DeadlockAction != "abort" && c.DeadlockAction != "warn" {
		return fmt.Errorf("configs: deadlock_action = %q, want \"abort\" or \"warn\"", c.DeadlockAction)
	}
	if c.LeakCheck != "warn" && c.LeakCheck != "error" && c.LeakCheck != "off" {
		return fmt.Errorf("configs: leak_check = %q, want \"warn\", \"error\" or \"off\"", c.LeakCheck)
	}
	if _, err := mds.ParseMode(c.MDS); err != nil {
		return fmt.Errorf("configs: mds (BCS_MDS) = %q, want none, main, elan, main,elan or all", c.MDS)
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
	if c.MDSDigits < 1 || c.MDSDigits > 5 {
		return fmt.Errorf("configs: mds_digits = %d, want 1 .. 5", c.MDSDigits)
	}
	if c.MDSInterval < 0 {
		return fmt.Errorf("configs: mds_interval = %v, want 0 (off) or a positive duration", c.MDSInterval)
	}
	if c.EMDSSlices < 1 || c.EMDSSlices > 10_000_000 {
		return fmt.Errorf("configs: emds_slices = %d, want 1 .. 10000000", c.EMDSSlices)
	}
	if _, _, err := c.EMDSSelection(); err != nil {
		return fmt.Errorf("configs: emds_metrics: %w", err)
	}
	if c.MDSDir == "" {
		return fmt.Errorf("configs: mds_dir is empty, want a directory")
	}
	return nil
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

// Sched is the scheduler part.
func (c Config) Sched() scheduler.Config {
	return scheduler.Config{BytesPerSliceMax: c.BytesPerSliceMax, ChunksPerSliceMax: c.ChunksPerSliceMax}
}

// Geometry is the shared-memory geometry of a node with ranks ranks.
func (c Config) Geometry(ranks int) shm.Geometry {
	return shm.Geometry{Ranks: ranks, RingSlots: c.RingSlots, ReqMax: c.RequestsMax, InlineMax: c.InlineMax}
}

// RestartPolicy is the parsed restart key.
func (c Config) RestartPolicy() core.Restart {
	r, _ := core.ParseRestart(c.Restart)
	return r
}
