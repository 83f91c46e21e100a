package transport

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// Handshake (before any frame is accepted), with a per-job secret that never
// crosses the wire:
//
//	acceptor → dialer   "BCSAUTH1" ‖ nonceA (32 bytes)
//	dialer → acceptor   hello frame: Node = dialer, Index = acceptor,
//	                    Payload = nonceD ‖ HMAC-SHA256(secret, "dial" ‖ nonceA ‖ nonceD ‖ dialer ‖ acceptor)
//	acceptor → dialer   HMAC-SHA256(secret, "accept" ‖ nonceA ‖ nonceD ‖ dialer ‖ acceptor)
//
// Each side proves knowledge of the secret over the other side's fresh nonce,
// so a recorded exchange cannot be replayed, and a peer of another job (other
// secret) or a stray process is refused before it can send a single frame.
// An acceptor that closes a connection still handshaking for a newer one (its
// handshake bound is full, Mesh.admit) first writes "BCSBUSY1" (before or
// after the challenge, never after the proof), so the dialer knows to try
// again rather than take it for a refusal.

const (
	authMagic   = "BCSAUTH1"
	nonceLen    = 32
	macLen      = sha256.Size
	authTimeout = 5 * time.Second
)

// ErrAuth is matched by every handshake refusal.
var ErrAuth = errors.New("transport: authentication failed")

func mac(secret []byte, label string, nonceA, nonceD []byte, dialer, acceptor int) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(label))
	h.Write(nonceA)
	h.Write(nonceD)
	var ids [8]byte
	binary.LittleEndian.PutUint32(ids[:], uint32(dialer))
	binary.LittleEndian.PutUint32(ids[4:], uint32(acceptor))
	h.Write(ids[:])
	return h.Sum(nil)
}

// errEarlyClose is matched by a dial whose peer closed the connection before
// its challenge: no refusal of this endpoint, as nothing was exchanged (the
// peer's handshake bound was full, or it was closing); errDisplaced by one
// whose peer said busyMagic (it closed the connection for a newer one at its
// handshake bound) instead of its challenge or its proof. Either dial may be
// tried again.
var (
	errEarlyClose = errors.New("closed the connection before its challenge")
	errDisplaced  = errors.New("displaced the connection for a newer one at its handshake bound")
)

// busyMagic is what an acceptor writes to a connection it closes, still
// handshaking, for a newer one (Mesh.admit). It may arrive before or after
// the challenge, but never after a proof.
const busyMagic = "BCSBUSY1"

func isBusy(b []byte) bool {
	return len(b) >= len(busyMagic) && string(b[:len(busyMagic)]) == busyMagic
}

// dialHandshake authenticates a fresh outbound connection from self to
// target, within authTimeout and at most until deadline (if not zero).
func dialHandshake(c net.Conn, secret []byte, self, target int, deadline time.Time) error {
	if d := time.Now().Add(authTimeout); deadline.IsZero() || d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	defer c.SetDeadline(time.Time{})
	var ch [len(authMagic) + nonceLen]byte
	if n, err := io.ReadFull(c, ch[:]); isBusy(ch[:n]) {
		return fmt.Errorf("endpoint %d %w", target, errDisplaced)
	} else if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("endpoint %d %w (%v)", target, errEarlyClose, err)
		}
		return fmt.Errorf("%w: no challenge from endpoint %d: %v", ErrAuth, target, err)
	}
	if string(ch[:len(authMagic)]) != authMagic {
		return fmt.Errorf("%w: endpoint %d did not speak the bcsmpi handshake", ErrAuth, target)
	}
	nonceA := ch[len(authMagic):]
	nonceD := make([]byte, nonceLen)
	rand.Read(nonceD)
	hello := proto.Msg{Type: proto.MsgHello, Node: proto.NodeID(self), Index: uint32(target),
		Payload: append(nonceD, mac(secret, "dial", nonceA, nonceD, self, target)...)}
	var proof [macLen]byte
	if _, err := c.Write(proto.AppendFrame(nil, &hello)); err != nil {
		if n, _ := io.ReadFull(c, proof[:len(busyMagic)]); isBusy(proof[:n]) {
			return fmt.Errorf("endpoint %d %w", target, errDisplaced)
		}
		return fmt.Errorf("%w: sending hello to endpoint %d: %v", ErrAuth, target, err)
	}
	if n, err := io.ReadFull(c, proof[:]); err != nil {
		if isBusy(proof[:n]) {
			return fmt.Errorf("endpoint %d %w", target, errDisplaced)
		}
		return fmt.Errorf("%w: endpoint %d refused this endpoint (wrong job or secret?): %v", ErrAuth, target, err)
	}
	if !hmac.Equal(proof[:], mac(secret, "accept", nonceA, nonceD, self, target)) {
		return fmt.Errorf("%w: endpoint %d could not prove it belongs to this job", ErrAuth, target)
	}
	return nil
}

// acceptHandshake authenticates an inbound connection to self and returns the
// dialer's endpoint and a reader positioned after the handshake. Once the
// dialer has proved itself, and before the proof is sent back, keep (if not
// nil) says whether the connection may still be admitted.
func acceptHandshake(c net.Conn, secret []byte, self, endpoints int, keep func() bool) (int, *bufio.Reader, error) {
	c.SetDeadline(time.Now().Add(authTimeout))
	defer c.SetDeadline(time.Time{})
	nonceA := make([]byte, nonceLen)
	rand.Read(nonceA)
	if _, err := c.Write(append([]byte(authMagic), nonceA...)); err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrAuth, err)
	}
	r := bufio.NewReaderSize(c, 256<<10)
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("%w: no hello: %v", ErrAuth, err)
	}
	// A hello is small; anything else is refused before it is read.
	n := binary.LittleEndian.Uint32(hdr[1:])
	if proto.MsgType(hdr[0]) != proto.MsgHello || n > 256 {
		return 0, nil, fmt.Errorf("%w: first frame is %s of %d bytes, want a hello", ErrAuth, proto.MsgType(hdr[0]), n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, fmt.Errorf("%w: short hello: %v", ErrAuth, err)
	}
	var hello proto.Msg
	if err := proto.DecodeBody(proto.MsgHello, body, &hello); err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrAuth, err)
	}
	from := int(hello.Node)
	if from < 0 || from >= endpoints || from == self || int(hello.Index) != self || len(hello.Payload) != nonceLen+macLen {
		return 0, nil, fmt.Errorf("%w: hello from endpoint %d to endpoint %d does not fit this mesh", ErrAuth, from, hello.Index)
	}
	nonceD, got := hello.Payload[:nonceLen], hello.Payload[nonceLen:]
	if !hmac.Equal(got, mac(secret, "dial", nonceA, nonceD, from, self)) {
		return 0, nil, fmt.Errorf("%w: endpoint %d failed the challenge (wrong job or secret)", ErrAuth, from)
	}
	if keep != nil && !keep() {
		return 0, nil, fmt.Errorf("%w: endpoint %d displaced by a newer connection at the handshake bound", ErrAuth, from)
	}
	if _, err := c.Write(mac(secret, "accept", nonceA, nonceD, from, self)); err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrAuth, err)
	}
	return from, r, nil
}

// NewSecret returns a fresh per-job secret.
func NewSecret() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}
