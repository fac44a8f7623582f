package transport_test

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is a small scripted WebSocket server written without any WebSocket library,
// so that no adapter is tested against its own library. The conformance test drives it
// per connection; the benchmark reuses its handshake and frame encoder.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// WebSocket opcodes.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// appendFrame appends one unmasked server frame.
func appendFrame(b []byte, fin bool, op byte, p []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	switch n := len(p); {
	case n < 126:
		b = append(b, b0, byte(n))
	case n <= 0xFFFF:
		b = append(b, b0, 126, byte(n>>8), byte(n))
	default:
		b = append(b, b0, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, p...)
}

// closePayload encodes a close frame body.
func closePayload(code int, reason string) []byte {
	p := binary.BigEndian.AppendUint16(nil, uint16(code))
	return append(p, reason...)
}

// acceptKey computes Sec-WebSocket-Accept for key.
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// upgrade reads the client's upgrade request from br and answers 101.
func upgrade(conn net.Conn, br *bufio.Reader) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	key := req.Header.Get("Sec-WebSocket-Key")
	if key == "" || !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		return nil, errors.New("not a websocket upgrade")
	}
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Accept: " + acceptKey(key) + "\r\n"
	if strings.Contains(req.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate") {
		// Accepted without context takeover, which every library can do; the
		// server still sends plain frames unless a test writes compressed ones.
		resp += "Sec-WebSocket-Extensions: " + rawDeflateAnswer + "\r\n"
	}
	resp += "\r\n"
	if _, err := io.WriteString(conn, resp); err != nil {
		return nil, fmt.Errorf("write 101: %w", err)
	}
	return req, nil
}

// frame is one frame received from a client.
type frame struct {
	fin     bool
	op      byte
	payload []byte
}

// readClientFrame reads one masked client frame.
func readClientFrame(br *bufio.Reader) (frame, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return frame{}, err
	}
	f := frame{fin: hdr[0]&0x80 != 0, op: hdr[0] & 0x0F}
	if hdr[1]&0x80 == 0 {
		return frame{}, errors.New("unmasked client frame")
	}
	n := uint64(hdr[1] & 0x7F)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return frame{}, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return frame{}, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	if n > 1<<20 {
		return frame{}, fmt.Errorf("client frame of %d bytes", n)
	}
	var mask [4]byte
	if _, err := io.ReadFull(br, mask[:]); err != nil {
		return frame{}, err
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(br, f.payload); err != nil {
		return frame{}, err
	}
	for i := range f.payload {
		f.payload[i] ^= mask[i&3]
	}
	return f, nil
}

type reject struct {
	n, status int
	header    http.Header
}

// wsServer accepts WebSocket connections on 127.0.0.1 and hands each to the test by the
// value of its X-Soak-Conn request header.
type wsServer struct {
	ln     net.Listener
	scheme string
	wg     sync.WaitGroup

	mu      sync.Mutex
	rejects []reject
	conns   map[string]*wsConn
	arrived chan struct{} // closed and replaced whenever a connection arrives
	all     []*wsConn
	greet   []byte // frames written in the same write as the 101
}

func newWSServer() (*wsServer, error) { return newWSServerTLS(nil) }

// newWSServerTLS serves wss when cfg is not nil.
func newWSServerTLS(cfg *tls.Config) (*wsServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	scheme := "ws://"
	if cfg != nil {
		ln, scheme = tls.NewListener(ln, cfg), "wss://"
	}
	s := &wsServer{ln: ln, scheme: scheme, conns: map[string]*wsConn{}, arrived: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *wsServer) URL() string { return s.scheme + s.ln.Addr().String() }

// RejectHandshakes makes the next n upgrades fail with status and header.
func (s *wsServer) RejectHandshakes(n, status int, header http.Header) {
	s.mu.Lock()
	s.rejects = append(s.rejects, reject{n, status, header})
	s.mu.Unlock()
}

// Greet makes every later connection receive p (encoded frames) together with its 101.
func (s *wsServer) Greet(p []byte) {
	s.mu.Lock()
	s.greet = p
	s.mu.Unlock()
}

// Close stops accepting, resets every connection and waits for the server's goroutines.
func (s *wsServer) Close() {
	_ = s.ln.Close()
	s.mu.Lock()
	all := s.all
	s.mu.Unlock()
	for _, c := range all {
		_ = c.conn.Close()
	}
	s.wg.Wait()
}

// WaitConn returns the connection whose X-Soak-Conn header is tag.
func (s *wsServer) WaitConn(ctx context.Context, tag string) (*wsConn, error) {
	for {
		s.mu.Lock()
		c, ok := s.conns[tag]
		arrived := s.arrived
		s.mu.Unlock()
		if ok {
			return c, nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait conn %q: %w", tag, ctx.Err())
		}
	}
}

func (s *wsServer) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go s.serve(conn)
	}
}

func (s *wsServer) serve(conn net.Conn) {
	defer s.wg.Done()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	s.mu.Lock()
	var rej *reject
	if len(s.rejects) > 0 {
		rej = &s.rejects[0]
		if rej.n--; rej.n == 0 {
			s.rejects = s.rejects[1:]
		}
	}
	greet := s.greet
	s.mu.Unlock()
	if rej != nil {
		s.refuse(conn, br, rej.status, rej.header)
		return
	}
	req, err := upgradeGreet(conn, br, greet)
	if err != nil {
		_ = conn.Close()
		return
	}
	_ = conn.SetDeadline(time.Time{})
	c := &wsConn{
		conn:  conn,
		done:  make(chan struct{}),
		pongs: make(chan []byte, 64),
		texts: make(chan []byte, 1024),
		close: make(chan []byte, 1),
	}
	s.mu.Lock()
	s.all = append(s.all, c)
	if tag := req.Header.Get("X-Soak-Conn"); tag != "" {
		s.conns[tag] = c
	}
	close(s.arrived)
	s.arrived = make(chan struct{})
	s.mu.Unlock()
	c.readLoop(br)
}

func upgradeGreet(conn net.Conn, br *bufio.Reader, greet []byte) (*http.Request, error) {
	if len(greet) == 0 {
		return upgrade(conn, br)
	}
	// Write the 101 and the first frames in one segment, as a busy server does.
	return upgrade(&prefixWriter{Conn: conn, tail: greet}, br)
}

// prefixWriter appends tail to the first Write.
type prefixWriter struct {
	net.Conn
	tail []byte
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	b := append(append([]byte(nil), p...), w.tail...)
	_, err := w.Conn.Write(b)
	return len(p), err
}

func (s *wsServer) refuse(conn net.Conn, br *bufio.Reader, status int, header http.Header) {
	defer conn.Close()
	if _, err := http.ReadRequest(br); err != nil {
		return
	}
	body := http.StatusText(status) + "\n"
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("Content-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body)
	_, _ = io.WriteString(conn, b.String())
}

// wsConn is the server side of one connection.
type wsConn struct {
	conn        net.Conn
	ignorePings atomic.Bool // leave client pings unanswered
	wmu         sync.Mutex
	done        chan struct{} // closed when the client side is gone
	pongs       chan []byte   // pong payloads received
	texts       chan []byte   // text messages received (single-frame only)
	close       chan []byte   // the client's close payload
}

func (c *wsConn) readLoop(br *bufio.Reader) {
	defer close(c.done)
	defer c.conn.Close()
	for {
		f, err := readClientFrame(br)
		if err != nil {
			return
		}
		switch f.op {
		case opPong:
			select {
			case c.pongs <- f.payload:
			default:
			}
		case opPing:
			if !c.ignorePings.Load() {
				_ = c.write(appendFrame(nil, true, opPong, f.payload))
			}
		case opText:
			select {
			case c.texts <- f.payload:
			default:
			}
		case opClose:
			c.close <- f.payload
			_ = c.write(appendFrame(nil, true, opClose, f.payload)) // echo
			return
		}
	}
}

func (c *wsConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.conn.Write(b)
	return err
}

// SendText sends p as one text frame.
func (c *wsConn) SendText(p []byte) error { return c.write(appendFrame(nil, true, opText, p)) }

// SendFragmented sends p as one text message split into parts frames.
func (c *wsConn) SendFragmented(p []byte, parts int) error {
	var b []byte
	size := (len(p) + parts - 1) / parts
	for i := range parts {
		lo, hi := min(i*size, len(p)), min((i+1)*size, len(p))
		op := byte(opContinuation)
		if i == 0 {
			op = opText
		}
		b = appendFrame(b, i == parts-1, op, p[lo:hi])
	}
	return c.write(b)
}

// SendRawTo writes b (encoded frames) to the connection tagged tag.
func (s *wsServer) SendRawTo(tag string, b []byte) error {
	s.mu.Lock()
	c, ok := s.conns[tag]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("no connection %q", tag)
	}
	return c.SendRaw(b)
}

// SendRaw writes already encoded frames.
func (c *wsConn) SendRaw(b []byte) error { return c.write(b) }

// Ping sends a ping with payload.
func (c *wsConn) Ping(payload []byte) error { return c.write(appendFrame(nil, true, opPing, payload)) }

// WaitPong waits for a pong carrying payload.
func (c *wsConn) WaitPong(ctx context.Context, payload []byte) error {
	for {
		select {
		case p := <-c.pongs:
			if string(p) == string(payload) {
				return nil
			}
		case <-c.done:
			return errors.New("wait pong: connection gone")
		case <-ctx.Done():
			return fmt.Errorf("wait pong: %w", ctx.Err())
		}
	}
}

// Close sends a close frame with code and reason (the client echoes it).
func (c *wsConn) Close(code int, reason string) error {
	return c.write(appendFrame(nil, true, opClose, closePayload(code, reason)))
}

// Drop closes the TCP connection without a close frame (FIN).
func (c *wsConn) Drop() error { return c.conn.Close() }

// Reset aborts the TCP connection (RST).
func (c *wsConn) Reset() error {
	if tc, ok := c.conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	return c.conn.Close()
}

// Done is closed when the connection is gone.
func (c *wsConn) Done() <-chan struct{} { return c.done }
