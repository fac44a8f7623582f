package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/runner/child"
)

// ChatConfig is soak bench -side server: the libraries as chat servers.
type ChatConfig struct {
	Exe  string   `json:"-"` // the soak binary: run as "chatserver" and "child chatload"
	Libs []string // of chat.Libs, and chat.NodeLib
	// Strategies are the servers' write strategies (chat.Strategies), each
	// a row of its own; a library without a best strategy (and the Node
	// reference) runs plain only. None: each server as it writes by default,
	// no strategy column (a bench recorded before strategies).
	Strategies []string
	// Node and NodeScript run the chat.NodeLib server (chat.NodeServer).
	Node, NodeScript string
	Clients          []int // room sizes N
	Runs             int   // counted rounds; one warm-up round more
	Deliveries       int64 // deliveries per run (rounds of N×N×PerRound, at least one)
	PerRound         int   // messages each client sends per round
	Queue            int   // the servers' per-connection queue
	ServerCPUs       []int // nil: not pinned
	ClientCPUs       []int
	Progress         io.Writer `json:"-"`
	// ChildTimeout bounds a load process; 0: 2 minutes.
	ChildTimeout time.Duration
}

// RoundsFor is the load rounds of a run with n clients.
func (c *ChatConfig) RoundsFor(n int) int {
	per := int64(n) * int64(n) * int64(max(c.PerRound, 1))
	return int(max(1, (c.Deliveries+per-1)/per))
}

// ChatResult is one load run against one server.
type ChatResult struct {
	Lib      string          `json:"lib"`
	Strategy string          `json:"strategy,omitempty"` // the server's write strategy ("" before strategies)
	N        int             `json:"n"`
	Round    int             `json:"round"` // 0: the warm-up, not counted
	Client   chat.LoadResult `json:"client"`
	// From the server's /_stats at the start and the end of the timed part.
	ServerDeliveries int64  `json:"server_deliveries"`
	ServerUserNS     int64  `json:"server_user_ns"`
	ServerSysNS      int64  `json:"server_sys_ns"`
	ServerMaxRSSKiB  int64  `json:"server_max_rss_kib"`
	ServerWrites     int64  `json:"server_writes"` // write syscalls (syscw; the stats' own answers included)
	Drops            int64  `json:"drops"`
	Err              string `json:"err,omitempty"`
	Valid            bool   `json:"valid"`
	Invalid          string `json:"invalid,omitempty"`
}

// Rate is deliveries per second.
func (r ChatResult) Rate() float64 { return r.Client.DeliveriesPerSec() }

// ServerCPUPerDelivery is the server's CPU µs (user + sys) per delivery.
func (r ChatResult) ServerCPUPerDelivery() float64 {
	if r.Client.Deliveries == 0 {
		return 0
	}
	return float64(r.ServerUserNS+r.ServerSysNS) / 1e3 / float64(r.Client.Deliveries)
}

// ServerCPUPct is the server's CPU over the timed part, in % of one core.
func (r ChatResult) ServerCPUPct() float64 {
	if r.Client.WallNS <= 0 {
		return 0
	}
	return float64(r.ServerUserNS+r.ServerSysNS) / float64(r.Client.WallNS) * 100
}

// ClientCPUPerDelivery is the load process's CPU µs per delivery.
func (r ChatResult) ClientCPUPerDelivery() float64 {
	if r.Client.Deliveries == 0 {
		return 0
	}
	return float64(r.Client.UserNS+r.Client.SysNS) / 1e3 / float64(r.Client.Deliveries)
}

// ServerWritesPerDelivery is the server's write syscalls per delivery.
func (r ChatResult) ServerWritesPerDelivery() float64 {
	if r.Client.Deliveries == 0 {
		return 0
	}
	return float64(r.ServerWrites) / float64(r.Client.Deliveries)
}

// ClientReadsPerDelivery is the load client's socket reads per delivery.
func (r ChatResult) ClientReadsPerDelivery() float64 {
	if r.Client.Deliveries == 0 {
		return 0
	}
	return float64(r.Client.Reads) / float64(r.Client.Deliveries)
}

// chatServer is a running chat server process.
type chatServer struct {
	*child.Process
	addr     string
	statsURL string
}

// chatColumn is one server of the bench: a library under a write strategy.
type chatColumn struct{ lib, strategy string }

func (c chatColumn) String() string {
	if c.strategy == "" {
		return c.lib
	}
	return c.lib + "/" + c.strategy
}

// columns are the servers cfg runs, in table order: per library, each
// strategy it has (the Node reference plain only).
func (cfg *ChatConfig) columns() []chatColumn {
	var out []chatColumn
	for _, lib := range cfg.Libs {
		if len(cfg.Strategies) == 0 {
			out = append(out, chatColumn{lib: lib})
		}
		for _, s := range cfg.Strategies {
			if s == chat.StrategyPlain || lib != chat.NodeLib && chat.CheckStrategy(lib, s) == nil {
				out = append(out, chatColumn{lib, s})
			}
		}
	}
	return out
}

// startChatServer starts `soak chatserver` of col's library (or the Node
// reference server) for a room of n; it ends on SIGTERM.
func startChatServer(ctx context.Context, cfg ChatConfig, col chatColumn, n int) (*chatServer, error) {
	lib := col.lib
	o := child.Options{Name: "chat server " + col.String(), Exe: cfg.Exe, CPUs: cfg.ServerCPUs, StopSignal: syscall.SIGTERM,
		Args: []string{"chatserver", "-lib", lib, "-n", strconv.Itoa(n), "-queue", strconv.Itoa(max(cfg.Queue, 1)), "-addr", "127.0.0.1:0"}}
	if col.strategy != "" {
		o.Args = append(o.Args, "-strategy", col.strategy)
	}
	if lib == chat.NodeLib {
		o.Exe, o.Args = cfg.Node, []string{cfg.NodeScript, "-n", strconv.Itoa(n), "-queue", strconv.Itoa(max(cfg.Queue, 1)), "-addr", "127.0.0.1:0"}
	}
	p, err := child.Start(o)
	if err != nil {
		return nil, err
	}
	line, err := p.ReadLine(ctx, cfg.ChildTimeout)
	if err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	p.DiscardOut()
	s := &chatServer{Process: p, addr: strings.TrimSpace(string(line))}
	s.statsURL = "http://" + s.addr + chat.StatsPath
	return s, nil
}

// RunChat runs the server bench: per room size N the five servers, each in
// its own process, and round by round (round 0 the warm-up), in alternating
// library order, a load process against each, one at a time.
func RunChat(ctx context.Context, cfg ChatConfig) ([]ChatResult, error) {
	if cfg.ChildTimeout == 0 {
		cfg.ChildTimeout = 2 * time.Minute
	}
	for i, lib := range cfg.Libs {
		if slices.Contains(cfg.Libs[:i], lib) {
			return nil, fmt.Errorf("library %s twice: each server runs once per room size", lib)
		}
	}
	var all []ChatResult
	for _, n := range cfg.Clients {
		rs, err := runChatN(ctx, cfg, n)
		all = append(all, rs...)
		if err != nil {
			return all, fmt.Errorf("room of %d: %w", n, err)
		}
	}
	return all, nil
}

func runChatN(ctx context.Context, cfg ChatConfig, n int) ([]ChatResult, error) {
	// Every server started is stopped, whatever ends the run: they are kept
	// in a list (a map by library lost a server started twice, left running).
	var started []*chatServer
	defer func() {
		for _, s := range started {
			s.Stop(5 * time.Second)
		}
	}()
	servers := map[chatColumn]*chatServer{}
	cols := cfg.columns()
	for _, col := range cols {
		s, err := startChatServer(ctx, cfg, col, n)
		if err != nil {
			return nil, err
		}
		started = append(started, s)
		servers[col] = s
	}
	var out []ChatResult
	rounds := cfg.RoundsFor(n)
	for round := 0; round <= cfg.Runs; round++ {
		for _, col := range Order(cols, round) {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			s, lib := servers[col], col.lib
			lc := chat.LoadConfig{URL: "ws://" + s.addr + "/", N: n, Rounds: rounds, PerRound: max(cfg.PerRound, 1),
				RoundTimeout: 30 * time.Second, StatsURL: s.statsURL}
			r := runChatLoad(ctx, cfg, lc)
			r.Lib, r.Strategy, r.N, r.Round = lib, col.strategy, n, round
			checkChat(&r)
			out = append(out, r)
			if cfg.Progress != nil {
				warm, state := progressTags(round, r.Valid, r.Invalid)
				fmt.Fprintf(cfg.Progress, "round %d%s N=%d %s: %d deliveries in %.3f s, %.0f/s, server %.3f CPU µs/delivery (%.0f %%), client %.0f %%, p50 %.0f µs, p99 %.0f µs; %s\n",
					round, warm, n, col, r.Client.Deliveries, float64(r.Client.WallNS)/1e9, r.Rate(), r.ServerCPUPerDelivery(),
					r.ServerCPUPct(), r.Client.CPUPct(), r.Client.P50us, r.Client.P99us, state)
			}
		}
	}
	return out, nil
}

// runChatLoad runs one load process.
func runChatLoad(ctx context.Context, cfg ChatConfig, lc chat.LoadConfig) ChatResult {
	var got chat.LoadAnswer
	var res ChatResult
	o := child.Options{Name: "chatload", Exe: cfg.Exe, Args: []string{"child", "chatload"}, CPUs: cfg.ClientCPUs, Spec: lc}
	if err := child.Run(ctx, o, cfg.ChildTimeout, &got); err != nil {
		res.Err = err.Error()
		return res
	}
	res.Client, res.Err = got.LoadResult, got.Err
	return res
}

// checkChat compares what the clients received with the server's own count
// of writes over the timed part, and with what the rounds must deliver.
func checkChat(r *ChatResult) {
	c := r.Client
	switch {
	case r.Err != "":
		r.Invalid = r.Err
	case c.ServerStart == nil || c.ServerEnd == nil:
		r.Invalid = "no server stats"
	case r.Strategy != "" && c.ServerEnd.Lib != chat.NodeLib && c.ServerEnd.Strategy != r.Strategy:
		r.Invalid = fmt.Sprintf("the server wrote %q, not %q", c.ServerEnd.Strategy, r.Strategy)
	default:
		a, b := c.ServerStart, c.ServerEnd
		r.ServerDeliveries = b.Deliveries - a.Deliveries
		r.ServerUserNS, r.ServerSysNS = b.UserNS-a.UserNS, b.SysNS-a.SysNS
		r.ServerMaxRSSKiB = b.MaxRSSKiB
		r.ServerWrites = b.Syscw - a.Syscw
		r.Drops = b.Drops - a.Drops
		want := int64(c.N) * int64(c.N) * int64(c.PerRound) * int64(c.Rounds)
		switch {
		case !b.Settled:
			r.Invalid = fmt.Sprintf("server still had %d deliveries in flight", b.Inflight)
		case c.Deliveries != r.ServerDeliveries:
			r.Invalid = fmt.Sprintf("clients received %d deliveries, the server wrote %d", c.Deliveries, r.ServerDeliveries)
		case c.Deliveries != want:
			r.Invalid = fmt.Sprintf("clients received %d deliveries, the rounds make %d", c.Deliveries, want)
		case r.Drops != 0:
			r.Invalid = fmt.Sprintf("the server dropped %d client(s)", r.Drops)
		}
	}
	r.Valid = r.Invalid == ""
}
