package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// The master's part of a ganged job's MDS, as the gang daemon keeps it:
// a bad request is refused naming the value; the slices' records become
// emds-global.csv in node 0's staging directory (the window's slices, the
// selected metrics, the file mode) and the user sends the non-zero cells
// of the traffic that node 0 adds to its matrix.
func TestMasterMDS(t *testing.T) {
	dir, err := os.MkdirTemp("", stagingPrefix+"test-node0-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	all := make([]bool, len(emds.GlobalMetrics))
	for i := range all {
		all[i] = true
	}
	spec := GangMDS{Dir: dir, Select: all, First: 2, Slices: 3, FileMode: 0o640, Ranks: 3}
	for _, c := range []struct {
		mod  func(*GangMDS)
		want string
	}{
		{func(g *GangMDS) { g.Dir = "rel/" + stagingPrefix + "x" }, "want an absolute path to a bcs-mds-* directory"},
		{func(g *GangMDS) { g.Dir = "/tmp" }, "want an absolute path to a bcs-mds-* directory"},
		{func(g *GangMDS) { g.Dir = dir + "-gone" }, "no such file or directory"},
		{func(g *GangMDS) { g.Select = all[:2] }, "2 global metrics selected"},
		{func(g *GangMDS) { g.Slices = 0 }, "emds_slices = 0, want 1 .. 10,000,000"},
		{func(g *GangMDS) { g.Ranks = maxGangRanks + 1 }, "2049 ranks, want 1 .. 2048"},
		{func(g *GangMDS) { g.FileMode = os.ModeSetuid | 0o600 }, "want permission bits only"},
	} {
		bad := spec
		c.mod(&bad)
		if _, err := NewMasterMDS(bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewMasterMDS(%+v): %v, want an error saying %q", bad, err, c.want)
		}
	}
	m, err := NewMasterMDS(spec)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 6 {
		m.OnSlice(&strobe.SliceRecord{Slice: proto.SliceID(k), GETTS: time.Duration(1000 + k), Late: time.Duration(k)})
		m.OnDEM([]proto.Descriptor{{Kind: proto.KindSend, Rank: 0, Peer: 2, Len: 10}, {Kind: proto.KindRecv, Rank: 2, Peer: 0},
			{Kind: proto.KindSend, Rank: 1, Peer: 7, Len: 1}}) // a peer beyond the ranks is not counted
	}
	cells, err := m.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 1 || cells[0] != (Traffic{Src: 0, Dst: 2, Msgs: 6, Bytes: 60}) {
		t.Errorf("traffic %+v, want 0→2: 6 messages, 60 bytes", cells)
	}
	path := filepath.Join(dir, "emds-global.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	getts, err := s.Col("GETTS")
	if err != nil || len(s.Slices) != 3 || s.Slices[0] != 2 || getts[0] != 1002 || getts[2] != 1004 {
		t.Errorf("emds-global.csv: slices %v, GETTS %v (%v); want slices 2..4, GETTS 1002..1004", s.Slices, getts, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("emds-global.csv: %v, %v; want mode 0640", fi.Mode(), err)
	}
}
