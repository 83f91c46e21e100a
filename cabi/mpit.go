package main

/*
#include "shim.h"
*/
import "C"

import (
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// The MPI tool information interface (MPI_T_*, MPI 5.0 chapter 15): control
// variables that show the job's configuration keys, performance variables
// that show this rank's counters, their categories, enumerations, one
// source (the MPI_Wtime clock) and no events. doc.go ("MPI_T") lists the
// variables. Every function returns an MPI_T error code itself, never
// through an error handler, and every one but MPI_T_init_thread returns
// MPI_T_ERR_NOT_INITIALIZED outside an MPI_T_init_thread/MPI_T_finalize
// pair (the pairs nest: a count).
//
// Variables are only ever added, so an index stays valid: the variables the
// rank learns at MPI_Init (the region's geometry, the MMDS counters) are
// appended at the end of MPI_Init, which bumps MPI_T_category_changed's
// number.

// Handle bases: a handle is its base + a table index + 1, so 0 (the NULL
// handles) and 1 (MPI_T_PVAR_ALL_HANDLES) are never one.
const (
	tEnumBase    = 0x7e0000
	tCvarBase    = 0x7c000000
	tSessionBase = 0x7a000000
	tPvarBase    = 0x78000000
	tAllHandles  = 1
	// tMaxObjects bounds the cvar handles, sessions and pvar handles made
	// between the first MPI_T_init_thread and the last MPI_T_finalize
	// (indices are not reused within that time, so a stale handle is
	// always told apart): 2^20 of each.
	tMaxObjects = 1 << 20

	dtInt      = 0x209
	dtUnsigned = 0x20d
	dtULL      = 0x20f
	dtDouble   = 0x214
	dtChar     = 0x243
)

// tEnum is an MPI_T_enum: named integer values.
type tEnum struct {
	name  string
	items []string // item i has value i
}

var tEnums = []tEnum{
	{"bcs_leak_check", []string{jobenv.LeakWarn, jobenv.LeakError, jobenv.LeakOff}},
	{"bcs_bool", []string{"false", "true"}},
}

const (
	enumLeak = iota
	enumBool
)

// tVar is a control or performance variable. A variable whose datatype is
// MPI_CHAR reads as a NUL-terminated string (str), any other as an integer
// (num).
type tVar struct {
	name, desc string
	verbosity  int
	dtype      uintptr
	enum       int // index into tEnums, or -1
	cat        int
	// control variables
	scope int
	// performance variables
	class                        int
	readonly, continuous, atomic bool
	str                          func() string
	num                          func() uint64
}

type tCategory struct {
	name, desc string
	cvars      []int
	pvars      []int
}

// tSession is a performance-experiment session and its handles.
type tSession struct {
	live    bool
	handles []int // indices into tHandles
}

// tHandle is a pvar handle: its variable, session, whether started, and
// the value accumulated while started (acc) up to the raw reading base.
type tHandle struct {
	live    bool
	pvar    int
	session int
	started bool
	acc     uint64
	base    uint64
}

var (
	tRefs      int
	tChanged   int
	tCvars     []tVar
	tPvars     []tVar
	tCats      []tCategory
	tCvarLive  []int // cvar handle i -> cvar index + 1, 0 when freed
	tSessions  []tSession
	tHandles   []tHandle
	tLateAdded bool
	tMMDSLast  [mds.NumPrims][2]uint64 // the last MMDS totals read, kept past Finalize
	tGeomLast  [4]uint64
)

const (
	catRuntime = iota
	catMDS
	catP2P
	catCheck
)

func tSetup() {
	if tCats != nil {
		return
	}
	tCats = []tCategory{
		{name: "bcs_runtime", desc: "bcsmpi's runtime: the strobe's time slice, blocking, request and ring limits, leak checking"},
		{name: "bcs_mds", desc: "the monitoring and debugging system (MDS): its selection for this job and, when this rank records the MMDS, its per-primitive counters"},
		{name: "bcs_p2p", desc: "point-to-point traffic of this rank through the runtime"},
		{name: "bcs_check", desc: "opt-in checks (buffers, flow) and record/replay"},
	}
	env := func(name string) string { return os.Getenv(name) }
	ns := func(name string) func() uint64 {
		return func() uint64 {
			v, _ := strconv.ParseUint(env(name), 10, 64)
			return v
		}
	}
	str := func(name, dflt string) func() string {
		return func() string {
			if v := env(name); v != "" {
				return v
			}
			return dflt
		}
	}
	cv := func(name, desc string, cat int, dtype uintptr, enum int, s func() string, n func() uint64) {
		tCvars = append(tCvars, tVar{name: name, desc: desc, verbosity: C.MPI_T_VERBOSITY_USER_BASIC, dtype: dtype,
			enum: enum, cat: cat, scope: C.MPI_T_SCOPE_CONSTANT, str: s, num: n})
		tCats[cat].cvars = append(tCats[cat].cvars, len(tCvars)-1)
	}
	cv("bcs_timeslice_ns", "timeslice: the strobe's period in nanoseconds (0: a singleton, started without bcsrun)",
		catRuntime, dtULL, -1, nil, ns(jobenv.VarTimeslice))
	cv("bcs_spin_ns", "spin: how long a blocked call busy-waits before it sleeps, in nanoseconds",
		catRuntime, dtULL, -1, nil, ns(jobenv.VarSpin))
	cv("bcs_leak_check", "leak_check: resources not released at the end of the job are reported (warn), fail the job (error) or are not checked (off)",
		catRuntime, dtInt, enumLeak, nil, func() uint64 {
			switch env(jobenv.VarLeakCheck) {
			case jobenv.LeakError:
				return 1
			case jobenv.LeakOff:
				return 2
			}
			return 0
		})
	cv("bcs_mds", "mds: the MDS selection (none, or a list of main, elan, kernel, all); main records this rank's MMDS",
		catMDS, dtChar, -1, str(jobenv.VarMDS, "none"), nil)
	cv("bcs_mds_ranks", "mds_ranks: the ranks that record the MMDS (all, or a list like 0,2-5)",
		catMDS, dtChar, -1, str(jobenv.VarMDSRanks, "all"), nil)
	cv("bcs_mds_primitives", "mds_primitives: the primitives whose latency and size distributions the MMDS keeps (all, or a list of MPI_ names)",
		catMDS, dtChar, -1, str(jobenv.VarMDSPrimitives, "all"), nil)
	cv("bcs_mds_digits", "mds_digits: significant digits of the MMDS distributions (0: the default, 2)",
		catMDS, dtInt, -1, nil, ns(jobenv.VarMDSDigits))
	cv("bcs_mds_interval", "mds_interval: the MMDS is also dumped every interval, a Go duration (0: only at exit)",
		catMDS, dtChar, -1, str(jobenv.VarMDSInterval, "0"), nil)
	cv("bcs_check", "check: the opt-in checks (none, or a list of buffers, buffers:warn, flow, all)",
		catCheck, dtChar, -1, str(jobenv.VarCheck, "none"), nil)
	cv("bcs_record", "bcsrun --record: this job logs its replay records",
		catCheck, dtInt, enumBool, nil, func() uint64 {
			if env(jobenv.VarRecord) != "" {
				return 1
			}
			return 0
		})
	cv("bcs_replay", "bcsrun --replay: the recording this job replays (empty: none)",
		catCheck, dtChar, -1, str(jobenv.VarReplay, ""), nil)

	pv := func(v tVar) {
		v.verbosity, v.enum = C.MPI_T_VERBOSITY_USER_BASIC, -1
		if v.dtype == 0 {
			v.dtype = dtULL
		}
		tPvars = append(tPvars, v)
		tCats[v.cat].pvars = append(tCats[v.cat].pvars, len(tPvars)-1)
	}
	counter := func(name, desc string, f func() uint64) {
		pv(tVar{name: name, desc: desc, cat: catP2P, class: C.MPI_T_PVAR_CLASS_COUNTER, atomic: true, num: f})
	}
	counter("bcs_msgs_sent", "point-to-point messages this rank sent through the runtime (completed sends of every mode; not those on one-process communicators)",
		func() uint64 { return mpiapi.TrafficSoFar().MsgsSent })
	counter("bcs_bytes_sent", "bytes of the messages counted by bcs_msgs_sent",
		func() uint64 { return mpiapi.TrafficSoFar().BytesSent })
	counter("bcs_msgs_received", "point-to-point messages this rank received through the runtime (completed receives, not probes)",
		func() uint64 { return mpiapi.TrafficSoFar().MsgsReceived })
	counter("bcs_bytes_received", "bytes of the messages counted by bcs_msgs_received",
		func() uint64 { return mpiapi.TrafficSoFar().BytesReceived })
	pv(tVar{name: "bcs_requests_in_use", desc: "request slots this rank holds now (of bcs_requests_max); 0 before MPI_Init and after MPI_Finalize",
		cat: catRuntime, class: C.MPI_T_PVAR_CLASS_LEVEL, readonly: true, continuous: true, atomic: false,
		num: func() uint64 { n, _ := mpiapi.RequestsInUse(); return uint64(n) }})
	pv(tVar{name: "bcs_eager_unmatched", desc: "this rank's blocking sends of at most inline_max bytes that returned at their post and no receive has matched yet (mpiapi.EagerHeld)",
		cat: catP2P, class: C.MPI_T_PVAR_CLASS_LEVEL, readonly: true, continuous: true,
		num: func() uint64 { n, _, _ := mpiapi.EagerHeld(); return n }})
	pv(tVar{name: "bcs_eager_unmatched_max", desc: "the most of bcs_eager_unmatched at once so far; never above max(eager_max, the job's size) plus the threads blocked in a send",
		cat: catP2P, class: C.MPI_T_PVAR_CLASS_HIGHWATERMARK, readonly: true, continuous: true,
		num: func() uint64 { _, m, _ := mpiapi.EagerHeld(); return m }})
}

// tRefresh appends the variables known once MPI_Init has run.
func tRefresh() {
	if tLateAdded {
		return
	}
	tSetup()
	g, ok := mpiapi.Geometry()
	if !ok {
		return
	}
	tLateAdded = true
	tGeomLast = [4]uint64{uint64(g.RingSlots), uint64(g.ReqMax), uint64(g.InlineMax), uint64(g.Eager())}
	geom := func(i int) func() uint64 {
		return func() uint64 {
			if g, ok := mpiapi.Geometry(); ok {
				tGeomLast = [4]uint64{uint64(g.RingSlots), uint64(g.ReqMax), uint64(g.InlineMax), uint64(g.Eager())}
			}
			return tGeomLast[i]
		}
	}
	add := func(name, desc string, i int) {
		tCvars = append(tCvars, tVar{name: name, desc: desc, verbosity: C.MPI_T_VERBOSITY_TUNER_BASIC, dtype: dtULL,
			enum: -1, cat: catRuntime, scope: C.MPI_T_SCOPE_CONSTANT, num: geom(i)})
		tCats[catRuntime].cvars = append(tCats[catRuntime].cvars, len(tCvars)-1)
	}
	add("bcs_ring_slots", "ring_slots: descriptors in flight per rank (known from MPI_Init on)", 0)
	add("bcs_requests_max", "requests_max: outstanding requests per rank (known from MPI_Init on)", 1)
	add("bcs_inline_max", "inline_max: bytes of a send copied into its ring slot (known from MPI_Init on)", 2)
	add("bcs_eager_max", "eager_max: a rank's blocking sends of at most inline_max bytes that may be unmatched before a send waits for a match (the larger of it and the job's size is the limit; known from MPI_Init on)", 3)
	det := g.Deterministic
	tCvars = append(tCvars, tVar{name: "bcs_deterministic", desc: "deterministic: wildcards, probes and the Test family are answered by logical time (known from MPI_Init on)",
		verbosity: C.MPI_T_VERBOSITY_USER_BASIC, dtype: dtInt, enum: enumBool, cat: catRuntime, scope: C.MPI_T_SCOPE_CONSTANT,
		num: func() uint64 {
			if det {
				return 1
			}
			return 0
		}})
	tCats[catRuntime].cvars = append(tCats[catRuntime].cvars, len(tCvars)-1)
	if _, _, _, ok := mpiapi.MMDSTotals(0); ok {
		for p := mds.Prim(0); p < mds.NumPrims; p++ {
			read := func(which int) func() uint64 {
				return func() uint64 {
					if c, _, b, ok := mpiapi.MMDSTotals(p); ok {
						tMMDSLast[p] = [2]uint64{uint64(c), uint64(b)}
					}
					return tMMDSLast[p][which]
				}
			}
			tPvars = append(tPvars, tVar{name: "bcs_mmds_" + p.String() + "_count", desc: "MMDS: calls of " + p.String() + " by this rank",
				verbosity: C.MPI_T_VERBOSITY_TUNER_DETAIL, dtype: dtULL, enum: -1, cat: catMDS, class: C.MPI_T_PVAR_CLASS_COUNTER,
				atomic: true, num: read(0)})
			tCats[catMDS].pvars = append(tCats[catMDS].pvars, len(tPvars)-1)
			tPvars = append(tPvars, tVar{name: "bcs_mmds_" + p.String() + "_bytes", desc: "MMDS: bytes moved by " + p.String() + " calls of this rank, as the MMDS counts them",
				verbosity: C.MPI_T_VERBOSITY_TUNER_DETAIL, dtype: dtULL, enum: -1, cat: catMDS, class: C.MPI_T_PVAR_CLASS_COUNTER,
				atomic: true, num: read(1)})
			tCats[catMDS].pvars = append(tCats[catMDS].pvars, len(tPvars)-1)
		}
	}
	tChanged++
}

// tEnter checks that the interface is initialised and adds late variables.
func tEnter() C.int {
	if tRefs == 0 {
		return C.MPI_T_ERR_NOT_INITIALIZED
	}
	tRefresh()
	return 0
}

// tStr copies s into buf as MPI_T's string arguments say: *n is the
// buffer's length in and the string's length + 1 out; nothing is copied
// when buf is NULL or *n is 0; a longer string is truncated.
func tStr(buf *C.char, n *C.int, s string) {
	if n == nil {
		return
	}
	if buf != nil && *n > 0 {
		copyOut(buf, int(*n), s)
	}
	*n = C.int(len(s) + 1)
}

func setInt(p *C.int, v int) {
	if p != nil {
		*p = C.int(v)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

//export bcs_t_init_thread
func bcs_t_init_thread(required C.int, provided *C.int) C.int {
	switch required {
	case C.MPI_THREAD_SINGLE, C.MPI_THREAD_FUNNELED, C.MPI_THREAD_SERIALIZED, C.MPI_THREAD_MULTIPLE:
	default:
		return C.MPI_T_ERR_INVALID
	}
	if provided == nil {
		return C.MPI_T_ERR_INVALID
	}
	tSetup()
	tRefs++
	*provided = threadLevel(required)
	startThreads(*provided)
	return 0
}

//export bcs_t_finalize
func bcs_t_finalize() C.int {
	if tRefs == 0 {
		return C.MPI_T_ERR_NOT_INITIALIZED
	}
	tRefs--
	if tRefs == 0 { // the last finalize frees every handle and session
		tCvarLive, tSessions, tHandles = nil, nil, nil
	}
	return 0
}

//export bcs_t_get_num
func bcs_t_get_num(what C.int, n *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if n == nil {
		return C.MPI_T_ERR_INVALID
	}
	switch what {
	case 0:
		*n = C.int(len(tCvars))
	case 1:
		*n = C.int(len(tPvars))
	case 2:
		*n = C.int(len(tCats))
	case 3:
		*n = 0 // events
	case 4:
		*n = 1 // sources
	}
	return 0
}

func tEnumHandle(i int) C.uintptr_t {
	if i < 0 {
		return 0
	}
	return C.uintptr_t(tEnumBase + i + 1)
}

//export bcs_t_cvar_get_info
func bcs_t_cvar_get_info(i C.int, name *C.char, nameLen, verbosity *C.int, dtype, enumtype *C.uintptr_t, desc *C.char, descLen, bind, scope *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i < 0 || int(i) >= len(tCvars) {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	v := &tCvars[i]
	tStr(name, nameLen, v.name)
	tStr(desc, descLen, v.desc)
	setInt(verbosity, v.verbosity)
	if dtype != nil {
		*dtype = C.uintptr_t(v.dtype)
	}
	if enumtype != nil {
		*enumtype = tEnumHandle(v.enum)
	}
	setInt(bind, C.MPI_T_BIND_NO_OBJECT)
	setInt(scope, v.scope)
	return 0
}

func tIndexOf(vars []tVar, name *C.char, class int) int {
	if name == nil {
		return -1
	}
	s := C.GoString(name)
	for i := range vars {
		if vars[i].name == s && (class < 0 || vars[i].class == class) {
			return i
		}
	}
	return -1
}

//export bcs_t_get_index
func bcs_t_get_index(what C.int, name *C.char, class C.int, out *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if out == nil || name == nil {
		return C.MPI_T_ERR_INVALID
	}
	i := -1
	switch what {
	case 0:
		i = tIndexOf(tCvars, name, -1)
	case 1:
		i = tIndexOf(tPvars, name, int(class))
	case 2:
		s := C.GoString(name)
		for j := range tCats {
			if tCats[j].name == s {
				i = j
			}
		}
	}
	if i < 0 {
		return C.MPI_T_ERR_INVALID_NAME
	}
	*out = C.int(i)
	return 0
}

// tCount is the element count of a handle to v: a string's bytes with its
// NUL, else 1.
func tCount(v *tVar) int {
	if v.dtype == dtChar {
		return len(v.str()) + 1
	}
	return 1
}

// tStore writes x as v's datatype into buf.
func tStore(v *tVar, buf unsafe.Pointer, x uint64) {
	switch v.dtype {
	case dtInt, dtUnsigned:
		*(*uint32)(buf) = uint32(x)
	case dtDouble:
		*(*float64)(buf) = float64(x)
	default:
		*(*uint64)(buf) = x
	}
}

func tLoad(v *tVar, buf unsafe.Pointer) uint64 {
	switch v.dtype {
	case dtInt, dtUnsigned:
		return uint64(*(*uint32)(buf))
	case dtDouble:
		return uint64(*(*float64)(buf))
	}
	return *(*uint64)(buf)
}

//export bcs_t_cvar_handle_alloc
func bcs_t_cvar_handle_alloc(i C.int, obj unsafe.Pointer, out *C.uintptr_t, count *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i < 0 || int(i) >= len(tCvars) {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	if out == nil || count == nil {
		return C.MPI_T_ERR_INVALID
	}
	if len(tCvarLive) >= tMaxObjects {
		return C.MPI_T_ERR_OUT_OF_HANDLES
	}
	tCvarLive = append(tCvarLive, int(i)+1)
	*out = C.uintptr_t(tCvarBase + len(tCvarLive))
	*count = C.int(tCount(&tCvars[i]))
	return 0
}

func tCvarOf(h C.uintptr_t) (*tVar, C.int) {
	k := int(h) - tCvarBase - 1
	if k < 0 || k >= len(tCvarLive) || tCvarLive[k] == 0 {
		return nil, C.MPI_T_ERR_INVALID_HANDLE
	}
	return &tCvars[tCvarLive[k]-1], 0
}

//export bcs_t_cvar_handle_free
func bcs_t_cvar_handle_free(h *C.uintptr_t) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if h == nil {
		return C.MPI_T_ERR_INVALID_HANDLE
	}
	if _, rc := tCvarOf(*h); rc != 0 {
		return rc
	}
	tCvarLive[int(*h)-tCvarBase-1] = 0
	*h = 0
	return 0
}

//export bcs_t_cvar_read
func bcs_t_cvar_read(h C.uintptr_t, buf unsafe.Pointer) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	v, rc := tCvarOf(h)
	if rc != 0 {
		return rc
	}
	if buf == nil {
		return C.MPI_T_ERR_INVALID
	}
	if v.dtype == dtChar {
		s := v.str()
		copyOut((*C.char)(buf), len(s)+1, s)
		return 0
	}
	tStore(v, buf, v.num())
	return 0
}

//export bcs_t_cvar_write
func bcs_t_cvar_write(h C.uintptr_t, buf unsafe.Pointer) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if _, rc := tCvarOf(h); rc != 0 {
		return rc
	}
	return C.MPI_T_ERR_CVAR_SET_NEVER // every variable is the job's configuration, fixed at launch
}

//export bcs_t_enum_get_info
func bcs_t_enum_get_info(e C.uintptr_t, num *C.int, name *C.char, nameLen *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	k := int(e) - tEnumBase - 1
	if k < 0 || k >= len(tEnums) {
		return C.MPI_T_ERR_INVALID_HANDLE
	}
	setInt(num, len(tEnums[k].items))
	tStr(name, nameLen, tEnums[k].name)
	return 0
}

//export bcs_t_enum_get_item
func bcs_t_enum_get_item(e C.uintptr_t, i C.int, value *C.int, name *C.char, nameLen *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	k := int(e) - tEnumBase - 1
	if k < 0 || k >= len(tEnums) {
		return C.MPI_T_ERR_INVALID_HANDLE
	}
	if i < 0 || int(i) >= len(tEnums[k].items) {
		return C.MPI_T_ERR_INVALID_ITEM
	}
	setInt(value, int(i))
	tStr(name, nameLen, tEnums[k].items[i])
	return 0
}

//export bcs_t_pvar_get_info
func bcs_t_pvar_get_info(i C.int, name *C.char, nameLen, verbosity, varClass *C.int, dtype, enumtype *C.uintptr_t, desc *C.char, descLen, bind, readonly, continuous, atomic *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i < 0 || int(i) >= len(tPvars) {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	v := &tPvars[i]
	tStr(name, nameLen, v.name)
	tStr(desc, descLen, v.desc)
	setInt(verbosity, v.verbosity)
	setInt(varClass, v.class)
	if dtype != nil {
		*dtype = C.uintptr_t(v.dtype)
	}
	if enumtype != nil {
		*enumtype = tEnumHandle(v.enum)
	}
	setInt(bind, C.MPI_T_BIND_NO_OBJECT)
	setInt(readonly, boolInt(v.readonly))
	setInt(continuous, boolInt(v.continuous))
	setInt(atomic, boolInt(v.atomic))
	return 0
}

//export bcs_t_pvar_session_create
func bcs_t_pvar_session_create(out *C.uintptr_t) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if out == nil {
		return C.MPI_T_ERR_INVALID
	}
	if len(tSessions) >= tMaxObjects {
		return C.MPI_T_ERR_OUT_OF_SESSIONS
	}
	tSessions = append(tSessions, tSession{live: true})
	*out = C.uintptr_t(tSessionBase + len(tSessions))
	return 0
}

func tSessionOf(s C.uintptr_t) (int, C.int) {
	k := int(s) - tSessionBase - 1
	if k < 0 || k >= len(tSessions) || !tSessions[k].live {
		return 0, C.MPI_T_ERR_INVALID_SESSION
	}
	return k, 0
}

//export bcs_t_pvar_session_free
func bcs_t_pvar_session_free(s *C.uintptr_t) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if s == nil {
		return C.MPI_T_ERR_INVALID_SESSION
	}
	k, rc := tSessionOf(*s)
	if rc != 0 {
		return rc
	}
	for _, h := range tSessions[k].handles {
		tHandles[h].live = false
	}
	tSessions[k] = tSession{}
	*s = 0
	return 0
}

//export bcs_t_pvar_handle_alloc
func bcs_t_pvar_handle_alloc(s C.uintptr_t, i C.int, obj unsafe.Pointer, out *C.uintptr_t, count *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	k, rc := tSessionOf(s)
	if rc != 0 {
		return rc
	}
	if i < 0 || int(i) >= len(tPvars) {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	if out == nil || count == nil {
		return C.MPI_T_ERR_INVALID
	}
	if len(tHandles) >= tMaxObjects {
		return C.MPI_T_ERR_OUT_OF_HANDLES
	}
	v := &tPvars[i]
	h := tHandle{live: true, pvar: int(i), session: k}
	if v.continuous { // continuous variables are active from their allocation
		h.started, h.base = true, v.num()
	}
	tHandles = append(tHandles, h)
	tSessions[k].handles = append(tSessions[k].handles, len(tHandles)-1)
	*out = C.uintptr_t(tPvarBase + len(tHandles))
	*count = C.int(tCount(v))
	return 0
}

// tHandleOf checks a session and one of its handles (not ALL_HANDLES).
func tHandleOf(s, h C.uintptr_t) (*tHandle, C.int) {
	k, rc := tSessionOf(s)
	if rc != 0 {
		return nil, rc
	}
	j := int(h) - tPvarBase - 1
	if j < 0 || j >= len(tHandles) || !tHandles[j].live || tHandles[j].session != k {
		return nil, C.MPI_T_ERR_INVALID_HANDLE
	}
	return &tHandles[j], 0
}

//export bcs_t_pvar_handle_free
func bcs_t_pvar_handle_free(s C.uintptr_t, h *C.uintptr_t) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if h == nil {
		return C.MPI_T_ERR_INVALID_HANDLE
	}
	ph, rc := tHandleOf(s, *h)
	if rc != 0 {
		return rc
	}
	ph.live = false
	*h = 0
	return 0
}

// value is what the handle reads now. Level variables (and any readonly,
// continuous one) read the current value; counters read what accumulated
// while the handle was started.
func (h *tHandle) value() uint64 {
	v := &tPvars[h.pvar]
	if v.class != C.MPI_T_PVAR_CLASS_COUNTER {
		return v.num()
	}
	if h.started {
		return h.acc + v.num() - h.base
	}
	return h.acc
}

// tEach applies f to handle h of session s, or to every handle of the
// session for MPI_T_PVAR_ALL_HANDLES (skip says which ones that form
// ignores). With ALL_HANDLES, failErr is returned if any f failed.
func tEach(s, h C.uintptr_t, skip func(*tVar, *tHandle) bool, f func(*tVar, *tHandle) C.int, failErr C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if h == tAllHandles {
		k, rc := tSessionOf(s)
		if rc != 0 {
			return rc
		}
		var out C.int
		for _, j := range tSessions[k].handles {
			ph := &tHandles[j]
			if !ph.live || skip(&tPvars[ph.pvar], ph) {
				continue
			}
			if f(&tPvars[ph.pvar], ph) != 0 {
				out = failErr
			}
		}
		return out
	}
	ph, rc := tHandleOf(s, h)
	if rc != 0 {
		return rc
	}
	return f(&tPvars[ph.pvar], ph)
}

//export bcs_t_pvar_start
func bcs_t_pvar_start(s, h C.uintptr_t) C.int {
	return tEach(s, h, func(v *tVar, ph *tHandle) bool { return v.continuous || ph.started },
		func(v *tVar, ph *tHandle) C.int {
			if v.continuous {
				return C.MPI_T_ERR_PVAR_NO_STARTSTOP
			}
			if !ph.started {
				ph.started, ph.base = true, v.num()
			}
			return 0
		}, C.MPI_T_ERR_PVAR_NO_STARTSTOP)
}

//export bcs_t_pvar_stop
func bcs_t_pvar_stop(s, h C.uintptr_t) C.int {
	return tEach(s, h, func(v *tVar, ph *tHandle) bool { return v.continuous || !ph.started },
		func(v *tVar, ph *tHandle) C.int {
			if v.continuous {
				return C.MPI_T_ERR_PVAR_NO_STARTSTOP
			}
			if ph.started {
				ph.acc = ph.value()
				ph.started = false
			}
			return 0
		}, C.MPI_T_ERR_PVAR_NO_STARTSTOP)
}

//export bcs_t_pvar_reset
func bcs_t_pvar_reset(s, h C.uintptr_t) C.int {
	return tEach(s, h, func(v *tVar, ph *tHandle) bool { return v.readonly },
		func(v *tVar, ph *tHandle) C.int {
			if v.readonly {
				return C.MPI_T_ERR_PVAR_NO_WRITE
			}
			ph.acc, ph.base = 0, v.num()
			return 0
		}, C.MPI_T_ERR_PVAR_NO_WRITE)
}

// tOne is the check of the calls that take one handle (read, write,
// readreset): MPI_T_PVAR_ALL_HANDLES is not one.
func tOne(s, h C.uintptr_t, buf unsafe.Pointer) (*tVar, *tHandle, C.int) {
	if rc := tEnter(); rc != 0 {
		return nil, nil, rc
	}
	if h == tAllHandles {
		if _, rc := tSessionOf(s); rc != 0 {
			return nil, nil, rc
		}
		return nil, nil, C.MPI_T_ERR_INVALID_HANDLE
	}
	ph, rc := tHandleOf(s, h)
	if rc != 0 {
		return nil, nil, rc
	}
	if buf == nil {
		return nil, nil, C.MPI_T_ERR_INVALID
	}
	return &tPvars[ph.pvar], ph, 0
}

//export bcs_t_pvar_read
func bcs_t_pvar_read(s, h C.uintptr_t, buf unsafe.Pointer) C.int {
	v, ph, rc := tOne(s, h, buf)
	if rc != 0 {
		return rc
	}
	tStore(v, buf, ph.value())
	return 0
}

//export bcs_t_pvar_write
func bcs_t_pvar_write(s, h C.uintptr_t, buf unsafe.Pointer) C.int {
	v, ph, rc := tOne(s, h, buf)
	if rc != 0 {
		return rc
	}
	if v.readonly {
		return C.MPI_T_ERR_PVAR_NO_WRITE
	}
	ph.acc, ph.base = tLoad(v, buf), v.num()
	return 0
}

//export bcs_t_pvar_readreset
func bcs_t_pvar_readreset(s, h C.uintptr_t, buf unsafe.Pointer) C.int {
	v, ph, rc := tOne(s, h, buf)
	if rc != 0 {
		return rc
	}
	if v.readonly {
		return C.MPI_T_ERR_PVAR_NO_WRITE
	}
	if !v.atomic {
		return C.MPI_T_ERR_PVAR_NO_ATOMIC
	}
	tStore(v, buf, ph.value())
	ph.acc, ph.base = 0, v.num()
	return 0
}

//export bcs_t_category_get_info
func bcs_t_category_get_info(i C.int, name *C.char, nameLen *C.int, desc *C.char, descLen, ncvars, npvars, ncats *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i < 0 || int(i) >= len(tCats) {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	c := &tCats[i]
	tStr(name, nameLen, c.name)
	tStr(desc, descLen, c.desc)
	setInt(ncvars, len(c.cvars))
	setInt(npvars, len(c.pvars))
	setInt(ncats, 0)
	return 0
}

// bcs_t_category_list serves MPI_T_category_get_cvars (what 0), _pvars (1),
// _categories (2) and _events (3): up to n indices.
//
//export bcs_t_category_list
func bcs_t_category_list(what, i, n C.int, out *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i < 0 || int(i) >= len(tCats) {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	if n < 0 || (n > 0 && out == nil) {
		return C.MPI_T_ERR_INVALID
	}
	var list []int
	switch what {
	case 0:
		list = tCats[i].cvars
	case 1:
		list = tCats[i].pvars
	}
	dst := unsafe.Slice(out, int(n))
	for j := 0; j < len(list) && j < int(n); j++ {
		dst[j] = C.int(list[j])
	}
	return 0
}

//export bcs_t_category_get_num_events
func bcs_t_category_get_num_events(i C.int, n *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i < 0 || int(i) >= len(tCats) {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	setInt(n, 0)
	return 0
}

//export bcs_t_category_changed
func bcs_t_category_changed(n *C.int) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if n == nil {
		return C.MPI_T_ERR_INVALID
	}
	*n = C.int(tChanged)
	return 0
}

var tClockBase = time.Now()

//export bcs_t_source_get_info
func bcs_t_source_get_info(i C.int, name *C.char, nameLen *C.int, desc *C.char, descLen *C.int, ordering *C.int, ticks, maxTicks *C.int64_t, info *C.uintptr_t) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i != 0 {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	tStr(name, nameLen, "bcs_clock")
	tStr(desc, descLen, "this rank's monotonic clock, in nanoseconds since the library was loaded (no events are raised)")
	setInt(ordering, C.MPI_T_SOURCE_ORDERED)
	if ticks != nil {
		*ticks = 1_000_000_000
	}
	if maxTicks != nil {
		*maxTicks = 1<<63 - 1
	}
	if info != nil {
		*info = C.uintptr_t(newInfo(nil, nil))
	}
	return 0
}

//export bcs_t_source_get_timestamp
func bcs_t_source_get_timestamp(i C.int, ts *C.int64_t) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if i != 0 {
		return C.MPI_T_ERR_INVALID_INDEX
	}
	if ts == nil {
		return C.MPI_T_ERR_INVALID
	}
	*ts = C.int64_t(time.Since(tClockBase))
	return 0
}

// bcs_t_event_index serves the event calls that take an event index: there
// are no events, so every index is invalid.
//
//export bcs_t_event_index
func bcs_t_event_index() C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	return C.MPI_T_ERR_INVALID_INDEX
}

// bcs_t_event_handle serves the event calls that take a registration or an
// instance: none can exist.
//
//export bcs_t_event_handle
func bcs_t_event_handle() C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	return C.MPI_T_ERR_INVALID_HANDLE
}

//export bcs_t_event_get_index
func bcs_t_event_get_index(name *C.char) C.int {
	if rc := tEnter(); rc != 0 {
		return rc
	}
	if name == nil {
		return C.MPI_T_ERR_INVALID
	}
	return C.MPI_T_ERR_INVALID_NAME
}
