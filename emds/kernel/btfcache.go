package kernel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// The CO-RE cache (doc.go, "The CO-RE cache"): what the programs' loading
// takes from the running kernel's BTF, kept from one job to the next in a
// per-user file, so that a job whose kernel and programs are those of the
// file does not decode the kernel's 5 MB of BTF.

// cacheFile is the cache's file in dir for the kernel key and this
// object: one file per kernel build and eBPF object, so that hosts of
// different kernels sharing a home directory, or two versions of bcsmpi,
// do not overwrite each other's.
func cacheFile(dir, key string) string {
	s := sha256.Sum256([]byte(key + "\x00" + objectKey()))
	return filepath.Join(dir, CachePrefix+hex.EncodeToString(s[:8])+".json")
}

// CachePrefix begins the cache files' names (emds-kernel-core-<16 hex
// digits>.json) in their directory (DefaultCacheDir).
const CachePrefix = "emds-kernel-core-"

// cacheMagic opens the file's first line; the line ends with the CRC-32C
// of the rest of the file, in hex.
const cacheMagic = "bcsmpi emds/kernel CO-RE cache v1 crc32c="

// cacheMax bounds the file read: the facts of the four programs take a
// few kB.
const cacheMax = 1 << 20

// CacheOff as Config.CacheDir: no CO-RE cache (the BTF decoded for every
// job).
const CacheOff = "off"

// DefaultCacheDir is the CO-RE cache's directory: $XDG_CACHE_HOME/bcsmpi,
// else $HOME/.cache/bcsmpi; "" when neither is set (no cache).
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "bcsmpi")
}

// coreFacts are what loading the programs needs of the kernel's BTF: the
// CO-RE relocations' results, and the attach targets' type ids. They hold
// for one kernel build (Kernel, kernelKey) and one eBPF object (Object,
// objectKey).
type coreFacts struct {
	Kernel string `json:"kernel"`
	Object string `json:"object"`
	// Attach: tracepoint → the type id of btf_trace_<tracepoint> in the
	// kernel's BTF (a tp_btf program's attach target).
	Attach map[string]uint32 `json:"attach"`
	// Fixups: program → its relocated instructions, in order.
	Fixups map[string][]fixup `json:"fixups"`
}

// fixup is one relocated instruction as cilium/ebpf's CO-RE relocation
// (btf.CORERelocate, COREFixup.Apply) left it: at index Ins of the
// program's instructions, its fields after the fixup. Poison: the
// relocation had no target (a field this kernel lacks, as a
// bpf_core_field_exists branch expects), and the instruction was replaced
// by an invalid one.
type fixup struct {
	Ins      int   `json:"ins"`
	Poison   bool  `json:"poison,omitempty"`
	OpCode   uint8 `json:"op"`
	Dst      uint8 `json:"dst"`
	Src      uint8 `json:"src"`
	Offset   int16 `json:"off"`
	Constant int64 `json:"imm"`
}

// poisonComment is the source line COREFixup.Apply gives a poisoned
// instruction (the verifier's log shows it).
const poisonComment = "instruction poisoned by CO-RE"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c is b's CRC-32C.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// objectKey identifies the embedded eBPF object: its SHA-256.
var objectKey = sync.OnceValue(func() string {
	s := sha256.Sum256(_SchedBytes)
	return hex.EncodeToString(s[:])
})

// notesPath holds the running kernel's ELF notes (the build id among them).
const notesPath = "/sys/kernel/notes"

// kernelKey identifies the running kernel's BTF: its release, the kernel's
// GNU build id (a hash of the linked image, .BTF included; from
// /sys/kernel/notes) and the BTF's size. A kernel without a build id is
// identified by a CRC-32C of the BTF's whole content instead (reading it
// takes some ms). btfSize is the BTF's size.
func kernelKey() (key string, btfSize int64, err error) {
	fi, err := os.Stat(DefaultBTFPath)
	if err != nil {
		return "", 0, err
	}
	id := ""
	if notes, err := os.ReadFile(notesPath); err == nil {
		id = buildID(notes)
	}
	if id == "" {
		raw, err := os.ReadFile(DefaultBTFPath)
		if err != nil {
			return "", 0, err
		}
		id = fmt.Sprintf("btf-crc32c-%08x", crc32c(raw))
	}
	return fmt.Sprintf("%s build-id %s btf %d", unix.KernelRelease(), id, fi.Size()), fi.Size(), nil
}

// buildID finds the GNU build id (note "GNU", type NT_GNU_BUILD_ID = 3) in
// ELF notes (native byte order, 4-byte aligned), in hex; "" if none.
func buildID(notes []byte) string {
	bo := binary.NativeEndian
	for len(notes) >= 12 {
		nsz, dsz, typ := bo.Uint32(notes), bo.Uint32(notes[4:]), bo.Uint32(notes[8:])
		nlen, dlen := (uint64(nsz)+3)&^3, (uint64(dsz)+3)&^3
		if 12+nlen+dlen > uint64(len(notes)) {
			return ""
		}
		name, desc := notes[12:12+nsz], notes[12+nlen:12+nlen+uint64(dsz)]
		if typ == 3 && string(name) == "GNU\x00" && len(desc) > 0 {
			return hex.EncodeToString(desc)
		}
		notes = notes[12+nlen+dlen:]
	}
	return ""
}

// relocated lists each program's instructions that carry a CO-RE
// relocation, by index, in order.
func relocated(cs *ebpf.CollectionSpec) map[string][]int {
	out := make(map[string][]int)
	for name, ps := range cs.Programs {
		for i := range ps.Instructions {
			if btf.CORERelocationMetadata(&ps.Instructions[i]) != nil {
				out[name] = append(out[name], i)
			}
		}
	}
	return out
}

// computeFacts relocates the programs of cs against target (the kernel's
// BTF, decoded) as cilium/ebpf does when it loads them (btf.CORERelocate
// and COREFixup.Apply, per program), and finds the attach targets in the
// running kernel's (kernel); cs is left as it was.
func computeFacts(cs *ebpf.CollectionSpec, target, kernel *btf.Spec, key string) (*coreFacts, error) {
	f := &coreFacts{Kernel: key, Object: objectKey(), Attach: make(map[string]uint32), Fixups: make(map[string][]fixup)}
	noLocalIDs := func(btf.Type) (btf.TypeID, error) {
		return 0, errors.New("emds/kernel: a local type id relocation (not cached)")
	}
	for name, idx := range relocated(cs) {
		ps := cs.Programs[name]
		relos := make([]*btf.CORERelocation, len(idx))
		for k, i := range idx {
			relos[k] = btf.CORERelocationMetadata(&ps.Instructions[i])
		}
		fixes, err := btf.CORERelocate(relos, []*btf.Spec{target}, cs.ByteOrder, noLocalIDs)
		if err != nil {
			return nil, fmt.Errorf("emds/kernel: relocating %s: %w", name, err)
		}
		for k, i := range idx {
			ins := ps.Instructions[i] // a copy: cs keeps its own
			if err := fixes[k].Apply(&ins); err != nil {
				return nil, fmt.Errorf("emds/kernel: relocating %s's instruction %d: %w", name, i, err)
			}
			f.Fixups[name] = append(f.Fixups[name], fixup{Ins: i, Poison: btf.CORERelocationMetadata(&ins) == nil,
				OpCode: uint8(ins.OpCode), Dst: uint8(ins.Dst), Src: uint8(ins.Src), Offset: ins.Offset, Constant: ins.Constant})
		}
	}
	for _, tp := range tracepoints {
		var td *btf.Typedef
		if err := kernel.TypeByName("btf_trace_"+tp, &td); err != nil {
			return nil, fmt.Errorf("emds/kernel: attach target of %s: %w", tp, err)
		}
		id, err := kernel.TypeID(td)
		if err != nil {
			return nil, fmt.Errorf("emds/kernel: attach target of %s: %w", tp, err)
		}
		f.Attach[tp] = uint32(id)
	}
	return f, nil
}

// check says whether f fits cs (its programs and their relocated
// instructions, exactly) and a kernel BTF of btfSize bytes.
func (f *coreFacts) check(cs *ebpf.CollectionSpec, btfSize int64) error {
	if len(f.Attach) != len(tracepoints) {
		return fmt.Errorf("%d attach targets, want %d", len(f.Attach), len(tracepoints))
	}
	for _, tp := range tracepoints {
		// Each type takes 12 bytes or more of the BTF.
		if id := f.Attach[tp]; id == 0 || int64(id) > btfSize/12 {
			return fmt.Errorf("attach target of %s: type id %d, want 1 .. %d", tp, id, btfSize/12)
		}
	}
	want := relocated(cs)
	if len(f.Fixups) != len(want) {
		return fmt.Errorf("relocations for %d programs, want %d", len(f.Fixups), len(want))
	}
	for name, idx := range want {
		got := f.Fixups[name]
		if len(got) != len(idx) {
			return fmt.Errorf("%s: %d relocations, want %d", name, len(got), len(idx))
		}
		ins := cs.Programs[name].Instructions
		for k, x := range got {
			if x.Ins != idx[k] {
				return fmt.Errorf("%s: relocation %d at instruction %d, want %d", name, k, x.Ins, idx[k])
			}
			if dword := ins[x.Ins].OpCode.IsDWordLoad(); asm.OpCode(x.OpCode).IsDWordLoad() != dword {
				return fmt.Errorf("%s: instruction %d's size changed", name, x.Ins)
			}
		}
	}
	return nil
}

// apply puts f's relocated instructions into cs, without their CO-RE
// relocations (cilium/ebpf then finds none to do), as the relocation left
// them. Call check first.
func (f *coreFacts) apply(cs *ebpf.CollectionSpec) {
	for name, fixes := range f.Fixups {
		insns := cs.Programs[name].Instructions
		for _, x := range fixes {
			ins := &insns[x.Ins]
			if x.Poison { // as COREFixup.Apply does: a new instruction, the old one's metadata gone
				*ins = asm.Instruction{OpCode: asm.OpCode(x.OpCode), Dst: asm.Register(x.Dst), Src: asm.Register(x.Src),
					Offset: x.Offset, Constant: x.Constant}.WithSource(asm.Comment(poisonComment))
				continue
			}
			ins.OpCode, ins.Dst, ins.Src, ins.Offset, ins.Constant = asm.OpCode(x.OpCode), asm.Register(x.Dst), asm.Register(x.Src), x.Offset, x.Constant
			*ins = btf.WithCORERelocationMetadata(*ins, nil)
		}
	}
}

// readFacts reads the cache in dir: nil unless it is this user's regular
// file, whole (its CRC), for kernel key and this object, and fits cs.
func readFacts(dir, key string, btfSize int64, cs *ebpf.CollectionSpec) (*coreFacts, error) {
	if err := ownDir(dir); err != nil {
		return nil, err
	}
	path := cacheFile(dir, key)
	fi, err := os.Lstat(path) // before opening: a FIFO would block, a link lead elsewhere
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v)", path, fi.Mode().Type())
	}
	if err := owned(fi); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	raw, err := io.ReadAll(io.LimitReader(fh, cacheMax+1))
	if err != nil {
		return nil, err
	}
	f, err := parseFacts(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case f.Kernel != key:
		return nil, fmt.Errorf("%s: for kernel %q, not %q", path, f.Kernel, key)
	case f.Object != objectKey():
		return nil, fmt.Errorf("%s: for another eBPF object", path)
	}
	if err := f.check(cs, btfSize); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// parseFacts decodes a cache file: its first line (cacheMagic and the
// CRC-32C of the rest), then the facts in JSON.
func parseFacts(raw []byte) (*coreFacts, error) {
	if len(raw) > cacheMax {
		return nil, fmt.Errorf("over %d bytes", cacheMax)
	}
	head, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || !bytes.HasPrefix(head, []byte(cacheMagic)) {
		return nil, errors.New("not a CO-RE cache file (first line)")
	}
	sum, err := strconv.ParseUint(string(head[len(cacheMagic):]), 16, 32)
	if err != nil {
		return nil, fmt.Errorf("its checksum %q: %w", head[len(cacheMagic):], err)
	}
	if got := crc32c(body); got != uint32(sum) {
		return nil, fmt.Errorf("checksum %08x, the content's is %08x (truncated or corrupt)", sum, got)
	}
	var f coreFacts
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// marshal is f as a cache file.
func (f *coreFacts) marshal() ([]byte, error) {
	body, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	head := fmt.Sprintf("%s%08x\n", cacheMagic, crc32c(body))
	return append([]byte(head), body...), nil
}

// writeFacts writes f into dir's cache (creating dir, mode 0700, when it
// is missing): atomically, a temporary file renamed over it, mode 0600.
// It writes nothing into a directory that is not this user's, or that
// group or others may write.
func writeFacts(dir string, f *coreFacts) error {
	raw, err := f.marshal()
	if err != nil {
		return err
	}
	if err := ownAncestor(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := ownDir(dir); err != nil {
		return err
	}
	return writeAtomic(cacheFile(dir, f.Kernel), 0o600, func(w io.Writer) error {
		_, err := w.Write(raw)
		return err
	})
}

// ownAncestor refuses to create dir when its nearest existing ancestor is
// another user's, root's aside (root with another user's HOME would leave
// directories there that the user cannot remove; a user may make one in
// /tmp).
func ownAncestor(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 && d != dir {
				return fmt.Errorf("%s would be made in %s, uid %d's, not this user's (uid %d)", dir, d, st.Uid, os.Geteuid())
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) || d == filepath.Dir(d) {
			return err
		}
	}
}

// ownDir refuses a cache directory that is not a directory (a link to
// one included), is another user's, or that group or others may write.
func ownDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (%v)", dir, fi.Mode().Type())
	}
	if err := owned(fi); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

// owned refuses a file or directory that another user owns or that group
// or others may write: its content decides the offsets the programs read
// the kernel's memory at.
func owned(fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d)", st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("mode %04o: writable by group or others", fi.Mode().Perm())
	}
	return nil
}

// attachCache is a btf.Cache whose kernel BTF holds only the attach
// targets, btf_trace_<tracepoint> at their type ids in the running
// kernel's BTF (every other id a placeholder, a void pointer): all that
// cilium/ebpf looks up in it for these programs, once their CO-RE
// relocations are applied (coreFacts.apply). cilium/ebpf v0.22 offers no
// way to give a program's attach target by id, nor a Cache its kernel's
// BTF: the spec is set in the Cache's (unexported) field, after checking
// that it has the expected name and type (errNoInject otherwise: the
// caller decodes the kernel's BTF).
func attachCache(attach map[string]uint32) (*btf.Cache, error) {
	names := make([]string, 0, len(attach))
	for tp := range attach {
		names = append(names, tp)
	}
	sort.Strings(names)
	strs := []byte{0}
	nameAt := make(map[uint32]uint32, len(names)) // type id → its name's offset
	maxID := uint32(0)
	for _, tp := range names {
		id := attach[tp]
		if _, dup := nameAt[id]; dup || id == 0 {
			return nil, fmt.Errorf("emds/kernel: attach target of %s: type id %d repeated or void", tp, id)
		}
		nameAt[id] = uint32(len(strs))
		strs = append(append(strs, "btf_trace_"+tp...), 0)
		maxID = max(maxID, id)
	}
	const hdrLen, typeLen = 24, 12
	bo := binary.NativeEndian
	raw := make([]byte, hdrLen+int(maxID)*typeLen+len(strs))
	bo.PutUint16(raw[0:], 0xeb9f) // magic
	raw[2] = 1                    // version
	bo.PutUint32(raw[4:], hdrLen)
	bo.PutUint32(raw[8:], 0)                  // type_off
	bo.PutUint32(raw[12:], maxID*typeLen)     // type_len
	bo.PutUint32(raw[16:], maxID*typeLen)     // str_off
	bo.PutUint32(raw[20:], uint32(len(strs))) // str_len
	const kindPtr, kindTypedef = 2, 8
	for id := uint32(1); id <= maxID; id++ {
		t := raw[hdrLen+(id-1)*typeLen:]
		if off, ok := nameAt[id]; ok {
			bo.PutUint32(t[0:], off)
			bo.PutUint32(t[4:], kindTypedef<<24) // of void
		} else {
			bo.PutUint32(t[4:], kindPtr<<24) // void *
		}
	}
	copy(raw[hdrLen+int(maxID)*typeLen:], strs)
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("emds/kernel: the attach targets' BTF: %w", err)
	}
	c := btf.NewCache()
	if !setKernel(c, spec) {
		return nil, errNoInject
	}
	return c, nil
}

// errNoInject: this cilium/ebpf's btf.Cache is not the one setKernel knows.
var errNoInject = errors.New("emds/kernel: btf.Cache has no field kernelTypes *btf.Spec (a cilium/ebpf other than v0.22)")

// setKernel sets a new Cache's kernel BTF (its field kernelTypes, which
// Cache.Kernel returns once set), if the field is there with that type.
func setKernel(c *btf.Cache, spec *btf.Spec) bool {
	f := reflect.ValueOf(c).Elem().FieldByName("kernelTypes")
	if !f.IsValid() || f.Type() != reflect.TypeOf(spec) {
		return false
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(spec))
	got, err := c.Kernel()
	return err == nil && got == spec
}
