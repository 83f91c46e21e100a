package mpiapi

import (
	"fmt"
	"os"
	"reflect"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// The opt-in buffer checks (BCS_CHECK=buffers, package internal/check). A
// process with no check selected has p.chk == nil, and each hook below is
// one branch on it.
//
// At post, a request records the CRC-32 block sums of its buffers (4 KiB
// blocks) and enters their ranges into the rank's interval set; a range that
// overlaps another active request's, where one of the two is written, is
// reported at once (naming both calls). At completion, a send buffer is
// summed again and compared: a difference is a buffer modified while in
// flight. A point-to-point receive buffer is compared twice: block by block
// just before the runtime writes into it (by the agent, see package
// nicthread, which reads the sums from this process through the check
// header whose address the completion record carries; or by this rank when
// it serves a pull order, piece by piece: pullCopy), and, at completion,
// past the bytes delivered. Large buffers are summed in pieces
// (check.PieceSize) between which the rank serves a posted pull order
// (p.sums, p.diffCount; arm offers orders while it sums), so a rank busy
// with its sums still takes its orders in time. Findings are MPI_ERR_BUFFER
// errors under the error handler, or warnings on standard error under
// buffers:warn.
//
// Under flow alone (no buffer checks) the rank does two things for the
// agent's flow check (internal/check doc.go, Passes): right after posting a
// send of at least check.FlowSumMin bytes to a rank of its node it takes
// the send buffer's block sums into a check header (armFlow, flowSums),
// from which the agent combines a pull chunk's source sum; and when it
// serves a pull order it copies each entry piece by piece and sums each
// piece right after copying it, while it is in the cache (flowCopy), and
// stores the sums right after reporting the order done (pullSums),
// MPI_Finalize waiting until the agent has compared the last order's sums.

// checker is a process's check state.
type checker struct {
	mode check.Mode
	ivs  check.Intervals
	// nonblocking: a nonblocking collective is being posted (set by
	// process.nonblocking around its start): its written buffer gets a
	// check header, as a point-to-point receive's.
	nonblocking bool
	// Flow alone: the sums of the entries of the pull order being served,
	// taken as they are copied (flowCopy) and stored after the agent is
	// told the order is done (pullSums; the calls that serve orders hold
	// the call lock), and the number of the last order whose sums were
	// stored (MPI_Finalize waits until the agent has compared it).
	copied   [shm.PullMax]uint32
	lastPull uint32
	local    map[proto.Rank]bool // the world ranks of this node (onNode), once needed
}

// deferSums says whether the sums of a served pull order are taken after
// the order is reported done: under flow alone (see pullSums). Under
// buffers the rank compares each piece before its copy writes it
// (pullCopy), and sums it there while it is in the cache.
func (c *checker) deferSums() bool { return c.mode.Flow && !c.mode.Buffers }

// reqCheck is one request's part.
type reqCheck struct {
	post   proto.SliceID
	reads  [][]byte   // buffers the runtime reads (sends)
	sums   [][]uint32 // their block sums at post
	recv   []byte     // a point-to-point receive buffer
	hdr    []uint32   // its check header (check.NewHeader): address, length, block sums at post
	ivs    []check.Interval
	pulled [2]int // blocks found written before this rank's pull copies: first+1, last+1
	pullK  proto.SliceID
	peer   string // for reports: "to rank 3 tag 7"
	// detached: the program released the request (MPI_Request_free through a
	// layer that keeps waiting on it, see Detach)
	detached bool
	// flowSend: under flow alone, the send buffer whose block sums the rank
	// takes after posting (armFlow, flowSums); hdr holds them.
	flowSend []byte
}

func (p *process) initCheck(s string) error {
	m, err := check.Parse(s)
	if err != nil {
		return err
	}
	if m.On() {
		p.chk = &checker{mode: m}
	}
	return nil
}

// report raises a finding: an error through the error handler (nil under
// ErrorsReturn means the caller gets it), or a warning under buffers:warn.
func (p *process) report(call, format string, a ...any) error {
	if p.chk.mode.Warn {
		fmt.Fprintf(os.Stderr, "bcsmpi: warning: rank %d: %s: %s: %s\n", p.rank, call, ErrBuffer, fmt.Sprintf(format, a...))
		return nil
	}
	return p.errf(ErrBuffer, call, format, a...)
}

// buffer is one buffer of a request being posted.
type buffer struct {
	b      []byte
	write  bool
	inside bool // a send buffer that shares memory with the request's receive buffer (in place): not summed
}

// checkPost checks a request's buffers against the active ones, before the
// request is made (gen is the generation it will get).
func (p *process) checkPost(call string, bufs []buffer) error {
	if !p.chk.mode.Buffers {
		return nil
	}
	gen := p.gen + 1
	for _, b := range bufs {
		if len(b.b) == 0 {
			continue
		}
		// Summing a buffer that runs into unmapped memory would fault in
		// the check itself (a Go fatal error, not an MPI report): always an
		// error, also under buffers:warn, which could not go on.
		lo := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b.b))))
		if u := unix.Unmapped(uintptr(lo), uintptr(len(b.b))); u != 0 {
			return p.errf(ErrBuffer, call, "its %s buffer [%#x, %#x) (%d bytes) is not all mapped memory: nothing is mapped at %#x (does the count describe more than the buffer holds?)",
				rw(b.write), lo, lo+uint64(len(b.b)), len(b.b), u)
		}
		iv := check.Interval{Lo: lo, Hi: lo + uint64(len(b.b)), ID: gen, Write: b.write}
		if o, ok := p.chk.ivs.Conflict(iv); ok {
			other := p.live[o.ID]
			what := "request"
			if other != nil {
				what = other.call
			}
			from, to := max(iv.Lo, o.Lo), min(iv.Hi, o.Hi)
			return p.report(call, "its %s buffer [%#x, %#x) overlaps the %s buffer of active request #%d (%s) in [%#x, %#x) (%d bytes), and %s; MPI forbids buffers of outstanding requests to overlap where one is written",
				rw(b.write), iv.Lo, iv.Hi, rw(o.Write), o.ID, what, from, to, to-from, both(b.write, o.Write))
		}
	}
	return nil
}

func rw(write bool) string {
	if write {
		return "receive (written)"
	}
	return "send (read)"
}

func both(a, b bool) string {
	if a && b {
		return "both are written"
	}
	return "one is written"
}

// arm records r's buffers at post (after newRequest, before the descriptor
// is posted).
func (p *process) arm(r *Request, bufs []buffer, p2pRecv bool, peer string) {
	if !p.chk.mode.Buffers {
		p.armFlow(r, bufs)
		return
	}
	rc := &reqCheck{post: p.region.Slice(), peer: peer}
	if p.blk.OfferPull() { // serve pull orders while summing (p.sums)
		defer func() {
			for !p.blk.WithdrawPull() {
				p.servePull(false)
			}
		}()
	}
	for _, b := range bufs {
		if len(b.b) == 0 {
			continue
		}
		lo := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b.b))))
		iv := check.Interval{Lo: lo, Hi: lo + uint64(len(b.b)), ID: r.gen, Write: b.write}
		p.chk.ivs.Insert(iv)
		rc.ivs = append(rc.ivs, iv)
		if !b.write && !b.inside {
			rc.reads = append(rc.reads, b.b)
			if r.kind == proto.KindSend { // the agent compares what it reads with these sums
				rc.hdr = p.sums(check.EmptyHeader(b.b), b.b)
				check.SetSummed(rc.hdr, check.Blocks(len(b.b)))
				rc.sums = append(rc.sums, check.HeaderSums(rc.hdr))
				p.blk.SetCheck(r.slot, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(rc.hdr)))))
			} else {
				rc.sums = append(rc.sums, p.sums(make([]uint32, 0, check.Blocks(len(b.b))), b.b))
			}
		}
	}
	var recv []byte
	switch {
	case p2pRecv && len(bufs) == 1:
		recv = bufs[0].b
	case r.kind == proto.KindColl && p.chk.nonblocking:
		// A nonblocking collective's written buffer (its receive buffer;
		// a broadcast's away from the root): the agent compares it before
		// it writes a chunk into it, as for a point-to-point receive.
		for _, b := range bufs {
			if b.write {
				recv = b.b
			}
		}
	}
	if len(recv) > 0 {
		rc.recv = recv
		rc.hdr = p.sums(check.EmptyHeader(rc.recv), rc.recv)
		check.SetSummed(rc.hdr, check.Blocks(len(rc.recv)))
		p.blk.SetCheck(r.slot, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(rc.hdr)))))
	}
	if rc.hdr == nil { // no header: not an earlier request's of this slot either
		p.blk.SetCheck(r.slot, 0)
	}
	r.chk = rc
}

// armFlow is arm under flow alone: a point-to-point send of at least
// check.FlowSumMin bytes gets a check header whose block sums the rank
// takes right after posting the send (flowSums), so that the agent can
// combine a pull chunk's source sum from them (package nicthread,
// postSource) instead of reading the chunk from the send buffer while the
// receiver copies it: the rank reads its own memory once, at memory speed,
// where the agent would copy it out with process_vm_readv and sum it on the
// slice's critical path. Any other request clears its slot's header.
func (p *process) armFlow(r *Request, bufs []buffer) {
	if r.kind != proto.KindSend || len(bufs) != 1 || len(bufs[0].b) < check.FlowSumMin || r.comm == nil || !p.onNode(r.comm.worldRank(r.peer)) {
		p.blk.SetCheck(r.slot, 0)
		return
	}
	b := bufs[0].b
	h := check.EmptyHeader(b)
	h = h[:check.HeaderWords+check.Blocks(len(b))] // none summed yet (SetSummed)
	r.chk = &reqCheck{post: p.region.Slice(), hdr: h, flowSend: b}
	p.blk.SetCheck(r.slot, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(h)))))
}

// onNode says whether world rank w runs on this rank's node: only there
// may the receiver copy a message itself (a pull order). The agent names
// each rank block's world rank before the ranks start.
func (p *process) onNode(w proto.Rank) bool {
	c := p.chk
	if c.local == nil {
		c.local = make(map[proto.Rank]bool, p.region.G.Ranks)
		for l := range p.region.G.Ranks {
			c.local[p.region.Block(l).WorldRank()] = true
		}
	}
	return c.local[w]
}

// flowSums takes the block sums of send r's buffer into its check header
// (armFlow), after the send is posted: piece by piece (check.PieceSize),
// each piece counted as it is stored (check.SetSummed) so that the agent
// uses the sums already there and reads the rest itself, and serving
// between pieces a pull order the agent has posted, as sums does. The send
// moves meanwhile; the sums of a correct program's buffer are the same
// whenever they are taken.
func (p *process) flowSums(r *Request) {
	rc := r.chk
	b, h := rc.flowSend, rc.hdr
	if p.blk.OfferPull() {
		defer func() {
			for !p.blk.WithdrawPull() {
				p.servePull(false)
			}
		}()
	}
	sums := check.HeaderSums(h)
	for off := 0; off < len(b); off += check.PieceSize {
		end := min(off+check.PieceSize, len(b))
		i := off / check.BlockSize
		check.Sums(sums[i:i], b[off:end]) // in place: the header has room for every block
		check.SetSummed(h, check.Blocks(end))
		p.servePosted()
	}
}

// sums appends the block sums of b to dst, piece by piece
// (check.PieceSize), serving between pieces a pull order the agent has
// posted: a rank that sums a large buffer (at post, where arm offers pull
// orders, or at completion, inside a blocking call) still takes its orders
// in time, and the agent does not copy in its place.
func (p *process) sums(dst []uint32, b []byte) []uint32 {
	for off := 0; off < len(b); off += check.PieceSize {
		dst = check.Sums(dst, b[off:min(off+check.PieceSize, len(b))])
		p.servePosted()
	}
	return dst
}

// diffCount is check.DiffCount(sums, buf, first) piece by piece, serving
// pull orders between pieces as sums does.
func (p *process) diffCount(sums []uint32, buf []byte, first int) (lo, hi, n int) {
	lo, hi = -1, -1
	const per = check.PieceSize / check.BlockSize
	for i := 0; i < len(sums); i += per {
		l, h, k := check.DiffCount(sums[i:min(i+per, len(sums))], buf, first+i)
		if k > 0 {
			if lo < 0 {
				lo = l
			}
			hi, n = h, n+k
		}
		p.servePosted()
	}
	return lo, hi, n
}

// servePosted serves the pull order the agent has posted, if any, and keeps
// the offer on (the caller has offered).
func (p *process) servePosted() {
	if p.blk.PullPosted() {
		p.servePull(true)
	}
}

// verify runs r's completion checks (r's completion record has been read)
// and returns the first finding as an error, or nil.
func (p *process) verify(r *Request) error {
	rc := r.chk
	r.chk = nil
	for _, iv := range rc.ivs {
		p.chk.ivs.Remove(iv.Lo, iv.ID)
	}
	now := p.region.Slice()
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if r.kind == proto.KindSend && len(rc.reads) == 1 {
		if lo, hi, k, ok := p.blk.Written(r.slot); ok {
			from, to := check.Range(lo, hi, len(rc.reads[0]))
			keep(p.report(r.call, "request #%d (%s, %d bytes): send buffer modified while in flight: the bytes the runtime read in slice %d differ from the buffer at the post (slice %d) in bytes [%d, %d) (4 KiB blocks %d .. %d)",
				r.gen, rc.peer, len(rc.reads[0]), k, rc.post, from, to, lo, hi))
		}
	}
	// A request released with MPI_Request_free has no completion call: the
	// program may reuse its send buffer once it knows, by other means, that
	// the send completed, which may be before this rank reads the record;
	// only the agent's comparison of what it read applies to it.
	freed := r.retiredBy != "" || rc.detached
	for i, b := range rc.reads {
		if freed {
			break
		}
		if lo, hi, n := p.diffCount(rc.sums[i], b, 0); n > 0 {
			keep(p.report(r.call, "request #%d (%s, %d bytes): send buffer modified while in flight: %s differ between the post (slice %d) and the completion (slice %d)",
				r.gen, rc.peer, len(b), check.Describe(lo, hi, n, len(b)), rc.post, now))
		}
	}
	if rc.recv != nil {
		if lo, hi, k, ok := p.blk.Written(r.slot); ok {
			keep(p.written(r, rc, lo, hi, k, "the runtime wrote into them (agent)"))
		}
		if rc.pulled[0] > 0 {
			keep(p.written(r, rc, rc.pulled[0]-1, rc.pulled[1]-1, rc.pullK, "this rank copied into them (pull order)"))
		}
	}
	if rc.recv != nil && r.kind != proto.KindColl { // a collective writes where its arguments say, not a prefix
		n := int(r.comp.Count)
		if r.comp.Err == proto.ErrTruncate {
			n = len(rc.recv)
		}
		b0 := check.Blocks(n) // the first block the delivery did not touch
		if b0 < len(rc.hdr)-check.HeaderWords {
			if lo, hi, nd := p.diffCount(check.HeaderSums(rc.hdr)[b0:], rc.recv, b0); nd > 0 {
				keep(p.report(r.call, "request #%d (%s, %d-byte buffer): receive buffer written by the program while in flight: %s, past the %d bytes delivered, changed between the post (slice %d) and the completion (slice %d)",
					r.gen, rc.peer, len(rc.recv), check.Describe(lo, hi, nd, len(rc.recv)), n, rc.post, now))
			}
		}
	}
	return first
}

func (p *process) written(r *Request, rc *reqCheck, lo, hi int, k proto.SliceID, by string) error {
	from, to := check.Range(lo, hi, len(rc.recv))
	what := fmt.Sprintf("bytes [%d, %d) (4 KiB blocks %d .. %d)", from, to, lo, hi)
	if lo == hi {
		what = check.Describe(lo, hi, 1, len(rc.recv))
	}
	return p.report(r.call, "request #%d (%s, %d-byte buffer): receive buffer written by the program while in flight: %s changed between the post (slice %d) and slice %d, when %s; the program's writes there are lost",
		r.gen, rc.peer, len(rc.recv), what, rc.post, k, by)
}

// pullCopy is servePull's copy of entry j (e) into dst, part of r's receive
// buffer, with the checks on: piece by piece (check.PieceSize), each
// piece's blocks are compared with their sums at post just before the copy
// writes them (checkPull), copied, and summed (flow) while in the cache; the
// sum of the entry goes to the agent (shm: pull sums). False: the copy
// failed.
func (p *process) pullCopy(j int, r *Request, dst []byte, e shm.Pull) bool {
	var s uint32
	for off := 0; off < len(dst); {
		n := min(check.PieceSize, len(dst)-off)
		d := dst[off : off+n]
		p.checkPull(r, d)
		if unix.ReadFrom(int(e.PID), d, e.SrcAddr+uint64(off)) != nil {
			return false
		}
		if p.chk.mode.Flow {
			s = check.Update(s, d)
		}
		off += n
	}
	if p.chk.mode.Flow {
		p.blk.SetPullSum(j, s)
	}
	return true
}

// flowCopy copies the bytes at src in process pid into dst piece by piece
// (check.PieceSize) and returns the CRC-32 of what it copied, each piece
// summed right after its copy, while it is still in this core's cache:
// the flow check's destination sum under flow alone, at the cost of a pass
// over cached bytes and a system call per piece, where summing the whole
// entry after one copy read it from memory again (BenchmarkflowCopy
// measures both against the unchecked copy). ok false: a copy failed.
func flowCopy(pid int, dst []byte, src uint64) (sum uint32, ok bool) {
	for off := 0; off < len(dst); off += check.PieceSize {
		d := dst[off:min(off+check.PieceSize, len(dst))]
		if unix.ReadFrom(pid, d, src+uint64(off)) != nil {
			return 0, false
		}
		sum = check.Update(sum, d)
	}
	return sum, true
}

// pullSums stores the flow check's destination sums of pull order seq
// under flow alone: the rank copied each of its n entries with flowCopy,
// which summed them as it went (p.chk.copied), and told the agent the order
// was done (FinishPull); then it stores the sums and the order's number
// (shm: pull sums) and wakes the agent, which compares them at its next TX
// or when this rank takes its next order (or, for a span, when it ends).
// The rank does it before it looks at its completions, so the program gets
// its buffer back only once it is summed. The sums of the previous order
// are overwritten only once the agent has compared them (it does when this
// rank takes the next order, long before that order's copy ends, so this
// rarely waits).
func (p *process) pullSums(seq uint32, n int) {
	if last := p.chk.lastPull; last != 0 {
		w := p.blk.PullVerified()
		for v := atomic.LoadUint32(w); v != last; v = atomic.LoadUint32(w) {
			if p.region.Aborting() {
				p.abortExit()
			}
			unix.FutexWait(w, v, 10*time.Millisecond)
		}
	}
	for j, s := range p.chk.copied[:n] {
		p.blk.SetPullSum(j, s)
	}
	atomic.StoreUint32(p.blk.PullSumsDone(), seq)
	unix.FutexWake(p.blk.PullSumsDone(), 1)
	p.chk.lastPull = seq
}

// pullsVerified says whether the agent has compared the sums of the last
// pull order this rank served (flow alone): MPI_Finalize waits for it, so
// that a job cannot end with a copy unchecked.
func (p *process) pullsVerified() bool {
	return p.chk == nil || p.chk.lastPull == 0 || atomic.LoadUint32(p.blk.PullVerified()) == p.chk.lastPull
}

// checkPull is the pre-write check of a pull entry's piece: dst (part of r's
// receive buffer) is about to be overwritten by this rank's copy.
func (p *process) checkPull(r *Request, dst []byte) {
	rc := r.chk
	if rc == nil || rc.hdr == nil {
		return
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(dst))) - uintptr(unsafe.Pointer(unsafe.SliceData(rc.recv))))
	b0, b1 := check.Touched(off, len(dst), len(rc.recv))
	if b0 > b1 {
		return
	}
	if lo, hi, ok := check.Diff(check.HeaderSums(rc.hdr)[b0:b1+1], rc.recv, b0); ok {
		if rc.pulled[0] == 0 || lo+1 < rc.pulled[0] {
			rc.pulled[0] = lo + 1
		}
		if hi+1 > rc.pulled[1] {
			rc.pulled[1] = hi + 1
		}
		if rc.pullK == 0 {
			rc.pullK = p.region.Slice()
		}
	}
}

// collBuffers are the buffers of a collective's keep value: a slice (a
// broadcast's buffer, read at the root and written elsewhere; a member
// list, written) or [2]slice{send, recv}.
func collBuffers(c *Comm, a *coll) []buffer {
	v := reflect.ValueOf(a.keep)
	bytesOf := func(s reflect.Value) []byte {
		if s.Kind() != reflect.Slice || s.Len() == 0 {
			return nil
		}
		return unsafe.Slice((*byte)(s.UnsafePointer()), s.Len()*int(s.Type().Elem().Size()))
	}
	switch v.Kind() {
	case reflect.Slice:
		return []buffer{{b: bytesOf(v), write: a.kind != proto.CollBcast || c.rank != a.root}}
	case reflect.Array:
		if v.Len() == 2 {
			send, recv := buffer{b: bytesOf(v.Index(0))}, buffer{b: bytesOf(v.Index(1)), write: true}
			send.inside = a.inPlace || (len(send.b) > 0 && len(recv.b) > 0 &&
				uintptr(unsafe.Pointer(&send.b[0])) < uintptr(unsafe.Pointer(&recv.b[0]))+uintptr(len(recv.b)) &&
				uintptr(unsafe.Pointer(&recv.b[0])) < uintptr(unsafe.Pointer(&send.b[0]))+uintptr(len(send.b)))
			return []buffer{send, recv}
		}
	}
	return nil
}

func peerText(recv bool, peer, tag int) string {
	if recv {
		src, tg := fmt.Sprint(peer), fmt.Sprint(tag)
		if peer == AnySource {
			src = "MPI_ANY_SOURCE"
		}
		if tag == AnyTag {
			tg = "MPI_ANY_TAG"
		}
		return "from rank " + src + " tag " + tg
	}
	return fmt.Sprintf("to rank %d tag %d", peer, tag)
}

// freedFinding prints a finding on a request released with
// MPI_Request_free: no call is left to return it.
func (p *process) freedFinding(r *Request, err error) {
	fmt.Fprintf(os.Stderr, "bcsmpi: %v (request #%d was released by %s: reported here, not returned)\n", err, r.gen, r.retiredBy)
}

// Detach tells the buffer checks that the program has released r
// (MPI_Request_free) although the caller goes on to complete it itself (the
// C ABI waits for such requests at MPI_Finalize): the completion call is
// then not the program's, and r's send buffer is compared only when the
// runtime reads it. A no-op without checks, on nil and on completed requests.
func (r *Request) Detach() {
	if r != nil && r.chk != nil {
		r.chk.detached = true
	}
}
