package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
)

// StatsPath is the server's counts, as JSON; ?settle=DURATION first waits
// (at most that long) until nothing is queued or being written.
const StatsPath = "/_stats"

// Config is one chat server.
type Config struct {
	Lib       string // of Libs
	N         int    // clients in the room
	Queue     int    // messages a connection may have queued; 0: DefaultQueue
	ReadLimit int64  // largest message read from a client; 0: DefaultReadLimit
	Strategy  string // write strategy (StrategyPlain, StrategyBest); "": plain
}

// Stats is a server's own counts.
type Stats struct {
	Lib      string `json:"lib"`
	Strategy string `json:"strategy"` // the write strategy (StrategyPlain, StrategyBest)
	N        int    `json:"n"`
	Queue    int    `json:"queue"`
	// Deliveries is the broadcast messages written to connections ("ready" not counted).
	Deliveries int64 `json:"deliveries"`
	// Broadcasts is the messages received from clients and broadcast.
	Broadcasts int64    `json:"broadcasts"`
	Inflight   int64    `json:"inflight"` // queued, not yet written or discarded
	Conns      int      `json:"conns"`    // clients in the room now
	Ready      bool     `json:"ready"`
	Joined     int64    `json:"joined"`
	Left       int64    `json:"left"`     // clients that left the room, the dropped ones included: Joined - Left == Conns at rest
	Rejected   int64    `json:"rejected"` // joins refused: the room full, or a name the rule refuses (checkName)
	Drops      int64    `json:"drops"`    // clients dropped for a full queue
	Dropped    []string `json:"dropped"`  // their names (the first 100)
	// DroppedDeliveries is the part of Deliveries written to the clients
	// later dropped: what a client that stops reading never reads.
	DroppedDeliveries int64 `json:"dropped_deliveries"`
	Settled           bool  `json:"settled"` // nothing in flight when read
	UserNS            int64 `json:"user_ns"` // the process's getrusage
	SysNS             int64 `json:"sys_ns"`
	MaxRSSKiB         int64 `json:"max_rss_kib"`
	Syscw             int64 `json:"syscw"` // the process's write syscalls (/proc/self/io; 0 where it has none)
	Wchar             int64 `json:"wchar"` // and the bytes they wrote
	Goroutines        int   `json:"goroutines"`
}

// Server is a chat server of one library.
type Server struct {
	cfg  Config
	room *Room
	ln   *lingerListener
	impl impl
	done chan error
}

// impl is a library's server.
type impl interface {
	serve(ln net.Listener) error
	close() error
}

// New returns a server of cfg.Lib; it serves after Listen.
func New(cfg Config) (*Server, error) {
	if cfg.N < 1 {
		return nil, fmt.Errorf("room of %d clients: want 1 or more", cfg.N)
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = DefaultReadLimit
	}
	if cfg.Strategy == "" {
		cfg.Strategy = StrategyPlain
	}
	if slices.Contains(Libs, cfg.Lib) {
		if err := CheckStrategy(cfg.Lib, cfg.Strategy); err != nil {
			return nil, err
		}
	}
	s := &Server{cfg: cfg, room: NewRoom(cfg.N, cfg.Queue), done: make(chan error, 1)}
	switch cfg.Lib {
	case "gorilla":
		s.impl = newGorilla(s)
	case "fasthttp":
		s.impl = newFasthttp(s)
	case "coder":
		s.impl = newCoder(s)
	case "gobwas":
		s.impl = newGobwas(s)
	case "gws":
		s.impl = newGws(s)
	case "nbio":
		s.impl = newNbio(s)
	default:
		return nil, fmt.Errorf("unknown library %q (known: %s)", cfg.Lib, strings.Join(Libs, ", "))
	}
	return s, nil
}

// Listen listens on addr (such as 127.0.0.1:0) and serves in the background.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s.ln = newLingerListener(ln)
	go func() { s.done <- s.impl.serve(s.ln) }()
	return nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the room's WebSocket URL without the name.
func (s *Server) URL() string { return "ws://" + s.Addr() + "/" }

// Close stops listening and closes the connections.
func (s *Server) Close() error {
	err := s.impl.close()
	for _, m := range s.room.close() {
		s.room.leave(m)
		m.sink.kill(CloseGoingAway, "server closing")
	}
	if s.ln != nil {
		s.ln.stop()
	}
	if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Stats returns the server's counts; with settle > 0 it first waits until
// nothing is in flight (Settled says whether that happened in time).
func (s *Server) Stats(settle time.Duration) Stats {
	r := s.room
	settled := r.inflight.Load() == 0
	if !settled && settle > 0 {
		deadline := time.Now().Add(settle)
		for !settled && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			settled = r.inflight.Load() == 0
		}
	}
	st := Stats{Lib: s.cfg.Lib, Strategy: s.cfg.Strategy, N: s.cfg.N, Queue: s.cfg.Queue, Deliveries: r.deliveries.Load(),
		Broadcasts: r.broadcasts.Load(), Inflight: r.inflight.Load(), Joined: r.joined.Load(), Left: r.left.Load(),
		Rejected: r.rejected.Load(), Drops: r.drops.Load(), Settled: settled, Goroutines: runtime.NumGoroutine()}
	r.mu.RLock()
	st.Conns, st.Ready, st.Dropped = len(r.members), r.ready, slices.Clone(r.dropped)
	st.DroppedDeliveries = r.droppedDeliveries()
	r.mu.RUnlock()
	user, sys, rss := sampler.Rusage()
	st.UserNS, st.SysNS, st.MaxRSSKiB = int64(math.Round(user*1e9)), int64(math.Round(sys*1e9)), rss/1024
	st.Syscw, st.Wchar = procWrites()
	return st
}

// statsJSON answers GET /_stats for the query value settle.
func (s *Server) statsJSON(settle string) ([]byte, int) {
	var d time.Duration
	if settle != "" {
		var err error
		if d, err = time.ParseDuration(settle); err != nil || d < 0 || d > time.Minute {
			return []byte(fmt.Sprintf("{\"error\":%q}\n", "settle: want a duration up to 1m, such as 2s")), http.StatusBadRequest
		}
	}
	b, _ := json.Marshal(s.Stats(d))
	return append(b, '\n'), http.StatusOK
}

// httpStats is the stats handler of the servers on net/http.
func (s *Server) httpStats(w http.ResponseWriter, r *http.Request) {
	b, code := s.statsJSON(r.URL.Query().Get("settle"))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// newHTTP is the net/http server of a library whose handler ws upgrades the
// room's path, with the stats beside it.
func newHTTP(s *Server, ws http.HandlerFunc) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+StatsPath, s.httpStats)
	mux.HandleFunc("GET /{$}", ws)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// procWrites reads syscw and wchar of /proc/self/io (zeros where it cannot).
func procWrites() (syscw, wchar int64) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "syscw":
			syscw = n
		case "wchar":
			wchar = n
		}
	}
	return syscw, wchar
}
