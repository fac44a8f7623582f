package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// LoadConfig is one load run: N clients in one room, rounds of messages.
type LoadConfig struct {
	URL      string // the room's ws:// URL, without ?name=
	N        int    // clients (the room's size)
	Rounds   int    // rounds after ready
	PerRound int    // messages each client sends per round; 0: 1
	Payload  int    // bytes of each message sent (its sequence number, padded); 0: the number alone
	// RoundTimeout bounds a round (and the wait for ready); 0: 30 s.
	RoundTimeout time.Duration
	// StatsURL is the server's /_stats: when set, it is read when the timed
	// part starts and, settled, when it ends (ServerStart, ServerEnd).
	StatsURL string `json:"stats_url,omitempty"`
	// NetDial makes the TCP connections; nil: a plain net.Dialer.
	NetDial func(ctx context.Context, network, addr string) (net.Conn, error) `json:"-"`
}

// LoadAnswer is what a load process (soak child chatload) prints: its
// result, or why the run failed.
type LoadAnswer struct {
	LoadResult
	Err string `json:"err,omitempty"`
}

// LoadResult is what a load run measured over its timed part: from every
// client having "ready" to the last round's last delivery.
type LoadResult struct {
	N          int     `json:"n"`
	Rounds     int     `json:"rounds"`
	PerRound   int     `json:"per_round"`
	Sent       int64   `json:"sent"`       // messages the clients sent
	Deliveries int64   `json:"deliveries"` // broadcasts the clients received, exactly once and in order
	WallNS     int64   `json:"wall_ns"`
	UserNS     int64   `json:"user_ns"` // the load process's getrusage over the timed part
	SysNS      int64   `json:"sys_ns"`
	MaxRSSKiB  int64   `json:"max_rss_kib"`
	P50us      float64 `json:"p50_us"` // broadcast latency: send instant to receipt at each client
	P99us      float64 `json:"p99_us"`
	MaxUs      float64 `json:"max_us"`
	Reads      int64   `json:"reads"` // read syscalls of the clients' sockets over the timed part
	// The server's own counts at the start and the end of the timed part.
	ServerStart *Stats `json:"server_start,omitempty"`
	ServerEnd   *Stats `json:"server_end,omitempty"`
}

// DeliveriesPerSec is the deliveries per second of wall time.
func (r LoadResult) DeliveriesPerSec() float64 {
	if r.WallNS <= 0 {
		return 0
	}
	return float64(r.Deliveries) / (float64(r.WallNS) / 1e9)
}

// CPUPct is the load process's CPU over its timed part, in % of one core.
func (r LoadResult) CPUPct() float64 {
	if r.WallNS <= 0 {
		return 0
	}
	return float64(r.UserNS+r.SysNS) / float64(r.WallNS) * 100
}

// ClientName is the name of load client i.
func ClientName(i int) string { return "c" + strconv.Itoa(i) }

// loadConn is one client of a load run.
type loadConn struct {
	idx   int
	c     *rawws.Conn
	ready chan struct{} // closed on "ready"
	round chan<- int    // a value per round completed
	want  int64         // deliveries per round
	last  []int64       // by sender: the last sequence number received
	lat   *sampler.Latency
	n     int64 // deliveries
	// The socket's read calls when ready came and when the latest round
	// ended (published by close(ready) and the round's channel send).
	readsReady, readsRound int64
	err                    error
	done                   chan struct{}
}

// loadRun is a load run's shared state.
type loadRun struct {
	cfg    LoadConfig
	start  time.Time
	sendAt [][]atomic.Int64 // by sender, by sequence number: ns since start
}

// RunLoad connects cfg.N clients named c0…cN-1, waits for every one to get
// "ready", then runs cfg.Rounds rounds: each client sends PerRound messages
// (its sequence numbers 1, 2, … as text, padded to Payload bytes), and the
// round ends when every client has received every one of the N×PerRound
// broadcasts. Every delivery is checked: from a client of the room, with the
// sender's next sequence number (exactly once, in the sender's order).
func RunLoad(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	if cfg.PerRound <= 0 {
		cfg.PerRound = 1
	}
	if cfg.RoundTimeout <= 0 {
		cfg.RoundTimeout = 30 * time.Second
	}
	res := LoadResult{N: cfg.N, Rounds: cfg.Rounds, PerRound: cfg.PerRound}
	if cfg.N < 1 || cfg.Rounds < 0 {
		return res, fmt.Errorf("load: %d clients, %d rounds: want 1 or more clients", cfg.N, cfg.Rounds)
	}
	lr := &loadRun{cfg: cfg, start: time.Now(), sendAt: make([][]atomic.Int64, cfg.N)}
	seqs := cfg.Rounds*cfg.PerRound + 1
	for i := range lr.sendAt {
		lr.sendAt[i] = make([]atomic.Int64, seqs)
	}
	roundCh := make(chan int, cfg.N)
	conns := make([]*loadConn, cfg.N)
	defer func() {
		for _, lc := range conns {
			if lc != nil {
				_ = lc.c.Conn.Close()
			}
		}
	}()
	dctx, cancel := context.WithTimeout(ctx, cfg.RoundTimeout)
	defer cancel()
	errs := make([]error, cfg.N)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := rawws.Dial(dctx, cfg.URL+"?name="+ClientName(i), rawws.Options{NetDial: cfg.NetDial, BufferSize: 64 << 10})
			if err != nil {
				errs[i] = fmt.Errorf("client %s: %w", ClientName(i), err)
				return
			}
			conns[i] = &loadConn{idx: i, c: c, ready: make(chan struct{}), round: roundCh,
				want: int64(cfg.N * cfg.PerRound), last: make([]int64, cfg.N), lat: sampler.NewLatency(), done: make(chan struct{})}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	for _, lc := range conns {
		go lc.read(lr)
	}
	for _, lc := range conns {
		select {
		case <-lc.ready:
		case <-lc.done:
			return res, fmt.Errorf("client %s before ready: %w", ClientName(lc.idx), lc.err)
		case <-dctx.Done():
			return res, fmt.Errorf("client %s: no ready within %s", ClientName(lc.idx), cfg.RoundTimeout)
		}
	}
	if cfg.StatsURL != "" {
		st, err := FetchStats(ctx, cfg.StatsURL, 0)
		if err != nil {
			return res, err
		}
		res.ServerStart = &st
	}
	m0 := loadMark()
	frames := make([]byte, 0, cfg.PerRound*(cfg.Payload+32))
	payload := make([]byte, 0, max(cfg.Payload, 24))
	for round := 1; round <= cfg.Rounds; round++ {
		for _, lc := range conns {
			frames = frames[:0]
			at := int64(time.Since(lr.start))
			for k := 1; k <= cfg.PerRound; k++ {
				seq := (round-1)*cfg.PerRound + k
				lr.sendAt[lc.idx][seq].Store(at)
				payload = strconv.AppendInt(payload[:0], int64(seq), 10)
				for len(payload) < cfg.Payload {
					payload = append(payload, 'x')
				}
				frames = rawws.AppendFrame(frames, rawws.OpText, true, payload, true)
			}
			if _, err := lc.c.Conn.Write(frames); err != nil {
				return res, fmt.Errorf("round %d: client %s: write: %w", round, ClientName(lc.idx), err)
			}
			res.Sent += int64(cfg.PerRound)
		}
		timer := time.NewTimer(cfg.RoundTimeout)
		for range cfg.N {
			select {
			case <-roundCh:
			case <-timer.C:
				return res, fmt.Errorf("round %d: not every client received every broadcast within %s%s", round, cfg.RoundTimeout, failures(conns))
			case <-ctx.Done():
				timer.Stop()
				return res, ctx.Err()
			}
		}
		timer.Stop()
		if err := failed(conns); err != nil {
			return res, fmt.Errorf("round %d: %w", round, err)
		}
	}
	m1 := loadMark()
	res.WallNS, res.UserNS, res.SysNS, res.MaxRSSKiB = int64(m1.at.Sub(m0.at)), m1.user-m0.user, m1.sys-m0.sys, m1.rss
	if cfg.StatsURL != "" {
		st, err := FetchStats(ctx, cfg.StatsURL, 5*time.Second)
		if err != nil {
			return res, err
		}
		res.ServerEnd = &st
	}
	lat := sampler.NewLatency()
	for _, lc := range conns {
		res.Deliveries += atomic.LoadInt64(&lc.n)
		if cfg.Rounds > 0 {
			res.Reads += lc.readsRound - lc.readsReady
		}
		lat.Merge(lc.lat)
	}
	s := lat.Snapshot()
	res.P50us, res.P99us, res.MaxUs = float64(s.P50), float64(s.P99), float64(s.Max)
	// Leave: a close 1000 from every client, then the connections closed.
	for _, lc := range conns {
		_, _ = lc.c.Conn.Write(rawws.AppendFrame(nil, rawws.OpClose, true, []byte{0x03, 0xe8}, true))
	}
	return res, nil
}

// FetchStats reads a chat server's /_stats at url, waiting at most settle
// for what is in flight to be written.
func FetchStats(ctx context.Context, url string, settle time.Duration) (Stats, error) {
	var st Stats
	if settle > 0 {
		url += "?settle=" + settle.String()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, fmt.Errorf("server stats: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, fmt.Errorf("server stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("server stats: status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("server stats: %w", err)
	}
	return st, nil
}

// failed returns the first reader error.
func failed(conns []*loadConn) error {
	for _, lc := range conns {
		select {
		case <-lc.done:
			if lc.err != nil {
				return fmt.Errorf("client %s: %w", ClientName(lc.idx), lc.err)
			}
			return fmt.Errorf("client %s: connection ended", ClientName(lc.idx))
		default:
		}
	}
	return nil
}

func failures(conns []*loadConn) string {
	if err := failed(conns); err != nil {
		return ": " + err.Error()
	}
	return ""
}

// read is a client's reader goroutine.
func (lc *loadConn) read(lr *loadRun) {
	defer close(lc.done)
	lc.err = lc.readLoop(lr)
}

func (lc *loadConn) readLoop(lr *loadRun) error {
	m, err := lc.c.Next(true)
	if err != nil {
		return fmt.Errorf("read ready: %w", err)
	}
	if string(m.Payload) != Ready {
		return fmt.Errorf("first message %q, want %q", trim(m.Payload), Ready)
	}
	lc.readsReady = lc.c.Counts().Reads
	close(lc.ready)
	var inRound int64
	reads := int64(-1)
	var now int64
	for {
		m, err := lc.c.Next(true)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("server closed (code %d)", lc.c.Counts().CloseCode)
			}
			return err
		}
		// One clock reading per socket read: the messages of one read
		// arrived together.
		if r := lc.c.Counts().Reads; r != reads {
			reads, now = r, int64(time.Since(lr.start))
		}
		from, seq, err := nextDelivery(m.Payload, lc.last)
		if err != nil {
			return err
		}
		if seq >= int64(len(lr.sendAt[from])) {
			return fmt.Errorf("from %s: sequence %d was never sent", ClientName(from), seq)
		}
		lc.last[from] = seq
		lc.lat.Record((now - lr.sendAt[from][seq].Load()) / 1000)
		atomic.AddInt64(&lc.n, 1)
		if inRound++; inRound == lc.want {
			inRound = 0
			lc.readsRound = lc.c.Counts().Reads
			lc.round <- lc.idx
		}
	}
}

// nextDelivery checks a delivery against the sequence numbers read so far
// from each sender (last): it must come from a client of the room, with
// that sender's next number. It returns the sender and the number.
func nextDelivery(p []byte, last []int64) (from int, seq int64, err error) {
	from, seq, ok := parseDelivery(p, len(last))
	if !ok {
		return 0, 0, fmt.Errorf("delivery %q: want \"cI: SEQ\" from a client of the room", trim(p))
	}
	if want := last[from] + 1; seq != want {
		return 0, 0, fmt.Errorf("from %s: sequence %d, want %d (a loss, a duplicate or out of order)", ClientName(from), seq, want)
	}
	return from, seq, nil
}

// parseDelivery reads "cI: SEQ[x...]" with I below n, both in decimal
// without leading zeros.
func parseDelivery(p []byte, n int) (from int, seq int64, ok bool) {
	if len(p) < 5 || p[0] != 'c' {
		return 0, 0, false
	}
	i := 1
	for ; i < len(p) && p[i] >= '0' && p[i] <= '9'; i++ {
		from = from*10 + int(p[i]-'0')
		if from >= n {
			return 0, 0, false
		}
	}
	if i == 1 || i+2 >= len(p) || p[i] != ':' || p[i+1] != ' ' || p[1] == '0' && i > 2 {
		return 0, 0, false // no name, no ": ", or a leading zero
	}
	j := i + 2
	if p[j] == '0' && j+1 < len(p) && p[j+1] >= '0' && p[j+1] <= '9' {
		return 0, 0, false // a leading zero
	}
	for ; j < len(p) && p[j] >= '0' && p[j] <= '9'; j++ {
		if seq > math.MaxInt64/10-1 {
			return 0, 0, false
		}
		seq = seq*10 + int64(p[j]-'0')
	}
	if j == i+2 {
		return 0, 0, false
	}
	for ; j < len(p); j++ {
		if p[j] != 'x' {
			return 0, 0, false
		}
	}
	return from, seq, true
}

func trim(p []byte) string {
	if len(p) > 64 {
		return string(p[:64]) + "…"
	}
	return string(p)
}

// mark is the process's CPU at one instant.
type mark struct {
	at             time.Time
	user, sys, rss int64
}

func loadMark() mark {
	user, sys, rss := sampler.Rusage()
	return mark{at: time.Now(), user: int64(math.Round(user * 1e9)), sys: int64(math.Round(sys * 1e9)), rss: rss / 1024}
}
