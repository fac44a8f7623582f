// Package firehose is a WebSocket server that never paces: on every accepted
// connection it writes a scenario's N pre-encoded Binance-shaped messages as
// fast as the socket takes them, many frames per write, then closes with 1000.
// It records what it sent on each connection, served as JSON on
// GET /_firehose/stats, so that a client's count can be checked against it.
//
// The path of the upgrade request chooses the form: /ws… sends the bare
// payloads, anything else (/stream?streams=…) wraps each one as
// {"stream":<name>,"data":<payload>}. The stream names asked for are not
// looked at: the scenario decides what is sent.
package firehose

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/deflate"
	"github.com/wssoak/wssoak/internal/wire"
)

// StatsPath is where the server answers with its Stats as JSON.
const StatsPath = "/_firehose/stats"

// DefaultWriteSize is how many bytes of frames one write hands the socket.
const DefaultWriteSize = 256 << 10

// maxConnStats is how many connections Stats keeps (the latest ones).
const maxConnStats = 1000

// closeWait bounds the wait for the client's close frame after the server's.
const closeWait = 5 * time.Second

// Config configures a Server.
type Config struct {
	Scenario  Scenario
	N         int    // messages per connection
	Seed      uint64 // seed of the generated values
	Conns     int    // connections to serve (completed handshakes: a failed one does not count), after which Done is closed and upgrades are refused; 0: no limit
	WriteSize int    // bytes per write; 0: DefaultWriteSize
	// Deflate is the permessage-deflate the server accepts (off: none). A
	// connection that negotiated it is sent the batch compressed for its
	// parameters, compressed once and shared by every such connection.
	Deflate wire.Deflate
	// Live encodes (and compresses) each message as it sends it, from the
	// events held as values (codec.Event), as a real server does, instead
	// of writing the batch encoded once: the sender's per-message cost is
	// then part of what a run measures (ConnStats.EncodeNS, the server's
	// CPU). The bytes sent are the same.
	Live   bool
	Logger *slog.Logger
}

// Stats is what the server sent.
type Stats struct {
	Scenario     string      `json:"scenario"`
	N            int         `json:"n"`             // messages each connection is sent
	PayloadBytes int64       `json:"payload_bytes"` // payload bytes of the N messages, combined form, JSON
	WireBytes    int64       `json:"wire_bytes"`    // the N frames, headers included, combined form (the close frame excluded)
	Served       int         `json:"served"`        // connections accepted so far (handshakes completed)
	Failed       int         `json:"failed"`        // upgrade requests whose handshake failed (not counted in Served)
	Conns        []ConnStats `json:"conns"`         // the latest 1000 connections, oldest first
}

// ConnStats is what one connection was sent.
type ConnStats struct {
	ID           int       `json:"id"` // 1, 2, … in accept order
	Remote       string    `json:"remote"`
	Path         string    `json:"path"`
	Combined     bool      `json:"combined"`
	Encoding     string    `json:"encoding"`             // json, msgpack or packed, by the subprotocol asked
	Extensions   string    `json:"extensions,omitempty"` // the Sec-WebSocket-Extensions answer
	Messages     int       `json:"messages"`             // whole messages written
	PayloadBytes int64     `json:"payload_bytes"`        // their payload bytes
	WireBytes    int64     `json:"wire_bytes"`           // bytes written, frame headers included (close frame excluded)
	Writes       int64     `json:"writes"`               // write calls
	Start        time.Time `json:"start"`
	End          time.Time `json:"end,omitzero"` // the last message written (zero while sending)
	// UserNS and SysNS are the server process's CPU while it sent to this
	// connection (getrusage before the first write and after the close
	// frame: the connection's own when it is the only one served at a time).
	UserNS int64 `json:"user_ns"`
	SysNS  int64 `json:"sys_ns"`
	// EncodeNS is the time spent encoding, compressing and framing the
	// messages (Config.Live; 0 otherwise), on the monotonic clock.
	EncodeNS  int64  `json:"encode_ns"`
	CloseSent int    `json:"close_sent"` // 1000 once sent
	CloseGot  int    `json:"close_got"`  // the client's close code; 0 if none came
	Done      bool   `json:"done"`       // the connection is over
	Err       string `json:"err,omitempty"`
}

// Server is a firehose.
type Server struct {
	cfg  Config
	log  *slog.Logger
	http *http.Server

	batches [2][3]struct { // [0] raw, [1] combined; by codec.Encoding
		once sync.Once
		b    *Batch
		err  error
	}
	zmu      sync.Mutex
	zbatches map[zkey]*zbatch // compressed batches by form and parameters
	liveEvs  [2]struct {      // Config.Live: the messages as values, [0] raw, [1] combined
		once sync.Once
		evs  []codec.Event
		err  error
	}

	mu     sync.Mutex
	addr   string
	served int
	failed int // handshakes that failed
	// upgrading is the handshakes under way: each holds a slot of
	// Config.Conns until it completes (served) or fails (given back).
	upgrading int
	upgraded  *sync.Cond // on mu: an upgrade completed or failed
	active    int
	stats     []*ConnStats
	live      map[net.Conn]struct{}
	closed    bool
	done      chan struct{}
	isDone    bool
	serving   chan struct{}
	wg        sync.WaitGroup
}

// New checks cfg and encodes the combined-form batch, so that the first
// connection does not wait for it.
func New(cfg Config) (*Server, error) {
	if cfg.N < 1 {
		return nil, fmt.Errorf("message count %d: want at least 1", cfg.N)
	}
	if cfg.Conns < 0 {
		return nil, fmt.Errorf("connection count %d: want 0 (no limit) or more", cfg.Conns)
	}
	if len(cfg.Scenario.Streams) == 0 {
		return nil, errors.New("no scenario")
	}
	if cfg.WriteSize <= 0 {
		cfg.WriteSize = DefaultWriteSize
	}
	if err := cfg.Deflate.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, done: make(chan struct{}), live: map[net.Conn]struct{}{}}
	s.upgraded = sync.NewCond(&s.mu)
	if _, err := s.batch(true, codec.JSON); err != nil {
		return nil, err
	}
	if cfg.Live {
		if _, err := s.events(true); err != nil {
			return nil, err
		}
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)}
	return s, nil
}

// batch returns the batch of the form and encoding, encoding it on first use.
func (s *Server) batch(combined bool, enc codec.Encoding) (*Batch, error) {
	i := 0
	if combined {
		i = 1
	}
	e := &s.batches[i][enc]
	e.once.Do(func() { e.b, e.err = PrepareEncoded(s.cfg.Scenario, s.cfg.N, s.cfg.Seed, combined, enc) })
	return e.b, e.err
}

// WireBytes returns the bytes of the N frames in the combined form and
// encoding enc (the close frame excluded), encoding the batch if need be.
func (s *Server) WireBytes(enc codec.Encoding) (int64, error) {
	b, err := s.batch(true, enc)
	if err != nil {
		return 0, err
	}
	return int64(len(b.Wire())), nil
}

// offered returns the subprotocols a handshake request offers.
func offered(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// Listen listens on addr and serves in the background; Addr is valid on return.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	serving := make(chan struct{})
	s.mu.Lock()
	s.addr, s.serving = ln.Addr().String(), serving
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		s.addr = net.JoinHostPort("127.0.0.1", fmt.Sprint(ta.Port)) // every interface: loopback is one
	}
	s.mu.Unlock()
	go func() {
		defer close(serving)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serve", "err", err)
		}
	}()
	return nil
}

// Addr returns the listening address, e.g. "127.0.0.1:40123".
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URL returns the combined-stream URL of the scenario's streams.
func (s *Server) URL() string {
	return "ws://" + s.Addr() + "/stream?streams=" + strings.Join(s.cfg.Scenario.Streams, "/")
}

// RawURL returns the raw-stream URL (payloads not wrapped).
func (s *Server) RawURL() string {
	return "ws://" + s.Addr() + "/ws/" + strings.Join(s.cfg.Scenario.Streams, "/")
}

// Done is closed once Config.Conns connections are over (never with no limit).
func (s *Server) Done() <-chan struct{} { return s.done }

// Close stops listening, ends the connections still being served and waits for them.
func (s *Server) Close() error {
	err := s.http.Close() // closes the listener; hijacked connections are ours
	s.mu.Lock()
	serving := s.serving
	s.closed = true
	for c := range s.live {
		_ = c.Close()
	}
	s.mu.Unlock()
	if serving != nil {
		<-serving
	}
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// Stats returns what was sent so far.
func (s *Server) Stats() Stats {
	b, _ := s.batch(true, codec.JSON)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Scenario: s.cfg.Scenario.Name, N: s.cfg.N, PayloadBytes: b.PayloadBytes, WireBytes: int64(len(b.Wire())), Served: s.served, Failed: s.failed, Conns: make([]ConnStats, len(s.stats))}
	for i, c := range s.stats {
		st.Conns[i] = *c
	}
	return st
}

// ServeHTTP answers GET StatsPath and upgrades every other request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == StatsPath {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		// Not counted as a connection: only WebSocket upgrades use up Config.Conns.
		http.Error(w, "firehose: a WebSocket upgrade, or GET "+StatsPath, http.StatusBadRequest)
		return
	}
	combined := !strings.HasPrefix(r.URL.Path, "/ws")
	enc, answer := codec.Negotiate(offered(r)) // as the replay server: JSON unless a known subprotocol is asked
	b, err := s.batch(combined, enc)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// Only a completed handshake uses up one of Config.Conns: a slot is
	// held while the upgrade runs and given back when it fails (a bad key,
	// a version other than 13), so that such requests cannot end the
	// firehose before it served a client. While every slot left is held,
	// another upgrade waits for one to complete or fail (an upgrade is
	// bounded: the request is read, its answer written within 10 s).
	s.mu.Lock()
	for s.cfg.Conns > 0 && s.served < s.cfg.Conns && s.served+s.upgrading >= s.cfg.Conns {
		s.upgraded.Wait()
	}
	if s.cfg.Conns > 0 && s.served >= s.cfg.Conns {
		s.mu.Unlock()
		http.Error(w, "firehose: served its connections", http.StatusServiceUnavailable)
		return
	}
	s.upgrading++
	s.active++
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	neg := &deflate.Negotiator{Cfg: s.cfg.Deflate}
	up := ws.HTTPUpgrader{Timeout: 10 * time.Second, Protocol: func(p string) bool { return answer != "" && p == answer }, Negotiate: neg.Negotiate}
	conn, rw, _, err := up.Upgrade(r, w)
	s.mu.Lock()
	s.upgrading--
	s.upgraded.Broadcast()
	if err != nil {
		s.failed++
		s.active--
		s.mu.Unlock()
		s.log.Info("handshake failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	s.served++
	cs := &ConnStats{ID: s.served, Remote: r.RemoteAddr, Path: r.URL.Path, Combined: combined, Encoding: enc.String(), Start: time.Now()}
	s.stats = append(s.stats, cs)
	if len(s.stats) > maxConnStats {
		s.stats = append(s.stats[:0], s.stats[len(s.stats)-maxConnStats:]...)
	}
	s.mu.Unlock()
	defer s.finish(cs)
	defer conn.Close()
	var comp *deflate.Compressor // Config.Live: the connection's own compressor
	if neg.Accepted() {
		s.mu.Lock()
		cs.Extensions = neg.Extensions()
		s.mu.Unlock()
		if s.cfg.Live {
			comp, err = deflate.NewCompressor(s.cfg.Deflate, neg.Params())
		} else {
			b, err = s.compressed(combined, enc, neg.Params())
		}
		if err != nil {
			s.setErr(cs, err)
			return
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.setErr(cs, errors.New("server closed"))
		return
	}
	s.live[conn] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.live, conn)
		s.mu.Unlock()
	}()
	send := s.send
	if s.cfg.Live {
		send = func(conn net.Conn, _ *Batch, cs *ConnStats) error { return s.sendLive(conn, combined, enc, comp, cs) }
	}
	if err := send(conn, b, cs); err != nil {
		s.setErr(cs, err)
		return
	}
	code := awaitClose(conn, rw.Reader)
	s.mu.Lock()
	cs.CloseGot = code
	s.mu.Unlock()
}

// zkey names a compressed batch: the form, the encoding and what changes the bytes.
type zkey struct {
	combined, takeover bool
	enc                codec.Encoding
	bits               int
}

type zbatch struct {
	once sync.Once
	b    *Batch
	err  error
}

// compressed returns the batch of the form and encoding compressed for params, compressing it on first use.
func (s *Server) compressed(combined bool, enc codec.Encoding, params wsflate.Parameters) (*Batch, error) {
	k := zkey{combined, !params.ServerNoContextTakeover, enc, int(params.ServerMaxWindowBits)}
	s.zmu.Lock()
	if s.zbatches == nil {
		s.zbatches = map[zkey]*zbatch{}
	}
	z := s.zbatches[k]
	if z == nil {
		z = &zbatch{}
		s.zbatches[k] = z
	}
	s.zmu.Unlock()
	z.once.Do(func() {
		plain, err := s.batch(combined, enc)
		if err != nil {
			z.err = err
			return
		}
		c, err := deflate.NewCompressor(s.cfg.Deflate, params)
		if err != nil {
			z.err = err
			return
		}
		z.b, z.err = plain.Compress(c)
	})
	return z.b, z.err
}

// send writes the batch to conn, then the close frame 1000.
func (s *Server) send(conn net.Conn, b *Batch, cs *ConnStats) error {
	cpu := startCPU()
	defer cpu.end(s, cs)
	wire := b.Wire()
	var off int64
	var writes int64
	var err error
	for off < int64(len(wire)) && err == nil {
		chunk := wire[off:min(off+int64(s.cfg.WriteSize), int64(len(wire)))]
		var n int
		n, err = conn.Write(chunk)
		off += int64(n)
		writes++
	}
	msgs, payload := b.Sent(off)
	s.mu.Lock()
	cs.Messages, cs.PayloadBytes, cs.WireBytes, cs.Writes, cs.End = msgs, payload, off, writes, time.Now()
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return s.sendClose(conn, cs)
}

// sendClose writes the close frame 1000.
func (s *Server) sendClose(conn net.Conn, cs *ConnStats) error {
	if err := ws.WriteFrame(conn, ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusNormalClosure, ""))); err != nil {
		return fmt.Errorf("write close: %w", err)
	}
	s.mu.Lock()
	cs.CloseSent = int(ws.StatusNormalClosure)
	s.mu.Unlock()
	return nil
}

// awaitClose reads the client's frames until its close frame, for at most
// closeWait, and returns its code (1005 if it had none, 0 if none came).
func awaitClose(conn net.Conn, r io.Reader) int {
	_ = conn.SetReadDeadline(time.Now().Add(closeWait))
	for range 1000 { // a client sends a few pongs or pings at most
		h, err := ws.ReadHeader(r)
		if err != nil || h.Length > 1<<20 {
			return 0
		}
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(r, p); err != nil {
			return 0
		}
		if h.OpCode != ws.OpClose {
			continue
		}
		if h.Masked {
			ws.Cipher(p, h.Mask, 0)
		}
		if len(p) < 2 {
			return int(ws.StatusNoStatusRcvd)
		}
		code, _ := ws.ParseCloseFrameData(p)
		return int(code)
	}
	return 0
}

func (s *Server) setErr(cs *ConnStats, err error) {
	s.log.Info("connection", "id", cs.ID, "err", err)
	s.mu.Lock()
	cs.Err = err.Error()
	s.mu.Unlock()
}

// finish marks cs over and closes Done when the last allowed connection ends.
func (s *Server) finish(cs *ConnStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs.Done = true
	s.active--
	if s.cfg.Conns > 0 && s.served >= s.cfg.Conns && s.active == 0 && !s.isDone {
		s.isDone = true
		close(s.done)
	}
}
