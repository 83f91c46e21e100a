package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// The master's part of the MDS of a job across hosts in a gang. The
// master's hooks (strobe.SliceRecord every slice, every slice's exchanged
// descriptors) run where the master runs: in the gang daemon's process.
// Node 0's bcsd, on the daemon's host, hands the daemon what it needs in
// the place's start (GangMDS): its staging directory, the EMDS global
// selection and window, the file mode and the job's ranks. The daemon keeps
// the job's global EMDS window and counts its user messages (MasterMDS, on
// the job's gang worker), and when the job leaves the gang it writes
// emds-global.csv into node 0's staging directory, whole (a temporary file
// renamed), and returns the user traffic's non-zero cells with the job's
// end; node 0 adds them to its own counts of collective traffic (its
// agent's plans) and writes comm-matrix.csv as a master of its own would
// have. Then node 0's bcsd ships its directory to bcsrun as usual
// (hostmds.go), emds-global.csv included: the job's MDS directory has the
// same files as without a gang.

// GangMDS is what node 0's MDS asks of its master in the gang.
type GangMDS struct {
	Dir      string      `json:"dir"`    // node 0's staging directory, on the daemon's host
	Select   []bool      `json:"select"` // the EMDS global metrics selected, in emds.GlobalMetrics order
	First    uint64      `json:"first"`
	Slices   uint64      `json:"slices"`
	FileMode os.FileMode `json:"file_mode"`
	Ranks    int         `json:"ranks"`
}

// Traffic is one non-zero cell of the user point-to-point traffic the
// master counted.
type Traffic struct {
	Src   int    `json:"src"`
	Dst   int    `json:"dst"`
	Msgs  uint64 `json:"msgs"`
	Bytes uint64 `json:"bytes"`
}

// maxGangRanks bounds the ranks of a job whose traffic the daemon counts
// (ranks² counters of 16 bytes: 64 MiB at 2048 ranks).
const maxGangRanks = 2048

// gangMDS is what node 0's MDS asks of its master in a gang; nil when it
// keeps no EMDS.
func (m *monitor) gangMDS(cfg configs.Config) *GangMDS {
	if m == nil || !m.mode.Elan || m.dir == "" {
		return nil
	}
	gsel, _, _ := cfg.EMDSSelection()
	if gsel == nil { // every metric
		gsel = make([]bool, len(emds.GlobalMetrics))
		for i := range gsel {
			gsel[i] = true
		}
	}
	return &GangMDS{Dir: m.dir, Select: gsel, First: cfg.EMDSFirst, Slices: cfg.EMDSSlices, FileMode: m.fmode, Ranks: m.ranks}
}

// addTraffic adds the master's counts of user traffic (node 0, in a gang).
func (m *monitor) addTraffic(cells []Traffic) {
	if m == nil || m.msgs == nil {
		return
	}
	for _, c := range cells {
		if c.Src >= 0 && c.Src < m.ranks && c.Dst >= 0 && c.Dst < m.ranks {
			k := c.Src*m.ranks + c.Dst
			m.msgs[k] += c.Msgs
			m.bytes[k] += c.Bytes
		}
	}
}

// MasterMDS is the master's part of a ganged job's MDS, kept by the gang
// daemon. OnSlice and OnDEM are the master's hooks (the job's gang worker);
// Finish is called once the job has left the gang.
type MasterMDS struct {
	spec   GangMDS
	window *emds.Window
	vals   []int64
	msgs   []uint64
	bytes  []uint64
}

// NewMasterMDS checks spec (node 0's staging directory must be a
// directory of this user's named bcs-mds-*) and allocates the window.
func NewMasterMDS(spec GangMDS) (*MasterMDS, error) {
	switch {
	case !filepath.IsAbs(spec.Dir) || !strings.HasPrefix(filepath.Base(spec.Dir), stagingPrefix):
		return nil, fmt.Errorf("MDS staging directory %q: want an absolute path to a %s* directory", spec.Dir, stagingPrefix)
	case len(spec.Select) != len(emds.GlobalMetrics):
		return nil, fmt.Errorf("MDS: %d global metrics selected, want a choice for each of %d", len(spec.Select), len(emds.GlobalMetrics))
	case spec.Slices < 1 || spec.Slices > 10_000_000:
		return nil, fmt.Errorf("MDS: emds_slices = %d, want 1 .. 10,000,000", spec.Slices)
	case spec.Ranks < 1 || spec.Ranks > maxGangRanks:
		return nil, fmt.Errorf("MDS: %d ranks, want 1 .. %d for the master's traffic counts", spec.Ranks, maxGangRanks)
	case spec.FileMode&^0o777 != 0:
		return nil, fmt.Errorf("MDS: file mode %v, want permission bits only", spec.FileMode)
	}
	fi, err := os.Stat(spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("MDS staging directory: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("MDS staging directory %s: not a directory of uid %d", spec.Dir, os.Getuid())
	}
	return &MasterMDS{spec: spec, window: emds.NewWindow(emds.GlobalMetrics, spec.Select, spec.First, spec.Slices),
		vals: make([]int64, len(emds.GlobalMetrics)), msgs: make([]uint64, spec.Ranks*spec.Ranks), bytes: make([]uint64, spec.Ranks*spec.Ranks)}, nil
}

// OnSlice records the master's global metrics of a slice.
func (m *MasterMDS) OnSlice(r *strobe.SliceRecord) {
	globalValues(m.vals, r)
	m.window.Record(uint64(r.Slice), m.vals)
}

// OnDEM counts the slice's user point-to-point traffic.
func (m *MasterMDS) OnDEM(all []proto.Descriptor) { countSends(m.msgs, m.bytes, m.spec.Ranks, all) }

// Finish writes emds-global.csv into node 0's staging directory and returns
// the non-zero cells of the user traffic.
func (m *MasterMDS) Finish() ([]Traffic, error) {
	var cells []Traffic
	for k, n := range m.msgs {
		if n > 0 {
			cells = append(cells, Traffic{Src: k / m.spec.Ranks, Dst: k % m.spec.Ranks, Msgs: n, Bytes: m.bytes[k]})
		}
	}
	return cells, m.window.Dump(filepath.Join(m.spec.Dir, "emds-global.csv"), m.spec.FileMode)
}

// globalValues fills v (emds.GlobalMetrics order) from a master's record.
func globalValues(v []int64, r *strobe.SliceRecord) {
	v[0], v[1], v[2], v[3] = int64(r.GETTS), int64(r.GTDEM), int64(r.GTMSM), int64(r.GTTS)
	v[4], v[5], v[6], v[7], v[8] = int64(r.USRTS), int64(r.USRDEM), int64(r.USRMSM), int64(r.Late), int64(r.Skipped)
}

// countSends counts the user sends among a slice's descriptors into the
// ranks×ranks matrices msgs and bytes.
func countSends(msgs, bytes []uint64, ranks int, all []proto.Descriptor) {
	for i := range all {
		if d := &all[i]; d.Kind == proto.KindSend && d.Rank >= 0 && int(d.Rank) < ranks && d.Peer >= 0 && int(d.Peer) < ranks {
			k := int(d.Rank)*ranks + int(d.Peer)
			msgs[k]++
			bytes[k] += d.Len
		}
	}
}
