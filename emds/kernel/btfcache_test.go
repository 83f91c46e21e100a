package kernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// TestMain puts the CO-RE cache of the tests' Opens (DefaultCacheDir) in
// a directory of the tests' own, and fills it first where the monitor can
// run (root, BTF): the monitor's end-to-end tests then load their
// programs from the cache (open checks it), and the tests below exercise
// the decoding path in directories of their own.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "emds-kernel-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	if canRun() && os.Getenv("EMDS_KERNEL_COLD_DIR") == "" { // not in BenchmarkColdStart's child
		l := newLoad(Config{})
		if l.prepare(); l.err == nil {
			if objs, err := l.load(2, 1, os.Getpid()); err == nil {
				objs.Close()
			}
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// canRun says whether the monitor can load here: root, with the kernel's BTF.
func canRun() bool {
	_, err := os.Stat(DefaultBTFPath)
	return os.Getuid() == 0 && err == nil
}

// needRoot skips a test that loads programs where that is impossible.
func needRoot(t *testing.T) {
	t.Helper()
	if !canRun() {
		t.Skip("loading the programs needs root and the kernel's BTF")
	}
}

// loadIn prepares and loads the programs (1 rank) with the cache in dir:
// whether the BTF's facts came from the cache, and each program's tag (the
// kernel's hash of its instructions as loaded, map references aside).
func loadIn(t *testing.T, dir string) (cached bool, tags map[string]string, l *btfLoad) {
	t.Helper()
	l = newLoad(Config{CacheDir: dir})
	if l.prepare(); l.err != nil {
		t.Fatalf("BTF: %v", l.err)
	}
	objs, err := l.load(2, 1, os.Getpid())
	if err != nil {
		t.Fatalf("loading (from the cache: %v): %v", l.start.cached, err)
	}
	defer objs.Close()
	cached = l.start.cached // false after a fallback to decoding
	tags = make(map[string]string)
	for name, p := range map[string]*ebpf.Program{schedProgOnSwitch: objs.OnSwitch, schedProgOnWaking: objs.OnWaking,
		schedProgOnWakeupNew: objs.OnWakeupNew, schedProgOnMigrate: objs.OnMigrate} {
		info, err := p.Info()
		if err != nil {
			t.Fatal(err)
		}
		tags[name] = info.Tag
	}
	return cached, tags, l
}

// cacheFiles lists dir's cache files.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, CachePrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCacheHitLoadsTheSamePrograms(t *testing.T) {
	needRoot(t)
	dir := filepath.Join(t.TempDir(), "made", "bcsmpi") // made by the first load
	cached, decoded, l := loadIn(t, dir)
	if cached {
		t.Fatal("an empty cache directory served the facts")
	}
	if l.writeErr != nil {
		t.Fatalf("the cache was not written: %v", l.writeErr)
	}
	files := cacheFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("cache files after the first load: %v, want one", files)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, files[0]: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v (%v), want mode %v", path, fi.Mode(), err, want)
		}
	}
	cached, fromCache, l := loadIn(t, dir)
	if !cached {
		t.Fatalf("the second load decoded the BTF: %v", l.cacheErr)
	}
	if l.spec != nil {
		t.Error("the second load has a decoded BTF")
	}
	for name, tag := range decoded {
		if fromCache[name] != tag {
			t.Errorf("%s: loaded from the cache with tag %s, decoded %s: not the same instructions", name, fromCache[name], tag)
		}
	}
	// The facts on file are what the relocation gives now.
	key, size, err := kernelKey()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := loadSched()
	if err != nil {
		t.Fatal(err)
	}
	onFile, err := readFacts(dir, key, size, cs)
	if err != nil {
		t.Fatal(err)
	}
	full := newLoad(Config{})
	full.decode()
	kernel, err := full.cache.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	now, err := computeFacts(cs, full.spec, kernel, key)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := onFile.marshal()
	b, _ := now.marshal()
	if !bytes.Equal(a, b) {
		t.Errorf("the cache holds\n%s\nthe relocation now gives\n%s", a, b)
	}
	poisoned := 0
	for _, fx := range now.Fixups {
		for _, x := range fx {
			if x.Poison {
				poisoned++
			}
		}
	}
	t.Logf("%d programs relocated, %d poisoned relocations (a field this kernel lacks); attach ids %v", len(now.Fixups), poisoned, now.Attach)
}

// TestCacheMonitorFromCache: a whole Open from the cache runs the monitor
// (its rows filled) and says so in emds-kernel-cost.csv.
func TestCacheMonitorFromCache(t *testing.T) {
	needRoot(t)
	m := open(t, 1) // from TestMain's cache
	if !m.start.cached {
		t.Fatal("Open did not take the cache TestMain filled")
	}
	m.AddRank(0, os.Getpid())
	s := run(t, m, 20, 2e6)
	if on := sum(t, s, "ONCPU"); on <= 0 {
		t.Errorf("ONCPU of this process over 20 slices: %d, want > 0", on)
	}
	dir := t.TempDir()
	if err := m.Dump(dir, 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "emds-kernel-cost.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "\nstart_btf,1,") || !strings.Contains(string(raw), "\nstart_load,1,") {
		t.Errorf("emds-kernel-cost.csv does not say the BTF came from the cache:\n%s", raw)
	}
}

// damage rewrites dir's one cache file.
func damage(t *testing.T, dir string, how func(raw []byte) []byte) string {
	t.Helper()
	files := cacheFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], how(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	return files[0]
}

// refact rewrites the cache file's facts, with a valid checksum.
func refact(t *testing.T, change func(f *coreFacts)) func([]byte) []byte {
	return func(raw []byte) []byte {
		f, err := parseFacts(raw)
		if err != nil {
			t.Fatal(err)
		}
		change(f)
		out, err := f.marshal()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

func TestCacheDamagedIsIgnoredAndRebuilt(t *testing.T) {
	needRoot(t)
	for _, c := range []struct {
		name string
		how  func(t *testing.T, dir string)
		why  string // in cacheErr
	}{
		{"flipped byte", func(t *testing.T, dir string) {
			damage(t, dir, func(raw []byte) []byte { raw[len(raw)/2] ^= 0x20; return raw })
		}, "checksum"},
		{"truncated", func(t *testing.T, dir string) {
			damage(t, dir, func(raw []byte) []byte { return raw[:len(raw)*2/3] })
		}, "checksum"},
		{"empty", func(t *testing.T, dir string) {
			damage(t, dir, func([]byte) []byte { return nil })
		}, "not a CO-RE cache"},
		{"another kernel", func(t *testing.T, dir string) {
			damage(t, dir, refact(t, func(f *coreFacts) { f.Kernel = "5.15.0 build-id 00 btf 1" }))
		}, "for kernel"},
		{"another object", func(t *testing.T, dir string) {
			damage(t, dir, refact(t, func(f *coreFacts) { f.Object = strings.Repeat("0", 64) }))
		}, "another eBPF object"},
		{"a relocation missing", func(t *testing.T, dir string) {
			damage(t, dir, refact(t, func(f *coreFacts) { f.Fixups[schedProgOnSwitch] = f.Fixups[schedProgOnSwitch][1:] }))
		}, "relocations, want"},
		{"attach id out of range", func(t *testing.T, dir string) {
			damage(t, dir, refact(t, func(f *coreFacts) { f.Attach["sched_switch"] = 1 << 30 }))
		}, "type id"},
		// Facts the checks pass and the kernel refuses: the load falls
		// back to the decoded BTF, and the file is rewritten.
		{"attach targets swapped", func(t *testing.T, dir string) {
			damage(t, dir, refact(t, func(f *coreFacts) {
				f.Attach["sched_switch"], f.Attach["sched_waking"] = f.Attach["sched_waking"], f.Attach["sched_switch"]
			}))
		}, "loading with the cache's facts"},
		{"unreadable: a directory", func(t *testing.T, dir string) {
			files := cacheFiles(t, dir)
			if err := os.Remove(files[0]); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(files[0], 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"unreadable: a FIFO", func(t *testing.T, dir string) {
			files := cacheFiles(t, dir)
			if err := os.Remove(files[0]); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(files[0], 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"unreadable: a link", func(t *testing.T, dir string) {
			files := cacheFiles(t, dir)
			if err := os.Rename(files[0], files[0]+".elsewhere"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(files[0]+".elsewhere", files[0]); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"another user's", func(t *testing.T, dir string) {
			if err := os.Chown(cacheFiles(t, dir)[0], 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "owned by uid 65534"},
		{"writable by others", func(t *testing.T, dir string) {
			if err := os.Chmod(cacheFiles(t, dir)[0], 0o666); err != nil {
				t.Fatal(err)
			}
		}, "writable by group or others"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if cached, _, _ := loadIn(t, dir); cached {
				t.Fatal("a new directory served the facts")
			}
			_, want, _ := loadIn(t, dir)
			c.how(t, dir)
			cached, tags, l := loadIn(t, dir)
			if l.cacheErr == nil || !strings.Contains(l.cacheErr.Error(), c.why) {
				t.Errorf("why the cache was not used: %v, want it to say %q", l.cacheErr, c.why)
			}
			if cached {
				t.Error("the damaged cache was used")
			}
			for name, tag := range want {
				if tags[name] != tag {
					t.Errorf("%s: tag %s, want %s", name, tags[name], tag)
				}
			}
			// Rebuilt: renamed over what was there (in this user's
			// directory), but for a directory, which a rename cannot
			// replace.
			if c.name == "unreadable: a directory" {
				return
			}
			if cached, _, l := loadIn(t, dir); !cached {
				t.Errorf("the cache was not rebuilt: %v", l.cacheErr)
			}
		})
	}
}

func TestCacheConcurrentFirstJobs(t *testing.T) {
	needRoot(t)
	dir := filepath.Join(t.TempDir(), "bcsmpi")
	const n = 4
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := newLoad(Config{CacheDir: dir})
			if l.prepare(); l.err != nil {
				errs <- l.err
				return
			}
			objs, err := l.load(2, 1, os.Getpid())
			if err != nil {
				errs <- err
				return
			}
			objs.Close()
			if !l.start.cached && l.writeErr != nil {
				errs <- fmt.Errorf("writing the cache: %w", l.writeErr)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the cache directory holds %v, want one file (no temporary left)", entries)
	}
	if cached, _, l := loadIn(t, dir); !cached {
		t.Errorf("after concurrent first loads the cache is not usable: %v", l.cacheErr)
	}
}

func TestCacheDirNotWritable(t *testing.T) {
	needRoot(t)
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "other")
	loose := filepath.Join(root, "loose")
	for _, d := range []string{other, loose} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, dir, check string }{
		{"under a file", filepath.Join(file, "bcsmpi"), file},
		{"another user's", other, other},
		{"in another user's", filepath.Join(other, "bcsmpi"), other},
		{"writable by others", loose, loose},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Open(Config{Ranks: 1, RuntimePID: os.Getpid(), Len: 100, CacheDir: c.dir})
			if err != nil {
				t.Fatalf("Open with the cache in %s: %v", c.dir, err)
			}
			defer m.Close()
			if m.start.cached {
				t.Error("the facts came from a cache")
			}
			m.AddRank(0, os.Getpid())
			if on := sum(t, run(t, m, 10, 2e6), "ONCPU"); on <= 0 {
				t.Errorf("ONCPU over 10 slices: %d, want > 0", on)
			}
			if fi, err := os.Stat(c.check); err == nil && fi.IsDir() {
				if entries, _ := os.ReadDir(c.check); len(entries) != 0 {
					t.Errorf("%s holds %v, want nothing written", c.check, entries)
				}
			}
		})
	}
}

func TestBuildID(t *testing.T) {
	note := func(name string, typ uint32, desc []byte) []byte {
		var b bytes.Buffer
		pad := func(n int) { b.Write(make([]byte, (4-n%4)%4)) }
		binary.Write(&b, binary.NativeEndian, [3]uint32{uint32(len(name)), uint32(len(desc)), typ})
		b.WriteString(name)
		pad(len(name))
		b.Write(desc)
		pad(len(desc))
		return b.Bytes()
	}
	id := []byte{0x48, 0xdc, 0x54, 0x0c, 0x8b}
	xen := note("Xen\x00", 18, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	for _, c := range []struct {
		name  string
		notes []byte
		want  string
	}{
		{"alone", note("GNU\x00", 3, id), "48dc540c8b"},
		{"after others", append(append([]byte{}, xen...), note("GNU\x00", 3, id)...), "48dc540c8b"},
		{"another type", note("GNU\x00", 1, id), ""},
		{"another owner", note("Linux\x00", 3, id), ""},
		{"truncated", note("GNU\x00", 3, id)[:18], ""},
		{"empty", nil, ""},
	} {
		if got := buildID(c.notes); got != c.want {
			t.Errorf("%s: buildID = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseFactsRejects(t *testing.T) {
	good, err := (&coreFacts{Kernel: "k", Object: "o", Attach: map[string]uint32{"sched_switch": 7}}).marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseFacts(good); err != nil {
		t.Fatalf("a file marshal wrote: %v", err)
	}
	head, body, _ := bytes.Cut(good, []byte("\n"))
	for _, c := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"empty", nil, "first line"},
		{"no body", head, "first line"},
		{"other magic", append([]byte("bcsmpi something else\n"), body...), "first line"},
		{"bad checksum", append([]byte(cacheMagic+"xyz\n"), body...), "checksum"},
		{"truncated", good[:len(good)-5], "checksum"},
		{"too large", append(good, make([]byte, cacheMax)...), "over"},
		{"unknown field", withSum([]byte(`{"kernel":"k","extra":1}`)), "unknown field"},
		{"not JSON", withSum([]byte(`kernel=k`)), "invalid"},
	} {
		if _, err := parseFacts(c.raw); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// withSum is a cache file of body, its checksum right.
func withSum(body []byte) []byte {
	return append(fmt.Appendf(nil, "%s%08x\n", cacheMagic, crc32c(body)), body...)
}

func FuzzParseFacts(f *testing.F) {
	good, _ := (&coreFacts{Kernel: "k", Object: "o", Attach: map[string]uint32{"sched_switch": 7},
		Fixups: map[string][]fixup{"p": {{Ins: 3, OpCode: 0x61, Offset: 1268}}}}).marshal()
	f.Add(good)
	f.Add([]byte(cacheMagic + "0\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cf, err := parseFacts(raw)
		if err != nil {
			return
		}
		// What parses marshals back to a file that parses to the same.
		again, err := cf.marshal()
		if err != nil {
			t.Fatal(err)
		}
		cf2, err := parseFacts(again)
		if err != nil {
			t.Fatalf("re-marshalled facts do not parse: %v", err)
		}
		if b, _ := cf2.marshal(); !bytes.Equal(b, again) {
			t.Fatalf("facts changed over a round trip:\n%s\n%s", again, b)
		}
	})
}

func TestAttachCacheLooksUpTheIDs(t *testing.T) {
	attach := map[string]uint32{"sched_switch": 10300, "sched_waking": 17, "sched_wakeup_new": 1, "sched_migrate_task": 10304}
	c, err := attachCache(attach)
	if errors.Is(err, errNoInject) {
		t.Fatalf("%v: cilium/ebpf's btf.Cache changed; the CO-RE cache cannot give the attach targets", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	k, err := c.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	for tp, want := range attach {
		var td *btf.Typedef
		if err := k.TypeByName("btf_trace_"+tp, &td); err != nil {
			t.Fatalf("%s: %v", tp, err)
		}
		if id, err := k.TypeID(td); err != nil || uint32(id) != want {
			t.Errorf("%s: type id %d (%v), want %d", tp, id, err, want)
		}
	}
	if _, err := attachCache(map[string]uint32{"a": 3, "b": 3}); err == nil {
		t.Error("two attach targets at one id were accepted")
	}
}

// TestColdStartHelper is BenchmarkColdStart's child: in a new process (a
// job's), it prepares and loads the programs with the cache in
// $EMDS_KERNEL_COLD_DIR ("off": none) and prints the two phases' ns.
func TestColdStartHelper(t *testing.T) {
	dir := os.Getenv("EMDS_KERNEL_COLD_DIR")
	if dir == "" {
		t.Skip("BenchmarkColdStart's child")
	}
	l := newLoad(Config{CacheDir: dir})
	if l.prepare(); l.err != nil {
		t.Fatal(l.err)
	}
	objs, err := l.load(2, 1, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	objs.Close()
	fmt.Printf("cold %v %d %d\n", l.start.cached, l.start.btfNS, l.start.loadNS)
}

// BenchmarkColdStart: what the BTF and the programs' loading take in a new
// process, as in a job's (cilium/ebpf's feature probes included): each
// iteration starts this test binary twice, with a warm CO-RE cache
// (cached-btf-ms, cached-load-ms) and without one (decode-ms, load-ms).
// Needs root and BTF:
//
//	go test -run XXX -bench ColdStart -benchtime 10x -count 3 ./emds/kernel
func BenchmarkColdStart(b *testing.B) {
	if !canRun() {
		b.Skip("needs root and the kernel's BTF")
	}
	dir := b.TempDir()
	child := func(dir string, wantCached bool) (btfNS, loadNS int64) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestColdStartHelper$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "EMDS_KERNEL_COLD_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		var cached bool
		i := bytes.Index(out, []byte("cold "))
		if i < 0 {
			b.Fatalf("no figures from the child:\n%s", out)
		}
		if _, err := fmt.Sscanf(string(out[i:]), "cold %t %d %d", &cached, &btfNS, &loadNS); err != nil || cached != wantCached {
			b.Fatalf("child's figures %q (%v), want from the cache %v", out[i:], err, wantCached)
		}
		return btfNS, loadNS
	}
	child(dir, false) // fills the cache
	var cb, cl, db, dl int64
	for b.Loop() {
		x, y := child(dir, true)
		cb, cl = cb+x, cl+y
		x, y = child(CacheOff, false)
		db, dl = db+x, dl+y
	}
	ms := func(v int64) float64 { return float64(v) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(cb), "cached-btf-ms")
	b.ReportMetric(ms(cl), "cached-load-ms")
	b.ReportMetric(ms(db), "decode-ms")
	b.ReportMetric(ms(dl), "load-ms")
}
