package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Intercommunicators. An intercommunicator is kept as two hidden
// intracommunicators: union, of both groups (the group whose leader has the
// lower world rank first, each in its own rank order), and local, of the
// caller's group. The intercommunicator's slot holds union's mpiapi.Comm and
// the translation: a rank of the remote group r is union rank remoteOff+r.
// Point-to-point calls translate ranks and statuses and run on union (its
// message space is the intercommunicator's own). The collectives' messages
// go over coll, a duplicate of union that user calls never see, so no user
// receive (MPI_ANY_SOURCE, MPI_ANY_TAG included) can take them. The blocking collectives
// Barrier, Bcast, Allreduce, Allgather, Reduce, Gather, Scatter and
// Alltoall are composed of calls on the hidden communicators: a collective
// of the local group (to or from its rank 0), and messages between the
// leaders or between the root and the remote leader on union (MPI_Alltoall:
// a message between every pair of the two groups, in rank order). Their
// non-blocking and persistent forms, the v- and w-forms and
// Reduce_scatter(_block) run as one exchange over coll (internb.go).
// Scan and Exscan are not defined on an intercommunicator (MPI_ERR_COMM).

type interComm struct {
	local, union   int   // hidden slots
	coll           int   // hidden slot of union's duplicate for the collectives
	lranks, rranks []int // world ranks of the local and remote groups
	loff, roff     int   // where the local and remote groups start in union
}

const (
	hInt        = 0x209 // MPI_INT
	interTag    = 1     // tag of the collectives' messages (on coll, private)
	abiRoot     = -4    // MPI_ROOT
	abiProcNull = -3    // MPI_PROC_NULL
)

// interOf is the intercommunicator behind handle h, or nil (no error is
// raised: the caller goes on and checks h).
func interOf(h C.uintptr_t) (int, *interComm) {
	kind, i, gen := splitHandle(uintptr(h))
	if kind == kindComm && i < len(comms) && comms[i].live && comms[i].gen == gen && comms[i].inter != nil {
		return i, comms[i].inter
	}
	return -1, nil
}

// hidden is the handle of hidden slot i, with the error handler of the
// intercommunicator ci for the calls made on it.
func hidden(i, ci int) C.uintptr_t {
	comms[i].errh = comms[ci].errh
	return C.uintptr_t(userHandle(kindComm, i, comms[i].gen))
}

func slotOf(h uintptr) int { _, i, _ := splitHandle(h); return i }

// wantIntra refuses intercommunicator slot ci (handle h, argument arg) for a
// call that needs an intracommunicator (windows, topologies,
// MPI_Comm_create_group): MPI_ERR_COMM.
func wantIntra(ci int, call, arg string, h C.uintptr_t) C.int {
	if comms[ci].inter == nil {
		return 0
	}
	return fail(ci, call, errComm, "%s = %s is an intercommunicator, want an intracommunicator", arg, describe(uintptr(h)))
}

// newInter makes the intercommunicator of the local group (local: its hidden
// intracommunicator slot) and the remote group, over union (collective
// over union: it duplicates union for the collectives' messages). On an
// error it frees union and local's communicator.
func newInter(union *mpiapi.Comm, local int, lranks, rranks []int, localFirst bool, errh uintptr) (uintptr, error) {
	coll, err := union.Dup()
	if err != nil {
		union.Free()
		if l := comms[local].c; l != nil {
			l.Free()
		}
		freeComm(local)
		return 0, err
	}
	return newInterOf(union, coll, local, lranks, rranks, localFirst, errh), nil
}

// newInterOf is newInter with the collectives' duplicate of union made
// (MPI_Comm_idup duplicates union twice at once).
func newInterOf(union, coll *mpiapi.Comm, local int, lranks, rranks []int, localFirst bool, errh uintptr) uintptr {
	ic := &interComm{local: local, lranks: lranks, rranks: rranks}
	if localFirst {
		ic.roff = len(lranks)
	} else {
		ic.loff = len(rranks)
	}
	ic.union = slotOf(newComm(union, errh))
	ic.coll = slotOf(newComm(coll, errh))
	h := newComm(union, errh)
	comms[slotOf(h)].inter = ic
	return h
}

// unionGroup lists both groups' world ranks, the one of the lower leader first.
func unionGroup(lranks, rranks []int, lleader, rleader int) ([]int, bool) {
	localFirst := lranks[lleader] < rranks[rleader]
	if localFirst {
		return append(slices.Clone(lranks), rranks...), true
	}
	return append(slices.Clone(rranks), lranks...), false
}

func makeComm(call string, ranks []int, tag string) (*mpiapi.Comm, C.int) {
	c, err := makeCommErr(ranks, tag)
	if err != nil {
		return nil, failErr(0, err)
	}
	return c, 0
}

// makeCommErr is makeComm returning the error, not raising it.
func makeCommErr(ranks []int, tag string) (*mpiapi.Comm, error) {
	if len(ranks) == 1 {
		return nil, nil
	}
	g, err := mpiapi.World().Group().Incl(ranks)
	if err != nil {
		return nil, err
	}
	return mpiapi.CreateFromGroup(g, tag)
}

func disjoint(a, b []int) bool {
	for _, w := range a {
		if slices.Contains(b, w) {
			return false
		}
	}
	return true
}

//export bcs_intercomm_create
func bcs_intercomm_create(localH C.uintptr_t, lleader C.int, peerH C.uintptr_t, rleader, tag C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Intercomm_create"
	ci, rc := enterComm(call, uintptr(localH))
	if rc != 0 {
		return rc
	}
	if comms[ci].inter != nil {
		return fail(ci, call, errComm, "local_comm = %s is an intercommunicator, want an intracommunicator", describe(uintptr(localH)))
	}
	lranks := members(ci)
	if lleader < 0 || int(lleader) >= len(lranks) {
		return fail(ci, call, errRank, "local_leader = %d, want 0..%d", int(lleader), len(lranks)-1)
	}
	if tag < 0 {
		return fail(ci, call, errTag, "tag = %d, want 0..MPI_TAG_UB", int(tag))
	}
	if out == nil {
		return fail(ci, call, errArg, "newintercomm = NULL")
	}
	*out = hCommNull // until made (a refusal, proto.CommsMax, leaves it so)
	// The leaders swap their groups over peer_comm, as one message of
	// [size, leader, world ranks...] received into a buffer of the
	// largest (the groups are disjoint sets of world ranks); each
	// broadcasts it in its group. One exchange and one broadcast: before,
	// the size went first, then the ranks (four collective slices, not two).
	wn := mpiapi.World().Size()
	mine := make([]C.int, 2+len(lranks))
	mine[0], mine[1] = C.int(len(lranks)), lleader
	for i, w := range lranks {
		mine[2+i] = C.int(w)
	}
	theirs := make([]C.int, 2+wn)
	if commRank(ci) == int(lleader) {
		if rc := bcs_sendrecv(unsafe.Pointer(&mine[0]), C.MPI_Count(len(mine)), hInt, rleader, tag, unsafe.Pointer(&theirs[0]), C.MPI_Count(len(theirs)), hInt, rleader, tag, peerH, nil, 0); rc != 0 {
			return rc
		}
	}
	if rc := bcs_bcast(unsafe.Pointer(&theirs[0]), C.MPI_Count(len(theirs)), hInt, lleader, localH, nil, 0); rc != 0 {
		return rc
	}
	rn, rl := int(theirs[0]), int(theirs[1])
	if rn < 1 || rn > wn-len(lranks) || rl < 0 || rl >= rn {
		return fail(ci, call, errIntern, "the remote leader sent a group of %d with its leader at %d (the local group has %d of the world's %d processes)", rn, rl, len(lranks), wn)
	}
	theirs = theirs[2 : 2+rn]
	rranks := make([]int, rn)
	for i, w := range theirs {
		rranks[i] = int(w)
	}
	if !disjoint(lranks, rranks) {
		return fail(ci, call, errComm, "the local and remote groups overlap (local %v, remote %v); they must be disjoint", lranks, rranks)
	}
	// The local group's duplicate is started first and made in the same
	// collective slice as the union.
	e := comms[ci]
	var lr *mpiapi.Request
	if e.c != nil {
		var err error
		if lr, err = e.c.Idup(); err != nil {
			return failErr(ci, err)
		}
	}
	all, localFirst := unionGroup(lranks, rranks, int(lleader), rl)
	union, rc := makeComm(call, all, fmt.Sprintf("bcsmpi intercomm tag %d", int(tag)))
	if rc != 0 {
		lr.Discard()
		return rc
	}
	var lc *mpiapi.Comm
	var lerr error
	if lr != nil {
		_, lerr = mpiapi.Wait(lr)
		lc = lr.Comm()
	}
	// The local duplicate's outcome is the local group's alone: agree on
	// it over the union (made on both groups or neither) so that both
	// groups succeed or both fail.
	if rc := agreeCreated(union, lc, lerr, ci, call); rc != 0 {
		return rc
	}
	h, err := newInter(union, slotOf(newComm(lc, e.errh)), lranks, rranks, localFirst, e.errh)
	if err != nil {
		return failErr(ci, err)
	}
	*out = C.uintptr_t(h)
	return 0
}

//export bcs_intercomm_create_from_groups
func bcs_intercomm_create_from_groups(lg C.uintptr_t, lleader C.int, rg C.uintptr_t, rleader C.int, tag *C.char, infoH, errh C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Intercomm_create_from_groups"
	if rc := enter(call); rc != 0 {
		return rc
	}
	eh, restore, rc := errhArg(call, errh)
	if rc != 0 {
		return rc
	}
	defer restore() // every error from here goes to the errhandler argument
	lranks, _, rc := group(call, "local_group", lg)
	if rc != 0 {
		return rc
	}
	rranks, _, rc := group(call, "remote_group", rg)
	if rc != 0 {
		return rc
	}
	switch {
	case tag == nil || out == nil:
		return fail(0, call, errArg, "stringtag or newintercomm = NULL")
	case len(lranks) == 0 || len(rranks) == 0:
		return fail(0, call, errGroup, "an empty group (local %d, remote %d processes)", len(lranks), len(rranks))
	case lleader < 0 || int(lleader) >= len(lranks):
		return fail(0, call, errRank, "local_leader = %d, want 0..%d", int(lleader), len(lranks)-1)
	case rleader < 0 || int(rleader) >= len(rranks):
		return fail(0, call, errRank, "remote_leader = %d, want 0..%d", int(rleader), len(rranks)-1)
	case !slices.Contains(lranks, worldRank):
		return fail(0, call, errGroup, "the calling process (world rank %d) is not in local_group", worldRank)
	case !disjoint(lranks, rranks):
		var both []int
		for _, w := range lranks {
			if slices.Contains(rranks, w) {
				both = append(both, w)
			}
		}
		return fail(0, call, errGroup, "local_group and remote_group overlap (world ranks %v in both; local %v, remote %v); they must be disjoint", both, lranks, rranks)
	}
	if rc := infoArg(call, uintptr(infoH)); rc != 0 {
		return rc
	}
	*out = hCommNull // until made (a refusal, proto.CommsMax, leaves it so)
	t := C.GoString(tag)
	// The local group's communicator is made (or refused, proto.CommsMax)
	// in that group alone; the union is made either way, so that the other
	// group does not wait for it, and both groups agree on the outcome.
	lc, lerr := makeCommErr(lranks, "bcsmpi intercomm local "+t)
	all, localFirst := unionGroup(lranks, rranks, int(lleader), int(rleader))
	union, err := makeCommErr(all, "bcsmpi intercomm union "+t)
	if err != nil {
		if lc != nil {
			lc.Free()
		}
		return failErr(0, err)
	}
	if rc := agreeCreated(union, lc, lerr, 0, call); rc != 0 {
		return rc
	}
	h, err := newInter(union, slotOf(newComm(lc, eh)), slices.Clone(lranks), slices.Clone(rranks), localFirst, eh)
	if err != nil {
		return failErr(0, err)
	}
	*out = C.uintptr_t(h)
	return 0
}

//export bcs_intercomm_merge
func bcs_intercomm_merge(h C.uintptr_t, high C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Intercomm_merge"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	ic := comms[ci].inter
	if ic == nil {
		return fail(ci, call, errComm, "intercomm = %s is an intracommunicator, want an intercommunicator", describe(uintptr(h)))
	}
	if out == nil {
		return fail(ci, call, errArg, "newintracomm = NULL")
	}
	// The group that passed high = false first; if both passed the same,
	// the union's order: one Split of union keyed by (high, union rank),
	// the same order as exchanging the flags first and keying by group,
	// without that exchange's collective slice.
	u := comms[ic.union].c
	key := u.Rank()
	if high != 0 {
		key += u.Size()
	}
	nc, err := u.Split(0, key)
	if err != nil {
		return failErr(ci, err)
	}
	*out = C.uintptr_t(newComm(nc, comms[ci].errh))
	return 0
}

//export bcs_comm_test_inter
func bcs_comm_test_inter(h C.uintptr_t, flag *C.int) C.int {
	const call = "MPI_Comm_test_inter"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if flag == nil {
		return fail(ci, call, errArg, "flag = NULL")
	}
	*flag = 0
	if comms[ci].inter != nil {
		*flag = 1
	}
	return 0
}

// bcs_comm_remote is MPI_Comm_remote_size (size set) and
// MPI_Comm_remote_group (group set).
//
//export bcs_comm_remote
func bcs_comm_remote(h C.uintptr_t, size *C.int, g *C.uintptr_t) C.int {
	call := "MPI_Comm_remote_size"
	if g != nil {
		call = "MPI_Comm_remote_group"
	}
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	ic := comms[ci].inter
	if ic == nil {
		return fail(ci, call, errComm, "comm = %s is an intracommunicator, want an intercommunicator", describe(uintptr(h)))
	}
	if size != nil {
		*size = C.int(len(ic.rranks))
	}
	if g != nil {
		*g = C.uintptr_t(newGroup(slices.Clone(ic.rranks)))
	}
	return 0
}

// interCompare is MPI_Comm_compare of two communicators (not the same
// handle), one of them at least an intercommunicator (nil: an
// intracommunicator): MPI_CONGRUENT if both the local and the remote groups
// are the same in the same order, MPI_SIMILAR if they have the same members,
// else (an intracommunicator too) MPI_UNEQUAL.
func interCompare(a, b *interComm) C.int {
	if a == nil || b == nil {
		return C.MPI_UNEQUAL
	}
	if slices.Equal(a.lranks, b.lranks) && slices.Equal(a.rranks, b.rranks) {
		return C.MPI_CONGRUENT
	}
	same := func(x, y []int) bool {
		return len(x) == len(y) && !slices.ContainsFunc(x, func(w int) bool { return !slices.Contains(y, w) })
	}
	if same(a.lranks, b.lranks) && same(a.rranks, b.rranks) {
		return C.MPI_SIMILAR
	}
	return C.MPI_UNEQUAL
}

// interDup duplicates intercommunicator slot ci (MPI_Comm_dup): union
// twice (the duplicate's union and coll) and the local group, the three
// started at once so that they take one collective slice, not three. The
// union's duplicates have the same outcome on every member (a refusal,
// proto.CommsMax, included), the local group's only in that group, so the
// members agree (agreeOK, over the old union) before returning: if any
// creation failed anywhere, every member frees what it made (collectively:
// each was made on all its members or none) and fails.
func interDup(ci int) (uintptr, C.int) {
	ic := comms[ci].inter
	var rs [3]*mpiapi.Request
	var err error
	rs[0], err = comms[ic.union].c.Idup()
	if err == nil {
		rs[1], err = comms[ic.union].c.Idup()
	}
	if l := comms[ic.local].c; l != nil && err == nil {
		rs[2], err = l.Idup()
	}
	var made [3]*mpiapi.Comm
	for j, r := range rs {
		if r == nil {
			continue
		}
		if _, werr := mpiapi.Wait(r); werr != nil && err == nil {
			err = werr
		}
		made[j] = r.Comm()
	}
	if ok, aerr := agreeOK(comms[ic.union].c, err == nil); aerr != nil || !ok {
		for _, c := range made {
			if c != nil {
				c.Free()
			}
		}
		if err == nil {
			err = aerr
		}
		if err == nil {
			return 0, fail(ci, "MPI_Comm_dup", errOther, "the remote group could not make its part of the duplicate (too many communicators there: see its error)")
		}
		return 0, failErr(ci, err)
	}
	errh := comms[ci].errh
	return newInterOf(made[0], made[1], slotOf(newComm(made[2], errh)), ic.lranks, ic.rranks, ic.loff == 0, errh), 0
}

// agreeCreated makes both groups of an intercommunicator's creation agree
// on the local group's duplicate lc (lerr: why it was not made) over the
// union: on failure in either group it frees lc and union and raises the
// error on slot ci (this group's, or the remote group's refusal), else 0.
func agreeCreated(union, lc *mpiapi.Comm, lerr error, ci int, call string) C.int {
	ok, err := agreeOK(union, lerr == nil)
	if err == nil && ok {
		return 0
	}
	if lc != nil {
		lc.Free()
	}
	union.Free()
	if lerr == nil {
		lerr = err
	}
	if lerr == nil {
		return fail(ci, call, errOther, "the remote group could not make its part of the intercommunicator (too many communicators there: see its error)")
	}
	return failErr(ci, lerr)
}

// agreeOK reports whether every member of union (an intercommunicator's two
// groups) passed ok: a creation made in one group alone (the local group's
// duplicate) can be refused in one group and not the other, and both
// groups must return the same outcome from the call. An Allreduce (MPI_MIN)
// on union, the one collective slice it costs.
func agreeOK(union *mpiapi.Comm, ok bool) (bool, error) {
	in, out := []int32{0}, []int32{0}
	if ok {
		in[0] = 1
	}
	if err := mpiapi.Allreduce(union, in, out, mpiapi.Min); err != nil {
		return false, err
	}
	return out[0] == 1, nil
}

// interFree frees intercommunicator slot ci's hidden communicators.
func interFree(ci int) C.int {
	ic := comms[ci].inter
	if l := comms[ic.local].c; l != nil {
		if err := l.Free(); err != nil {
			return failErr(ci, err)
		}
	}
	if err := comms[ic.coll].c.Free(); err != nil {
		return failErr(ci, err)
	}
	if err := comms[ic.union].c.Free(); err != nil {
		return failErr(ci, err)
	}
	freeComm(ic.local)
	freeComm(ic.coll)
	freeComm(ic.union)
	comms[ci].c, comms[ci].inter = nil, nil
	return 0
}

// interPeer translates a rank of the remote group to union's.
func interPeer(ic *interComm, r int) int {
	if r >= 0 {
		return r + ic.roff
	}
	return r
}

// interStatus translates a status's source on intercommunicator slot ci
// from union's ranks to the remote group's.
func interStatus(ci int, s mpiapi.Status) mpiapi.Status {
	if ci >= 0 && ci < len(comms) {
		if ic := comms[ci].inter; ic != nil && s.Source >= 0 {
			s.Source -= ic.roff
		}
	}
	return s
}

// interScratch is room for n items of t (a pointer as a buffer argument).
func interScratch(t dtype, n int) unsafe.Pointer {
	b := scratchBytes(t, n) // internb.go
	return unsafe.Pointer(&b[scratchFront(t)])
}

// ---- collectives ----

type interCall struct {
	ci     int
	ic     *interComm
	name   string
	local  C.uintptr_t
	union  C.uintptr_t // coll's handle: the collectives' messages
	lrank  int
	leader bool
	out    *C.uintptr_t // the request of a non-blocking call (or a persistent one's start)
	mode   C.int
}

// newInterCall starts a collective on intercommunicator slot ci. Blocking
// calls with an out of nil run composed of blocking steps (below); the
// others (out set, or a persistent init's checks: mode has BCS_RUN) run as
// one exchange (internb.go).
func newInterCall(ci int, ic *interComm, name string, out *C.uintptr_t, mode C.int) (*interCall, C.int) {
	k := &interCall{ci: ci, ic: ic, name: name, local: hidden(ic.local, ci), union: hidden(ic.coll, ci), out: out, mode: mode}
	k.lrank = commRank(ci)
	k.leader = k.lrank == 0
	return k, 0
}

// composed reports whether the call runs as blocking steps.
func (k *interCall) composed() bool { return k.out == nil && k.mode&C.BCS_RUN == 0 }

// rootRole reads an intercommunicator collective's root: the caller is the
// root (MPI_ROOT), another member of the root's group (MPI_PROC_NULL), or
// in the other group (the root's rank in the remote group).
func (k *interCall) rootRole(root C.int) (isRoot, idle bool, rc C.int) {
	switch {
	case root == abiRoot:
		return true, false, 0
	case root == abiProcNull:
		return false, true, 0
	case root >= 0 && int(root) < len(k.ic.rranks):
		return false, false, 0
	}
	return false, false, fail(k.ci, k.name, errRoot, "root = %d, want MPI_ROOT, MPI_PROC_NULL or 0..%d (a rank of the remote group)", int(root), len(k.ic.rranks)-1)
}

func (k *interCall) typ(what string, h C.uintptr_t) (dtype, C.int) {
	return datatype(k.ci, k.name, what, uintptr(h))
}

// gatherLocal gathers every local member's n items of t into a scratch
// buffer at the local leader (nil elsewhere), in local rank order: the first
// step of the collectives whose data crosses between the leaders.
func (k *interCall) gatherLocal(send unsafe.Pointer, n C.MPI_Count, t C.uintptr_t) (unsafe.Pointer, C.int) {
	dt, rc := k.typ("sendtype", t)
	if rc != 0 {
		return nil, rc
	}
	var tmp unsafe.Pointer
	if k.leader {
		tmp = interScratch(dt, int(n)*len(k.ic.lranks))
	}
	if rc := bcs_blocks(C.BCS_GATHER, send, n, t, tmp, n, t, 0, k.local, nil, 0); rc != 0 {
		return nil, rc
	}
	return tmp, 0
}

// interBlock is item i*n of a buffer of t.
func interBlock(p unsafe.Pointer, t dtype, i, n int) unsafe.Pointer {
	return unsafe.Add(p, i*n*t.extent)
}

func interBarrier(ci int, ic *interComm, out *C.uintptr_t, mode C.int) C.int {
	k, rc := newInterCall(ci, ic, collName(C.BCS_BARRIER, out != nil, mode), out, mode)
	if rc != 0 || k.checkOnly() {
		return rc
	}
	return bcs_barrier(k.union, out, 0)
}

func interBcast(ci int, ic *interComm, buf unsafe.Pointer, n C.MPI_Count, dt C.uintptr_t, root C.int, out *C.uintptr_t, mode C.int) C.int {
	k, rc := newInterCall(ci, ic, collName(C.BCS_BCAST, out != nil, mode), out, mode)
	if rc != 0 {
		return rc
	}
	if !k.composed() { // internb.go
		return k.blocksNB(C.BCS_BCAST, buf, n, dt, buf, n, dt, root)
	}
	isRoot, idle, rc := k.rootRole(root)
	switch {
	case rc != 0:
		return rc
	case idle:
		return 0
	case isRoot:
		return bcs_send(buf, n, dt, C.int(ic.roff), interTag, k.union, 0)
	}
	if k.leader {
		if rc := bcs_recv(buf, n, dt, C.int(ic.roff)+root, interTag, k.union, nil, 0); rc != 0 {
			return rc
		}
	}
	return bcs_bcast(buf, n, dt, 0, k.local, nil, 0)
}

// interReduce is Reduce (which BCS_REDUCE) and Allreduce.
func interReduce(ci int, ic *interComm, which C.int, send, recv unsafe.Pointer, n C.MPI_Count, counts unsafe.Pointer, dt, op C.uintptr_t, root C.int, out *C.uintptr_t, mode C.int) C.int {
	name := collName(int(which), out != nil, mode)
	if which != C.BCS_REDUCE && which != C.BCS_ALLREDUCE && which != C.BCS_REDUCE_SCATTER && which != C.BCS_REDUCE_SCATTER_BLOCK {
		return fail(ci, name, errComm, "%s needs an intracommunicator (the standard defines no %s on an intercommunicator)", name, name)
	}
	k, rc := newInterCall(ci, ic, name, out, mode)
	if rc != 0 {
		return rc
	}
	if rc := k.noInPlace(send, recv); rc != 0 {
		return rc
	}
	if !k.composed() || which == C.BCS_REDUCE_SCATTER || which == C.BCS_REDUCE_SCATTER_BLOCK { // internb.go
		return k.reduceNB(which, send, recv, n, counts, dt, op, root)
	}
	t, rc := k.typ("datatype", dt)
	if rc != 0 {
		return rc
	}
	if which == C.BCS_REDUCE {
		isRoot, idle, rc := k.rootRole(root)
		switch {
		case rc != 0:
			return rc
		case idle:
			return 0
		case isRoot:
			return bcs_recv(recv, n, dt, C.int(ic.roff), interTag, k.union, nil, 0)
		}
		tmp := interScratch(t, int(n))
		if rc := bcs_reduce(C.BCS_REDUCE, send, tmp, n, nil, dt, op, 0, k.local, nil, 0); rc != 0 {
			return rc
		}
		if k.leader {
			return bcs_send(tmp, n, dt, C.int(ic.roff)+root, interTag, k.union, 0)
		}
		return 0
	}
	// Allreduce: each group reduces to its leader; the leaders swap; each
	// broadcasts the other group's result.
	tmp := interScratch(t, int(n))
	if rc := bcs_reduce(C.BCS_REDUCE, send, tmp, n, nil, dt, op, 0, k.local, nil, 0); rc != 0 {
		return rc
	}
	if k.leader {
		if rc := bcs_sendrecv(tmp, n, dt, C.int(ic.roff), interTag, recv, n, dt, C.int(ic.roff), interTag, k.union, nil, 0); rc != 0 {
			return rc
		}
	}
	return bcs_bcast(recv, n, dt, 0, k.local, nil, 0)
}

// interBlocks is Gather, Scatter, Allgather and Alltoall.
func interBlocks(ci int, ic *interComm, which C.int, send unsafe.Pointer, scount C.MPI_Count, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t, root C.int, out *C.uintptr_t, mode C.int) C.int {
	name := collName(int(which), out != nil, mode)
	k, rc := newInterCall(ci, ic, name, out, mode)
	if rc != 0 {
		return rc
	}
	if rc := k.noInPlace(send, recv); rc != 0 {
		return rc
	}
	if !k.composed() { // internb.go
		return k.blocksNB(which, send, scount, stype, recv, rcount, rtype, root)
	}
	ln, rn := len(ic.lranks), len(ic.rranks)
	remote := C.int(ic.roff)
	switch which {
	case C.BCS_GATHER:
		isRoot, idle, rc := k.rootRole(root)
		switch {
		case rc != 0:
			return rc
		case idle:
			return 0
		case isRoot:
			return bcs_recv(recv, rcount*C.MPI_Count(rn), rtype, remote, interTag, k.union, nil, 0)
		}
		tmp, rc := k.gatherLocal(send, scount, stype)
		if rc != 0 {
			return rc
		}
		if k.leader {
			return bcs_send(tmp, scount*C.MPI_Count(ln), stype, remote+root, interTag, k.union, 0)
		}
		return 0
	case C.BCS_SCATTER:
		isRoot, idle, rc := k.rootRole(root)
		switch {
		case rc != 0:
			return rc
		case idle:
			return 0
		case isRoot:
			return bcs_send(send, scount*C.MPI_Count(rn), stype, remote, interTag, k.union, 0)
		}
		rt, rc := k.typ("recvtype", rtype)
		if rc != 0 {
			return rc
		}
		var tmp unsafe.Pointer
		if k.leader {
			tmp = interScratch(rt, int(rcount)*ln)
			if rc := bcs_recv(tmp, rcount*C.MPI_Count(ln), rtype, remote+root, interTag, k.union, nil, 0); rc != 0 {
				return rc
			}
		}
		return bcs_blocks(C.BCS_SCATTER, tmp, rcount, rtype, recv, rcount, rtype, 0, k.local, nil, 0)
	case C.BCS_ALLGATHER:
		tmp, rc := k.gatherLocal(send, scount, stype)
		if rc != 0 {
			return rc
		}
		if k.leader {
			if rc := bcs_sendrecv(tmp, scount*C.MPI_Count(ln), stype, remote, interTag, recv, rcount*C.MPI_Count(rn), rtype, remote, interTag, k.union, nil, 0); rc != 0 {
				return rc
			}
		}
		return bcs_bcast(recv, rcount*C.MPI_Count(rn), rtype, 0, k.local, nil, 0)
	case C.BCS_ALLTOALL:
		st, rc := k.typ("sendtype", stype)
		if rc != 0 {
			return rc
		}
		rt, rc := k.typ("recvtype", rtype)
		if rc != 0 {
			return rc
		}
		// Every pair exchanges its blocks; both groups go through their
		// peers in rank order, so the pairs meet without a cycle.
		for j := range rn {
			if rc := bcs_sendrecv(interBlock(send, st, j, int(scount)), scount, stype, remote+C.int(j), interTag,
				interBlock(recv, rt, j, int(rcount)), rcount, rtype, remote+C.int(j), interTag, k.union, nil, 0); rc != 0 {
				return rc
			}
		}
		return 0
	}
	return fail(ci, name, errUnsupported, "%s on an intercommunicator is not implemented by bcsmpi", name)
}

// interSplit is MPI_Comm_split of intercommunicator slot ci: the members of
// each group with one color, ordered by key (ties by rank), form the local
// group of a new intercommunicator whose remote group is the other group's
// members with that color; a color missing from either group gives
// MPI_COMM_NULL. The local group splits first (its new ranks order the new
// union: the first group's members, then the other's).
func interSplit(ci int, color, key C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_split"
	ic := comms[ci].inter
	errh := comms[ci].errh
	col := int(color)
	if color == C.MPI_UNDEFINED {
		col = mpiapi.Undefined
	} else if color < 0 {
		return fail(ci, call, errArg, "color = %d, want >= 0 or MPI_UNDEFINED", int(color))
	}
	var nl *mpiapi.Comm
	lrank, inLocal := 0, col != mpiapi.Undefined
	if l := comms[ic.local].c; l != nil {
		var err error
		if nl, err = l.Split(col, int(key)); err != nil {
			return failErr(ci, err)
		}
		if nl != nil {
			lrank = nl.Rank()
		}
	}
	u := comms[ic.union].c
	ukey := lrank
	if ic.loff != 0 {
		ukey += u.Size()
	}
	nu, err := u.Split(col, ukey)
	if err != nil {
		return failErr(ci, err)
	}
	*out = hCommNull
	if !inLocal {
		return 0
	}
	lranks := []int{worldRank}
	if nl != nil {
		lranks = worldRanks(nl)
	}
	var rranks []int
	for _, w := range worldRanks(nu) {
		if !slices.Contains(lranks, w) {
			rranks = append(rranks, w)
		}
	}
	if len(rranks) == 0 { // the color is only in this group
		if nl != nil {
			if err := nl.Free(); err != nil {
				return failErr(ci, err)
			}
		}
		return failErr(ci, nu.Free())
	}
	h, err := newInter(nu, slotOf(newComm(nl, errh)), lranks, rranks, ic.loff == 0, errh)
	if err != nil {
		return failErr(ci, err)
	}
	*out = C.uintptr_t(h)
	return 0
}

// worldRanks lists c's members' world ranks in its rank order.
func worldRanks(c *mpiapi.Comm) []int {
	idx := make([]int, c.Size())
	for i := range idx {
		idx[i] = i
	}
	w, err := c.Group().TranslateRanks(idx, mpiapi.World().Group())
	if err != nil {
		panic(fmt.Sprintf("cabi: translating the ranks of a live communicator: %v", err))
	}
	return w
}
