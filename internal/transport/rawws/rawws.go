// Package rawws is a minimal RFC 6455 client with no WebSocket library: it
// dials, does the opening handshake, then reads frames off the socket through
// one large buffer and counts messages and payload bytes. It is the practical
// ceiling a library can be compared with on a machine.
//
// It negotiates no extension, so a frame with a reserved bit set is an error;
// server frames must be unmasked (RFC 6455 5.1). Fragmented messages are
// reassembled (or only counted), control frames may come between fragments, a
// ping is answered with a pong and a close frame is echoed and ends the read.
//
// It is the transport with no library, beside the library adapters: the
// bench reads with it (the raw and ceiling paths) and the chat load client
// talks to every chat server through it.
package rawws

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Opcodes (RFC 6455 5.2).
const (
	OpContinuation = 0x0
	OpText         = 0x1
	OpBinary       = 0x2
	OpClose        = 0x8
	OpPing         = 0x9
	OpPong         = 0xA
)

// DefaultBufferSize is the read buffer's size: one read takes up to this much.
const DefaultBufferSize = 256 << 10

// minBuffer is the smallest read buffer: a control frame with its header fits it.
const minBuffer = 256

// ErrProtocol is wrapped by every error about what the server sent.
var ErrProtocol = errors.New("protocol error")

// Options configure Dial.
type Options struct {
	BufferSize int   // read buffer; 0: DefaultBufferSize
	MaxMessage int64 // largest message kept (Reader.Next with keep); 0: 64 MiB
	// NetDial makes the TCP connection (e.g. transport.Dialer's, which sets
	// SO_RCVBUF before connect); nil: a plain net.Dialer.
	NetDial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Subprotocols are offered in Sec-WebSocket-Protocol (the firehose's
	// encodings); none: no header. The answer is not checked.
	Subprotocols []string
}

// Counts is what a Reader has read.
type Counts struct {
	Messages     int64 // data messages (text or binary), fragmented ones counted once
	PayloadBytes int64 // their payload bytes
	Frames       int64 // every frame, control frames included
	Reads        int64 // read calls on the socket after the handshake
	WireBytes    int64 // bytes read after the handshake's response
	Pings        int64
	CloseCode    int    // the server's close code (1005 when it had none); 0 before a close
	CloseReason  string // the reason of the server's close frame, if any
}

// Header is a parsed frame header.
type Header struct {
	Fin    bool
	Rsv    byte // the three reserved bits, as 0..7
	Op     byte
	Masked bool
	Mask   [4]byte
	Length int64
}

// ParseHeader parses the frame header at the start of b. It returns the
// header and its size, or n == 0 when b holds less than a whole header. An
// error wraps ErrProtocol: a length with its top bit set, or a length not in
// its shortest form is not an error here (RFC 6455 asks for the minimal form
// but readers accept the others).
func ParseHeader(b []byte) (h Header, n int, err error) {
	if len(b) < 2 {
		return h, 0, nil
	}
	h.Fin = b[0]&0x80 != 0
	h.Rsv = (b[0] >> 4) & 0x7
	h.Op = b[0] & 0x0f
	h.Masked = b[1]&0x80 != 0
	n = 2
	switch l := b[1] & 0x7f; l {
	case 126:
		if len(b) < 4 {
			return h, 0, nil
		}
		h.Length = int64(binary.BigEndian.Uint16(b[2:4]))
		n = 4
	case 127:
		if len(b) < 10 {
			return h, 0, nil
		}
		v := binary.BigEndian.Uint64(b[2:10])
		if v>>63 != 0 {
			return h, 0, fmt.Errorf("%w: 64-bit length with its top bit set", ErrProtocol)
		}
		h.Length = int64(v)
		n = 10
	default:
		h.Length = int64(l)
	}
	if h.Masked {
		if len(b) < n+4 {
			return h, 0, nil
		}
		copy(h.Mask[:], b[n:n+4])
		n += 4
	}
	return h, n, nil
}

// check rejects what a client must fail the connection for.
func (h Header) check(inMessage bool) error {
	switch {
	case h.Rsv != 0:
		return fmt.Errorf("%w: reserved bits %03b set, no extension negotiated", ErrProtocol, h.Rsv)
	case h.Masked:
		return fmt.Errorf("%w: masked frame from the server", ErrProtocol)
	case h.Op >= 0x8 && h.Op <= 0xA && (!h.Fin || h.Length > 125):
		return fmt.Errorf("%w: control frame fragmented or longer than 125 bytes", ErrProtocol)
	case h.Op == OpContinuation && !inMessage:
		return fmt.Errorf("%w: continuation frame outside a message", ErrProtocol)
	case (h.Op == OpText || h.Op == OpBinary) && inMessage:
		return fmt.Errorf("%w: new message inside a fragmented one", ErrProtocol)
	case h.Op > 0x2 && h.Op < 0x8 || h.Op > 0xA:
		return fmt.Errorf("%w: reserved opcode %#x", ErrProtocol, h.Op)
	}
	return nil
}

// Reader reads frames from a connection.
type Reader struct {
	rd         io.Reader // the socket
	w          io.Writer // where pongs and the close echo go; nil: not sent
	buf        []byte
	start, end int // buf[start:end] is read and not consumed

	inMessage bool  // between a fragmented message's first and last frame
	text      bool  // the current message's type
	msgLen    int64 // payload so far of the current message
	keep      bool  // the current message's payload is being assembled
	msg       []byte
	maxMsg    int64

	counts Counts
}

// NewReader reads frames from r (already past the handshake) through a buffer
// of bufSize bytes (0: DefaultBufferSize), the first bytes of which are
// pending; pongs and the close echo are written, masked, to w when it is not nil.
func NewReader(r io.Reader, w io.Writer, bufSize int, pending []byte) *Reader {
	if bufSize <= 0 {
		bufSize = DefaultBufferSize
	}
	// A whole control frame (14 + 125 bytes at most) must fit the buffer.
	rd := &Reader{rd: r, w: w, buf: make([]byte, max(bufSize, len(pending), minBuffer)), maxMsg: 64 << 20}
	rd.end = copy(rd.buf, pending)
	rd.counts.WireBytes = int64(rd.end) // read with the handshake's response
	return rd
}

// Counts returns what has been read so far.
func (r *Reader) Counts() Counts { return r.counts }

// fill reads until at least need bytes are buffered.
func (r *Reader) fill(need int) error {
	if r.end-r.start >= need {
		return nil
	}
	if need > len(r.buf) {
		panic("rawws: fill beyond the buffer") // callers ask for a header, a control frame or what fits
	}
	if r.start > 0 && len(r.buf)-r.start < need {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	for r.end-r.start < need {
		n, err := r.rd.Read(r.buf[r.end:])
		r.counts.Reads++
		r.counts.WireBytes += int64(n)
		r.end += n
		if err != nil {
			if r.end-r.start >= need {
				return nil
			}
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// payload consumes a frame payload of n bytes: appended to r.msg if keep,
// otherwise only skipped. When the whole message is one frame that fits the
// buffer, it is returned as a slice of the buffer (no copy).
func (r *Reader) payload(n int64, keep, whole bool) ([]byte, error) {
	if keep && whole && n <= int64(len(r.buf)) {
		if err := r.fill(int(n)); err != nil {
			return nil, err
		}
		p := r.buf[r.start : r.start+int(n)]
		r.start += int(n)
		return p, nil
	}
	for n > 0 {
		if r.start == r.end {
			if err := r.fill(1); err != nil {
				return nil, err
			}
		}
		k := int(min(n, int64(r.end-r.start)))
		if keep {
			r.msg = append(r.msg, r.buf[r.start:r.start+k]...)
		}
		r.start += k
		n -= int64(k)
	}
	return r.msg, nil
}

// Message is one data message.
type Message struct {
	Text    bool
	Len     int64
	Payload []byte // nil unless kept; valid until the next call of Next
}

// Next returns the next data message, answering pings on the way. With keep
// the payload is returned, otherwise it is only counted. After the server's
// close frame (echoed), Next returns io.EOF and Counts().CloseCode is set.
func (r *Reader) Next(keep bool) (Message, error) {
	for {
		if err := r.fill(2); err != nil {
			return Message{}, r.eof(err)
		}
		h, n, err := ParseHeader(r.buf[r.start:r.end])
		for err == nil && n == 0 {
			need := r.end - r.start + 1
			if err = r.fill(need); err != nil {
				return Message{}, r.eof(err)
			}
			h, n, err = ParseHeader(r.buf[r.start:r.end])
		}
		if err != nil {
			return Message{}, err
		}
		if err := h.check(r.inMessage); err != nil {
			return Message{}, err
		}
		r.start += n
		r.counts.Frames++
		if h.Op >= 0x8 {
			if done, err := r.control(h); err != nil || done {
				if err == nil {
					err = io.EOF
				}
				return Message{}, err
			}
			continue
		}
		if h.Op != OpContinuation {
			r.inMessage, r.text, r.msgLen = true, h.Op == OpText, 0
			r.keep, r.msg = keep, r.msg[:0]
		}
		if r.msgLen+h.Length > r.maxMsg && r.keep {
			return Message{}, fmt.Errorf("%w: message longer than %d bytes", ErrProtocol, r.maxMsg)
		}
		p, err := r.payload(h.Length, r.keep, h.Fin && h.Op != OpContinuation)
		if err != nil {
			return Message{}, r.eof(err)
		}
		r.msgLen += h.Length
		if !h.Fin {
			continue
		}
		r.inMessage = false
		r.counts.Messages++
		r.counts.PayloadBytes += r.msgLen
		m := Message{Text: r.text, Len: r.msgLen}
		if r.keep {
			m.Payload = p
		}
		return m, nil
	}
}

// eof reports a connection that ended without a close frame.
func (r *Reader) eof(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("connection ended without a close frame: %w", err)
	}
	return err
}

// control handles a ping, pong or close frame; done after a close.
func (r *Reader) control(h Header) (done bool, err error) {
	var body [125]byte
	if err := r.fill(int(h.Length)); err != nil {
		return false, r.eof(err)
	}
	p := body[:copy(body[:], r.buf[r.start:r.start+int(h.Length)])]
	r.start += int(h.Length)
	switch h.Op {
	case OpPing:
		r.counts.Pings++
		return false, r.send(OpPong, p)
	case OpClose:
		code := 1005
		switch {
		case len(p) == 1:
			return true, fmt.Errorf("%w: close frame with a 1-byte body", ErrProtocol)
		case len(p) >= 2:
			code = int(binary.BigEndian.Uint16(p))
		}
		r.counts.CloseCode = code
		if len(p) > 2 {
			r.counts.CloseReason = string(p[2:])
		}
		var echo []byte
		if code != 1005 {
			echo = p[:2]
		}
		_ = r.send(OpClose, echo) // the server may already be gone
		return true, nil
	}
	return false, nil
}

// send writes a masked control frame.
func (r *Reader) send(op byte, p []byte) error {
	if r.w == nil {
		return nil
	}
	f := AppendFrame(nil, op, true, p, true)
	if _, err := r.w.Write(f); err != nil {
		return fmt.Errorf("write %#x frame: %w", op, err)
	}
	return nil
}

// AppendFrame appends a frame with payload p to dst, masked with a random key
// when masked (as a client must send it).
func AppendFrame(dst []byte, op byte, fin bool, p []byte, masked bool) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	var m byte
	if masked {
		m = 0x80
	}
	switch {
	case len(p) <= 125:
		dst = append(dst, b0, m|byte(len(p)))
	case len(p) <= 0xffff:
		dst = append(dst, b0, m|126, byte(len(p)>>8), byte(len(p)))
	default:
		dst = append(dst, b0, m|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(len(p)))
	}
	if !masked {
		return append(dst, p...)
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	dst = append(dst, key[:]...)
	for i, c := range p {
		dst = append(dst, c^key[i%4])
	}
	return dst
}

// Conn is a dialled connection.
type Conn struct {
	net.Conn
	*Reader
}

// Dial connects to a ws:// URL and does the opening handshake (no
// extension; Options.Subprotocols offered), bounded by ctx.
func Dial(ctx context.Context, rawURL string, opt Options) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	if u.Scheme != "ws" {
		return nil, fmt.Errorf("dial %s: only ws:// URLs", rawURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	netDial := opt.NetDial
	if netDial == nil {
		netDial = (&net.Dialer{}).DialContext
	}
	nc, err := netDial(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	pending, err := handshake(nc, u, opt.Subprotocols)
	if !stop() || err != nil {
		nc.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("dial: %w", err)
	}
	_ = nc.SetDeadline(time.Time{})
	rd := NewReader(nc, nc, opt.BufferSize, pending)
	if opt.MaxMessage > 0 {
		rd.maxMsg = opt.MaxMessage
	}
	return &Conn{Conn: nc, Reader: rd}, nil
}

// handshake sends the upgrade request and checks the response; it returns
// the bytes read past the response (the first frames).
func handshake(nc net.Conn, u *url.URL, protocols []string) ([]byte, error) {
	var k [16]byte
	_, _ = rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	path := u.RequestURI()
	req := "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n"
	if len(protocols) > 0 {
		req += "Sec-WebSocket-Protocol: " + strings.Join(protocols, ", ") + "\r\n"
	}
	req += "\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	br := bufio.NewReaderSize(nc, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, fmt.Errorf("handshake: status %d", resp.StatusCode)
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	switch {
	case !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket"):
		return nil, fmt.Errorf("handshake: Upgrade %q", resp.Header.Get("Upgrade"))
	case !headerHas(resp.Header, "Connection", "upgrade"):
		return nil, fmt.Errorf("handshake: Connection %q", resp.Header.Get("Connection"))
	case resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]):
		return nil, errors.New("handshake: wrong Sec-WebSocket-Accept")
	case resp.Header.Get("Sec-WebSocket-Extensions") != "":
		return nil, fmt.Errorf("handshake: extension %q not asked for", resp.Header.Get("Sec-WebSocket-Extensions"))
	}
	pending, _ := br.Peek(br.Buffered())
	return append([]byte(nil), pending...), nil
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// Skip reads n bytes off the connection without looking at them (the frames
// the caller knows are coming, a close frame included), then closes it with
// a masked close 1000: the cheapest reader there is, to measure a server.
func (c *Conn) Skip(n int64) (Counts, error) {
	r := c.Reader
	have := int64(r.end - r.start)
	r.start, r.end = 0, 0
	for have < n {
		k, err := r.rd.Read(r.buf)
		r.counts.Reads++
		r.counts.WireBytes += int64(k)
		have += int64(k)
		if err != nil && have < n {
			return r.counts, fmt.Errorf("skip: %d of %d bytes: %w", have, n, err)
		}
	}
	if have > n {
		return r.counts, fmt.Errorf("skip: %d bytes came, %d expected", have, n)
	}
	return r.counts, r.send(OpClose, []byte{0x03, 0xe8})
}

// Drain reads every message until the server's close frame, counting them
// (payloads skipped), and returns the counts. A connection that ends
// without a close frame is an error.
func (c *Conn) Drain() (Counts, error) {
	for {
		if _, err := c.Next(false); err != nil {
			if errors.Is(err, io.EOF) {
				return c.Counts(), nil
			}
			return c.Counts(), err
		}
	}
}
