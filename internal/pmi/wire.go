package pmi

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Protocol limits (Slurm's and MPICH's PMI2_MAX_KEYLEN and PMI2_MAX_VALLEN).
const (
	MaxKeyLen = 64
	MaxValLen = 1024
	// maxBody bounds one message body, both ways; a PMI-2 response carries
	// at most one value, so 64 KiB is generous.
	maxBody = 64 << 10
	// maxLine bounds one PMI-1 line the same way.
	maxLine = maxBody
)

// ErrProtocol is matched (errors.Is) by every error about bytes the other
// end sent that do not follow the protocol.
var ErrProtocol = errors.New("pmi: protocol error")

// protoErr reports malformed bytes from the peer, quoting (a bounded prefix
// of) what was received.
func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

func quote(b []byte) string {
	const max = 80
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}

// message is one PMI command or response: its name and its key/value pairs
// in order (keys may repeat in a few PMI-2 commands, e.g. spawn's).
type message struct {
	cmd string
	kv  []string // key, value, key, value, ...
}

func newMessage(cmd string, kv ...string) message {
	if len(kv)%2 != 0 {
		panic("pmi: newMessage needs key/value pairs")
	}
	return message{cmd: cmd, kv: kv}
}

// get returns the value of the first key k.
func (m message) get(k string) (string, bool) {
	for i := 0; i+1 < len(m.kv); i += 2 {
		if m.kv[i] == k {
			return m.kv[i+1], true
		}
	}
	return "", false
}

// rc returns the message's rc field as an error when it is present and not 0.
func (m message) rc() error {
	v, ok := m.get("rc")
	if !ok || v == "0" {
		return nil
	}
	if msg, ok := m.get("errmsg"); ok {
		return fmt.Errorf("pmi: %s failed: rc=%s: %s", m.cmd, v, msg)
	}
	if msg, ok := m.get("msg"); ok {
		return fmt.Errorf("pmi: %s failed: rc=%s: %s", m.cmd, v, msg)
	}
	return fmt.Errorf("pmi: %s failed: rc=%s", m.cmd, v)
}

// encodeV2 returns a PMI-2 message: the 6-byte "%-6d" length header and the
// body "cmd=NAME;k=v;...;" with ';' in values doubled.
func encodeV2(m message) []byte {
	var b strings.Builder
	b.WriteString("cmd=")
	b.WriteString(strings.ReplaceAll(m.cmd, ";", ";;"))
	b.WriteByte(';')
	for i := 0; i+1 < len(m.kv); i += 2 {
		b.WriteString(strings.ReplaceAll(m.kv[i], ";", ";;"))
		b.WriteByte('=')
		b.WriteString(strings.ReplaceAll(m.kv[i+1], ";", ";;"))
		b.WriteByte(';')
	}
	body := b.String()
	return []byte(fmt.Sprintf("%-6d", len(body)) + body)
}

// parseV2 parses a PMI-2 body. A ';' followed by ';' is a literal ';'; a
// single ';' ends a pair. The first pair must be cmd=NAME.
func parseV2(body []byte) (message, error) {
	var pairs []string
	var cur strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != ';' {
			cur.WriteByte(c)
			continue
		}
		if i+1 < len(body) && body[i+1] == ';' {
			cur.WriteByte(';')
			i++
			continue
		}
		pairs = append(pairs, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 { // tolerate a missing final ';', as MPICH does
		pairs = append(pairs, cur.String())
	}
	return fromPairs(pairs, body)
}

func fromPairs(pairs []string, raw []byte) (message, error) {
	if len(pairs) == 0 {
		return message{}, protoErr("empty message %s", quote(raw))
	}
	k, v, ok := strings.Cut(pairs[0], "=")
	if !ok || k != "cmd" || v == "" {
		return message{}, protoErr("message %s does not start with cmd=NAME", quote(raw))
	}
	m := message{cmd: v}
	for _, p := range pairs[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return message{}, protoErr("field %q of message %s is not key=value", p, quote(raw))
		}
		m.kv = append(m.kv, k, v)
	}
	return m, nil
}

// readV2 reads one PMI-2 message: exactly 6 header bytes, then the body.
func readV2(r io.Reader) (message, error) {
	var hdr [6]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return message{}, eofErr(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(hdr[:])))
	if err != nil || n <= 0 || n > maxBody {
		return message{}, protoErr("length header %s is not a decimal length in 1..%d", quote(hdr[:]), maxBody)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return message{}, eofErr(err)
	}
	return parseV2(body)
}

func eofErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return protoErr("connection closed in the middle of a message")
	}
	return err
}

// encodeV1 returns a PMI-1 line "cmd=NAME k=v ...\n".
func encodeV1(m message) []byte {
	var b strings.Builder
	b.WriteString("cmd=")
	b.WriteString(m.cmd)
	for i := 0; i+1 < len(m.kv); i += 2 {
		b.WriteByte(' ')
		b.WriteString(m.kv[i])
		b.WriteByte('=')
		b.WriteString(m.kv[i+1])
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// parseV1 parses one PMI-1 line (without its '\n'): space-separated
// key=value fields, the first cmd=NAME (or mcmd=NAME, PMI-1's spawn).
func parseV1(line []byte) (message, error) {
	fields := strings.Fields(string(line))
	if len(fields) > 0 && strings.HasPrefix(fields[0], "mcmd=") {
		fields[0] = "cmd=" + strings.TrimPrefix(fields[0], "mcmd=")
	}
	return fromPairs(fields, line)
}

// readLine reads one '\n'-terminated line of at most maxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxLine {
			return nil, protoErr("line longer than %d bytes", maxLine)
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return nil, protoErr("connection closed in the middle of line %s", quote(line))
		}
		return nil, err
	}
}

// checkKV validates a key and a value before they are sent.
func checkKV(v1 bool, key, val string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("pmi: key %q: length %d, want 1..%d bytes", key, len(key), MaxKeyLen)
	}
	if strings.ContainsAny(key, " =;\n") {
		return fmt.Errorf("pmi: key %q contains one of ' ', '=', ';', newline", key)
	}
	if len(val) > MaxValLen {
		return fmt.Errorf("pmi: value of key %q: length %d, want at most %d bytes (EncodeValue makes binary data safe; split longer values)", key, len(val), MaxValLen)
	}
	bad := "\n"
	if v1 {
		bad = " =\n"
	}
	if strings.ContainsAny(val, bad) {
		return fmt.Errorf("pmi: value of key %q contains one of %q, which the protocol cannot carry (use EncodeValue)", key, bad)
	}
	return nil
}

// EncodeValue encodes binary data as unpadded base64url, which contains no
// ';', space, '=' or newline and so travels unchanged in both versions.
func EncodeValue(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// DecodeValue reverses EncodeValue.
func DecodeValue(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("pmi: value %s is not unpadded base64url: %w", quote([]byte(s)), err)
	}
	return b, nil
}
