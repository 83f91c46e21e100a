package launch

import (
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// TestCheckJobHostDefaults: checkJob resolves spin and strobe_spin from this
// machine's CPUs (configs.Config.ForHost): 0 when the job's ranks and the
// strobe thread outnumber the CPUs bcsrun may use, the defaults when one is
// left for the strobe thread.
func TestCheckJobHostDefaults(t *testing.T) {
	cpus, err := unix.Affinity()
	if err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	def := configs.Default()
	for _, c := range []struct {
		ranks, nodes     int
		spin, strobeSpin time.Duration
	}{
		{ranks: len(cpus), nodes: 1},                                                 // ranks + strobe thread > CPUs
		{ranks: max(len(cpus)-1, 2), nodes: 2},                                       // and an agent per logical node
		{ranks: len(cpus) - 1, nodes: 1, spin: def.Spin, strobeSpin: def.StrobeSpin}, // one CPU left for the strobe thread
	} {
		if c.ranks < 1 {
			continue // a 1-CPU machine has no case that fits
		}
		cfg := def
		cfg.Nodes = c.nodes
		got, _, err := checkJob(Job{Ranks: c.ranks, Program: "true", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spin != c.spin || got.StrobeSpin != c.strobeSpin {
			t.Errorf("%d ranks on %d nodes, %d CPUs: spin %v strobe_spin %v, want %v and %v",
				c.ranks, c.nodes, len(cpus), got.Spin, got.StrobeSpin, c.spin, c.strobeSpin)
		}
	}
}

// TestCheckJobSpinSetInCode: a program that builds its configuration with
// configs.Default and sets spin and strobe_spin itself runs with them, also
// on an oversubscribed host (launch.Run resolves only the defaults).
func TestCheckJobSpinSetInCode(t *testing.T) {
	cpus, err := unix.Affinity()
	if err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	cfg := configs.Default()
	cfg.Spin, cfg.StrobeSpin = 50*time.Microsecond, 80*time.Microsecond
	got, _, err := checkJob(Job{Ranks: len(cpus), Program: "true", Config: cfg}) // ranks + strobe thread > CPUs
	if err != nil {
		t.Fatal(err)
	}
	if got.Spin != cfg.Spin || got.StrobeSpin != cfg.StrobeSpin {
		t.Errorf("%d ranks on %d CPUs: spin %v strobe_spin %v, want the values set in code, %v and %v",
			len(cpus), len(cpus), got.Spin, got.StrobeSpin, cfg.Spin, cfg.StrobeSpin)
	}
}
