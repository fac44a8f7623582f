// Package replay is a Binance-like market-stream server: the same URL forms,
// control messages, limits, heartbeat and message shapes as the Spot streams
// host, fed by a deterministic synthetic
// generator. Every frame is written with the low-level gobwas/ws API so that
// faults can be injected frame by frame.
//
// Each stream is a topic with its own random source seeded by (Seed, name)
// and a schedule anchored at Start, so its bytes do not depend on which other
// streams exist or when subscribers came. One scheduler goroutine fires all
// topics from a timer heap, renders each event at most once per variant
// (raw/combined × ms/µs) and hands the same bytes to every subscriber's
// bounded queue; one writer goroutine per connection drains it.
package replay

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/deflate"
	"github.com/wssoak/wssoak/internal/wire"
)

// Config configures a Server: the replay settings a profile and a run give
// (wire.Replay; zero fields take wire.DefaultReplay's values), and the
// server's own limits, logger and TLS.
type Config struct {
	wire.Replay
	MaxControlPerSec  int          // default 5 incoming ping+pong+text frames per sliding second; above => close 1008
	MaxStreamsPerConn int          // default 1024 (URL + subscriptions); above => close 1008
	Logger            *slog.Logger // default: discard
	// TLS serves wss:// (TLS on every accepted connection); nil = ws://. It
	// is what serves Replay.TLS (and Replay.CertFile), which New ignores.
	TLS *tls.Config
}

// Stats is what GET /_soak/stats returns: every connection since the start, open or closed.
type Stats struct {
	Conns []ConnStats `json:"conns"`
}

// ConnStats describes one connection.
type ConnStats struct {
	ID            uint64                 `json:"id"`
	Tag           string                 `json:"tag"`
	Remote        string                 `json:"remote"`
	Path          string                 `json:"path"`
	Subprotocol   string                 `json:"subprotocol,omitempty"` // as answered; it names the encoding
	Opened        time.Time              `json:"opened"`
	Closed        time.Time              `json:"closed,omitzero"`
	CloseCode     int                    `json:"closeCode"`
	CloseReason   string                 `json:"closeReason"`
	ClosedBy      string                 `json:"closedBy"` // "server", "client" or ""
	Streams       map[string]StreamStats `json:"streams"`  // "" holds messages sent by SendText/SendFragmented
	PingsSent     int64                  `json:"pingsSent"`
	PongsReceived int64                  `json:"pongsReceived"` // pongs echoing an outstanding ping
	ControlMsgs   int64                  `json:"controlMsgs"`   // incoming ping, pong and data messages
	WireBytes     int64                  `json:"wireBytes"`     // WebSocket frame bytes written after the upgrade (headers and payloads, control frames included; TLS not counted)
	// WireBytesReadable is what the client could read of WireBytes: all of
	// it, or, when the client closed first, what was written before its
	// close frame came (after sending it a client reads nothing more).
	WireBytesReadable int64  `json:"wireBytesReadable"`
	Extensions        string `json:"extensions"` // the Sec-WebSocket-Extensions answer ("" if none)
}

// StreamStats counts the messages of one stream written to one connection's socket.
type StreamStats struct {
	Sent     int64 `json:"sent"`
	Bytes    int64 `json:"bytes"`    // payload bytes
	FirstSeq int64 `json:"firstSeq"` // sequence id (t, a, u, lastUpdateId, k.L) of the first message; 0 if none
	LastSeq  int64 `json:"lastSeq"`
}

// Server is the replay server.
type Server struct {
	cfg  Config
	log  *slog.Logger
	hub  *hub
	http *http.Server

	nextID atomic.Uint64
	wg     sync.WaitGroup // connection handlers

	mu        sync.Mutex
	addr      string
	closing   bool
	closed    bool
	all       []*Conn // every connection, in handshake order
	live      map[*Conn]struct{}
	added     chan struct{} // closed and replaced when a connection registers
	rejectN   int
	rejectSt  int
	rejectHdr http.Header
	rejects   []*rejectRule   // armed reject faults
	faults    []*wire.Applied // the fault log
	serving   chan struct{}   // closed when the Listen goroutine's Serve returns

	schedQuit, schedDone chan struct{} // the fault schedule's goroutine
}

// New validates cfg, fills in defaults and starts the scheduler.
func New(cfg Config) (*Server, error) {
	if cfg.Speed < 0 {
		return nil, fmt.Errorf("new: speed %v is negative", cfg.Speed)
	}
	for k, v := range cfg.Rates {
		if v < 0 {
			return nil, fmt.Errorf("new: rate %s %v is negative", k, v)
		}
	}
	cfg.Replay = cfg.Replay.WithDefaults()
	if err := cfg.Deflate().Validate(); err != nil {
		return nil, fmt.Errorf("new: %w", err)
	}
	for _, s := range cfg.Symbols {
		if st, err := binance.ParseStream(s + "@trade"); err != nil || st.Kind != binance.KindTrade {
			return nil, fmt.Errorf("new: symbol %q is not a lowercase symbol", s)
		}
	}
	defInt := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	defInt(&cfg.MaxControlPerSec, 5)
	defInt(&cfg.MaxStreamsPerConn, 1024)
	// Start and Stop on this process's monotonic clock (a time decoded from a
	// config has only a wall reading): the schedule and the faults then keep
	// their pace when the wall clock is stepped. Events still carry wall-clock E.
	now := time.Now()
	if cfg.Start.IsZero() {
		cfg.Start = now
	}
	cfg.Start = now.Add(cfg.Start.Sub(now))
	if !cfg.Stop.IsZero() {
		cfg.Stop = now.Add(cfg.Stop.Sub(now))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for i, sf := range cfg.Faults {
		if err := validate(sf.Fault); err != nil {
			return nil, fmt.Errorf("new: fault %d: %w", i+1, err)
		}
		if sf.At < 0 || sf.Every < 0 {
			return nil, fmt.Errorf("new: fault %d: negative at or every", i+1)
		}
	}
	s := &Server{
		cfg:   cfg,
		log:   cfg.Logger,
		live:  make(map[*Conn]struct{}),
		added: make(chan struct{}),
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)}
	s.hub = newHub(&s.cfg)
	s.hub.start()
	s.schedQuit, s.schedDone = make(chan struct{}), make(chan struct{})
	go s.runSchedule()
	return s, nil
}

// Serve accepts connections on ln until Close; with Config.TLS each one speaks TLS first.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.addr == "" {
		s.addr = loopbackAddr(ln.Addr())
	}
	s.mu.Unlock()
	if s.cfg.TLS != nil {
		cfg := s.cfg.TLS.Clone()
		cfg.NextProtos = []string{"http/1.1"} // a WebSocket upgrade is HTTP/1.1
		ln = tls.NewListener(ln, cfg)
	}
	if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Listen listens on addr and serves in the background; Addr is valid on return.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.addr = loopbackAddr(ln.Addr())
	s.serving = done
	s.mu.Unlock()
	go func() {
		defer close(done)
		if err := s.Serve(ln); err != nil {
			s.log.Error("serve", "err", err)
		}
	}()
	return nil
}

// loopbackAddr reports an unspecified listen address as 127.0.0.1.
func loopbackAddr(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", fmt.Sprint(ta.Port))
	}
	return a.String()
}

// Addr returns the listening address, e.g. "127.0.0.1:9443".
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URL returns the WebSocket base URL, e.g. "ws://127.0.0.1:9443" ("wss://" with Config.TLS).
func (s *Server) URL() string {
	if s.cfg.TLS != nil {
		return "wss://" + s.Addr()
	}
	return "ws://" + s.Addr()
}

// Close closes every connection with 1001, stops the generators and waits for all goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closing, s.closed = true, true
	conns := make([]*Conn, 0, len(s.live))
	for c := range s.live {
		conns = append(conns, c)
	}
	serving := s.serving
	s.mu.Unlock()
	close(s.schedQuit)
	<-s.schedDone
	err := s.http.Close()
	for _, c := range conns {
		c.fail(1001, "server shutting down", "server", modeSend)
	}
	s.wg.Wait()
	s.hub.stop()
	if serving != nil {
		<-serving
	}
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// Stats returns the counters of every connection so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	all := append([]*Conn(nil), s.all...)
	s.mu.Unlock()
	st := Stats{Conns: make([]ConnStats, 0, len(all))}
	for _, c := range all {
		st.Conns = append(st.Conns, c.stats())
	}
	return st
}

// RejectHandshakes makes the next n WebSocket handshakes fail with status and header.
func (s *Server) RejectHandshakes(n int, status int, header http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectN, s.rejectSt, s.rejectHdr = n, status, header.Clone()
}

// WaitConn returns the latest connection whose handshake carried X-Soak-Conn: tag,
// waiting for it to appear.
func (s *Server) WaitConn(ctx context.Context, tag string) (*Conn, error) {
	for {
		s.mu.Lock()
		for i := len(s.all) - 1; i >= 0; i-- {
			if s.all[i].tag == tag {
				c := s.all[i]
				s.mu.Unlock()
				return c, nil
			}
		}
		added := s.added
		s.mu.Unlock()
		select {
		case <-added:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait conn %q: %w", tag, ctx.Err())
		}
	}
}

// Conns returns the open connections in handshake order.
func (s *Server) Conns() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Conn, 0, len(s.live))
	for _, c := range s.all {
		if _, ok := s.live[c]; ok {
			out = append(out, c)
		}
	}
	return out
}

// ServeHTTP routes the WebSocket paths and /_soak/stats; anything else is 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serveREST(w, r) { // rest.go
		return
	}
	path := r.URL.Path
	var (
		names    []string
		combined bool
	)
	query, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "bad query", http.StatusBadRequest)
		return
	}
	switch {
	case path == wire.PathStats:
		s.serveJSON(w, r, func() any { return s.Stats() })
		return
	case path == wire.PathFaults:
		s.serveJSON(w, r, func() any { return s.Faults() })
		return
	case path == "/ws" || strings.HasPrefix(path, "/ws/"):
		names = splitNames(strings.TrimPrefix(path, "/ws"))
	case path == "/stream":
		names, combined = splitNames(query["streams"]), true
	default:
		http.NotFound(w, r)
		return
	}
	micro := false
	switch query["timeUnit"] {
	case "", "MILLISECOND", "millisecond":
	case "MICROSECOND", "microsecond":
		micro = true
	default:
		http.Error(w, "invalid timeUnit", http.StatusBadRequest)
		return
	}
	for _, n := range names {
		if _, err := binance.ParseStream(n); err != nil {
			http.Error(w, "invalid stream", http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	if s.rejectN > 0 {
		s.rejectN--
		status, hdr := s.rejectSt, s.rejectHdr
		s.mu.Unlock()
		for k, v := range hdr {
			w.Header()[k] = v
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	if rr := s.rejectFor(r.Header.Get(wire.TagHeader), r.RemoteAddr); rr != nil {
		s.mu.Unlock()
		s.log.Info("fault reject", "tag", r.Header.Get(wire.TagHeader), "remote", r.RemoteAddr, "status", rr.f.Status)
		rr.write(w)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	neg := &deflate.Negotiator{Cfg: s.cfg.Deflate()}
	nc, rw, hs, err := ws.HTTPUpgrader{Timeout: 10 * time.Second, Protocol: knownProtocol, Negotiate: neg.Negotiate}.Upgrade(r, w)
	if err != nil {
		if nc != nil {
			_ = nc.Close()
		}
		s.log.Debug("upgrade", "remote", r.RemoteAddr, "err", err)
		return
	}
	c := &Conn{
		s:          s,
		id:         s.nextID.Add(1),
		tag:        r.Header.Get(wire.TagHeader),
		remote:     r.RemoteAddr,
		path:       r.URL.RequestURI(),
		opened:     time.Now(),
		micro:      micro,
		proto:      hs.Protocol,
		combined:   combined,
		nc:         nc,
		wout:       &wireCounter{nc: nc},
		pmd:        neg.Accepted(),
		exts:       neg.Extensions(),
		br:         rw.Reader,
		out:        make(chan item, s.cfg.QueueSize),
		ctl:        make(chan item, ctlQueue),
		fcmd:       make(chan connFault, 4),
		quit:       make(chan struct{}),
		readerDone: make(chan struct{}),
		done:       make(chan struct{}),
		subs:       make(map[string]*sub),
		streams:    make(map[string]*streamStat),
	}
	c.enc, _ = codec.FromSubprotocol(hs.Protocol)
	c.combinedNow.Store(combined)
	c.wireAtClose.Store(-1)
	c.bw = bufioWriter(c.wout)
	if neg.Accepted() {
		if c.defl, err = deflate.NewCompressor(s.cfg.Deflate(), neg.Params()); err != nil {
			s.log.Error("deflate", "err", err)
			_ = nc.Close()
			return
		}
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	s.all = append(s.all, c)
	s.live[c] = struct{}{}
	close(s.added)
	s.added = make(chan struct{})
	s.mu.Unlock()
	s.log.Info("conn open", "conn", c.id, "tag", c.tag, "remote", c.remote, "path", c.path, "encoding", c.enc)
	s.run(c, dedupe(names))
}

// knownProtocol selects, among the subprotocols a client offers, the first
// that names an encoding (codec.Negotiate's rule); with none the handshake
// answers no protocol and the connection gets JSON.
func knownProtocol(p string) bool {
	_, ok := codec.FromSubprotocol(p)
	return ok
}

// run serves one upgraded connection until it ends.
func (s *Server) run(c *Conn, names []string) {
	if len(names) > s.cfg.MaxStreamsPerConn {
		c.fail(1008, "Too many streams", "server", modeSend)
	} else {
		c.subscribe(names)
	}
	go c.readLoop()
	c.writeLoop()
	<-c.readerDone
	for _, n := range c.order {
		if sb := c.subs[n]; sb.tp != nil {
			s.hub.unsubscribe(sb)
		}
	}
	c.subs, c.order, c.br, c.bw = nil, nil, nil, nil
	c.mu.Lock()
	c.closed = time.Now()
	c.out = nil // release the queue; nothing enqueues once unsubscribed
	c.mu.Unlock()
	cs := c.stats()
	var sent int64
	for _, st := range cs.Streams {
		sent += st.Sent
	}
	s.log.Info("conn closed", "conn", c.id, "tag", c.tag, "code", cs.CloseCode, "reason", cs.CloseReason,
		"by", cs.ClosedBy, "dur", cs.Closed.Sub(cs.Opened).Round(time.Millisecond), "streams", len(cs.Streams),
		"sent", sent, "pings", cs.PingsSent, "pongs", cs.PongsReceived, "incoming", cs.ControlMsgs)
	s.mu.Lock()
	delete(s.live, c)
	s.mu.Unlock()
	close(c.done)
}

// serveJSON answers a GET with get()'s value as JSON.
func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request, get func() any) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(get()); err != nil {
		s.log.Debug("serve json", "path", r.URL.Path, "err", err)
	}
}

// parseQuery decodes a raw query keeping '+' literal (stream names such as kline_1m@+08:00).
func parseQuery(raw string) (map[string]string, error) {
	q := make(map[string]string)
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		k, err := url.PathUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("query key: %w", err)
		}
		if v, err = url.PathUnescape(v); err != nil {
			return nil, fmt.Errorf("query value: %w", err)
		}
		if _, ok := q[k]; !ok {
			q[k] = v
		}
	}
	return q, nil
}

func splitNames(s string) []string {
	var out []string
	for n := range strings.SplitSeq(s, "/") {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
