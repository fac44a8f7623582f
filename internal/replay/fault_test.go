package replay

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gobwas/ws"
	"github.com/gorilla/websocket"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

func TestFaultValidate(t *testing.T) {
	for _, tc := range []struct {
		f    wire.Fault
		want string // "" = valid
	}{
		{wire.Fault{Kind: wire.FaultClose, Code: 1011, Reason: "x"}, ""},
		{wire.Fault{Kind: wire.FaultClose, Code: 1002}, "1002 is not one of [1000 1001 1008 1011]"},
		{wire.Fault{Kind: wire.FaultClose, Code: 1000, N: 2}, "close does not take n"},
		{wire.Fault{Kind: "explode"}, `unknown fault kind "explode"`},
		{wire.Fault{Kind: wire.FaultReset}, ""},
		{wire.Fault{Kind: wire.FaultReset, For: time.Second}, "reset does not take for"},
		{wire.Fault{Kind: wire.FaultHalfOpen}, ""},
		{wire.Fault{Kind: wire.FaultZombie, For: -1}, "zombie: for is negative"},
		{wire.Fault{Kind: wire.FaultSilence, For: time.Second}, "silence: streams must name the streams to silence"},
		{wire.Fault{Kind: wire.FaultSilence, Streams: []string{"btcusdt@trade"}}, "silence: for must be positive"},
		{wire.Fault{Kind: wire.FaultDrop, N: 3, Streams: []string{"btcusdt@trade", "btcusdt@aggTrade"}}, ""},
		{wire.Fault{Kind: wire.FaultDrop, N: 3, Streams: []string{"btcusdt@bookTicker"}}, "drop needs a stream whose ids count messages (trade, aggTrade, blockTrade); btcusdt@bookTicker has gapped ids"},
		{wire.Fault{Kind: wire.FaultDuplicate, N: 1, Streams: []string{"btcusdt@ticker"}}, "btcusdt@ticker has no ids"},
		{wire.Fault{Kind: wire.FaultReorder, Streams: []string{"btcusdt@depth@100ms"}}, "has update (not message) ids"},
		{wire.Fault{Kind: wire.FaultDrop, Streams: []string{"btcusdt@trade"}}, "drop: n must be positive"},
		{wire.Fault{Kind: wire.FaultDrop, N: 1, Streams: []string{"BTC-USDT@trade"}}, "invalid stream"},
		{wire.Fault{Kind: wire.FaultReject, N: 2, Status: 429, RetryAfter: time.Second}, ""},
		{wire.Fault{Kind: wire.FaultReject, N: 2, Status: 200}, "reject: status 200 is not an HTTP error status"},
		{wire.Fault{Kind: wire.FaultReject, N: 1, Status: 503, Streams: []string{"btcusdt@trade"}}, "reject: streams does not apply"},
		{wire.Fault{Kind: wire.FaultOversize, Size: 10}, "oversize: size must be between"},
		{wire.Fault{Kind: wire.FaultFragment, N: 1}, ""},
		{wire.Fault{Kind: wire.FaultDrip, For: time.Second, Delay: 2 * time.Second}, "drip: delay must be between"},
		{wire.Fault{Kind: wire.FaultLatency, For: time.Second}, "latency: delay must be positive"},
		{wire.Fault{Kind: wire.FaultShutdown}, ""},
		{wire.Fault{Kind: wire.FaultInvalidUTF8, Size: 100}, "invalid_utf8 does not take size"},
		{wire.Fault{Kind: wire.FaultBlackhole, For: time.Second}, ""},
		{wire.Fault{Kind: wire.FaultThrottle, For: time.Second, Rate: 100}, "throttle: rate must be at least 8kbit"},
		{wire.Fault{Kind: wire.FaultRST, Rate: 1e6}, "rst does not take rate"},
	} {
		err := tc.f.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: got %v, want %q", tc.f, err, tc.want)
		}
	}
	if _, err := New(Config{Replay: wire.Replay{Faults: []wire.ScheduledFault{{Fault: wire.Fault{Kind: wire.FaultClose}}}}}); err == nil || !strings.Contains(err.Error(), "fault 1: close: code 0") {
		t.Fatalf("New with a bad fault: %v", err)
	}
	// The network's faults are valid, but the kernel's to play on a link,
	// not the replay server's.
	bh := wire.Fault{Kind: wire.FaultBlackhole, For: time.Second}
	if _, err := New(Config{Replay: wire.Replay{Faults: []wire.ScheduledFault{{Fault: bh}}}}); err == nil || !strings.Contains(err.Error(), "fault 1: blackhole is played by the kernel") {
		t.Errorf("New with a blackhole: %v", err)
	}
	srv := startServer(t, Config{})
	if _, err := srv.Inject(bh); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("Inject a blackhole: %v", err)
	}
}

// seqOf returns the sequence fields of a trade or aggTrade message, raw or combined.
func seqOf(t *testing.T, p []byte) (stream string, f binance.Fields) {
	t.Helper()
	stream, payload := unwrap(t, p)
	key := "t"
	if strings.HasSuffix(stream, "@aggTrade") {
		key = "a"
	}
	id := field(t, payload, key)
	return stream, binance.Fields{HasSeq: true, Last: id, First: id}
}

// TestFaultSequence injects drop, duplicate and reorder on three streams at
// once and checks the client's sequence accounting and the server's counts
// against them; a connection of another library is untouched.
func TestFaultSequence(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 20, Speed: 10}})
	path := "/stream?streams=btcusdt@trade/ethusdt@trade/btcusdt@aggTrade"
	hit := dial(t, s, path, "gorilla/0/0")
	other := dial(t, s, path, "gws/0/0")
	// every message counts, those before the faults too (they set the baseline)
	var before [2][][]byte
	for i, c := range []*client{hit, other} {
		before[i] = append(before[i], next(t, c, 2*time.Second))
		msgs, _ := readFor(c, 100*time.Millisecond)
		before[i] = append(before[i], msgs...)
	}
	for _, f := range []wire.Fault{
		{Kind: wire.FaultDrop, N: 3, Streams: []string{"btcusdt@trade"}, Libs: []string{"gorilla"}},
		{Kind: wire.FaultDuplicate, N: 2, Streams: []string{"ethusdt@trade"}, Libs: []string{"gorilla"}},
		{Kind: wire.FaultReorder, Streams: []string{"btcusdt@aggTrade"}, Libs: []string{"gorilla"}},
	} {
		a, err := s.Inject(f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Conns, []string{"gorilla/0/0"}) {
			t.Fatalf("%s hit %v", f.Kind, a.Conns)
		}
	}
	time.Sleep(800 * time.Millisecond) // ~160 trades per symbol at speed 10
	for _, tag := range []string{"gorilla/0/0", "gws/0/0"} {
		sc, _ := s.WaitConn(ctxTimeout(t, time.Second), tag)
		if err := sc.Close(1000, "done"); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]binance.SeqCounts{"btcusdt@trade": {Lost: 3}, "ethusdt@trade": {Dup: 2}, "btcusdt@aggTrade": {OutOfOrder: 1}}
	byTag := map[string]ConnStats{}
	for _, cs := range s.Stats().Conns {
		byTag[cs.Tag] = cs
	}
	for i, c := range []*client{hit, other} {
		msgs, _ := readFor(c, 2*time.Second)
		msgs = append(before[i], msgs...)
		states := map[string]*binance.SeqState{}
		got := map[string]int64{}
		for _, p := range msgs {
			name, f := seqOf(t, p)
			if states[name] == nil {
				states[name] = new(binance.SeqState)
			}
			rule := binance.SeqContiguous
			if strings.HasSuffix(name, "@aggTrade") {
				rule = binance.SeqAgg
			}
			states[name].Observe(rule, &f)
			got[name]++
		}
		cs := byTag[[]string{"gorilla/0/0", "gws/0/0"}[i]]
		for name, w := range want {
			if i == 1 {
				w = binance.SeqCounts{}
			}
			if c := states[name].Counts(); c != w {
				t.Errorf("%s %s: client counts %+v, want %+v", cs.Tag, name, c, w)
			}
			ss := cs.Streams[name]
			if ss.Sent != got[name] {
				t.Errorf("%s %s: server sent %d, client received %d", cs.Tag, name, ss.Sent, got[name])
			}
			// ids are contiguous: sent = id span - dropped + duplicated
			span := ss.LastSeq - ss.FirstSeq + 1
			if name == "btcusdt@aggTrade" && i == 0 {
				span = states[name].Last() - ss.FirstSeq + 1 // the last written may be the held (older) one
			}
			if ss.Sent != span-w.Lost+w.Dup {
				t.Errorf("%s %s: sent %d over ids %d..%d, want span %d - %d + %d", cs.Tag, name, ss.Sent, ss.FirstSeq, ss.LastSeq, span, w.Lost, w.Dup)
			}
		}
	}
}

func TestFaultReject(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 21}})
	if _, err := s.Inject(wire.Fault{Kind: wire.FaultReject, N: 2, Status: 429, RetryAfter: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Inject(wire.Fault{Kind: wire.FaultReject, N: 1, Status: 503, Libs: []string{"coder"}}); err != nil {
		t.Fatal(err)
	}
	type want struct {
		tag    string
		status int
	}
	for i, w := range []want{
		{"gorilla/0/1", 429}, {"gws/0/1", 429}, {"gorilla/0/2", 429}, {"gorilla/0/3", 101}, {"gws/0/2", 429},
		{"coder/0/1", 429}, {"coder/0/2", 429}, {"coder/0/3", 503}, {"coder/0/4", 101}, {"gws/0/3", 101},
		{"gorilla/1/1", 429}, {"gorilla/1/2", 429}, {"gorilla/1/3", 101}, // each slot has its own count
	} {
		c, resp, err := dialResp(s, "/ws", w.tag, nil)
		if c != nil {
			c.Close()
		}
		if resp == nil || resp.StatusCode != w.status {
			t.Fatalf("%d %s: %v %+v, want %d", i, w.tag, err, resp, w.status)
		}
		if ra := resp.Header.Get("Retry-After"); w.status == 429 && ra != "2" || w.status != 429 && ra != "" {
			t.Fatalf("%s: Retry-After %q", w.tag, ra)
		}
	}
	log := s.Faults()
	if len(log) != 2 || !slices.Equal(log[0].Conns, []string{"gorilla/0/1", "gws/0/1", "gorilla/0/2", "gws/0/2", "coder/0/1", "coder/0/2", "gorilla/1/1", "gorilla/1/2"}) ||
		!slices.Equal(log[1].Conns, []string{"coder/0/3"}) {
		t.Fatalf("log %+v", log)
	}
}

func TestFaultCloseReset(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 22}})
	for _, code := range wire.FaultCloseCodes {
		a := dialWait(t, s, "/ws/btcusdt@trade", "gorilla/0/"+strconv.Itoa(code))
		b := dialWait(t, s, "/ws/btcusdt@trade", "gobwas/0/"+strconv.Itoa(code))
		ap, err := s.Inject(wire.Fault{Kind: wire.FaultClose, Code: code, Reason: "fault " + strconv.Itoa(code), Libs: []string{"gorilla"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ap.Conns) != 1 || ap.Conns[0] != "gorilla/0/"+strconv.Itoa(code) {
			t.Fatalf("hit %v", ap.Conns)
		}
		if got, reason := closeCode(t, a, 2*time.Second); got != code || reason != "fault "+strconv.Itoa(code) {
			t.Fatalf("client saw %d %q, want %d", got, reason, code)
		}
		if _, err := readFor(b, 50*time.Millisecond); err != nil {
			t.Fatalf("the other library's connection ended: %v", err)
		}
		b.Close()
	}
	c := dialWait(t, s, "/ws/btcusdt@trade", "gws/1/1")
	if _, err := s.Inject(wire.Fault{Kind: wire.FaultReset, Libs: []string{"gws"}}); err != nil {
		t.Fatal(err)
	}
	_, err := readFor(c, 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "connection reset by peer") {
		t.Fatalf("want a reset, got %v", err)
	}
}

// dialWait is dial that returns once the server has registered the
// connection (the client may see the 101 before), so a fault reaches it.
func dialWait(t *testing.T, s *Server, path, tag string, setup ...func(*websocket.Conn)) *client {
	t.Helper()
	c := dial(t, s, path, tag, setup...)
	if _, err := s.WaitConn(ctxTimeout(t, 2*time.Second), tag); err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond for up to 2 s.
func eventually(cond func() bool) bool {
	for range 200 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// rawConn is a frame-level client: it reads frames as they are on the wire.
type rawConn struct {
	net.Conn
	r io.Reader
}

func dialRaw(t *testing.T, s *Server, path, tag string) *rawConn {
	t.Helper()
	nc, br, _, err := ws.Dialer{Header: ws.HandshakeHeaderHTTP(http.Header{"X-Soak-Conn": {tag}})}.Dial(ctxTimeout(t, 2*time.Second), s.URL()+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := s.WaitConn(ctxTimeout(t, 2*time.Second), tag); err != nil {
		t.Fatal(err)
	}
	var r io.Reader = nc
	if br != nil {
		r = io.MultiReader(br, nc)
	}
	return &rawConn{nc, r}
}

// frame reads one frame (skipping pings unless wantControl).
func (rc *rawConn) frame(t *testing.T, within time.Duration) (ws.Header, []byte) {
	t.Helper()
	_ = rc.SetReadDeadline(time.Now().Add(within))
	for {
		h, err := ws.ReadHeader(rc.r)
		if err != nil {
			t.Fatalf("read header: %v", err)
		}
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(rc.r, p); err != nil {
			t.Fatalf("read payload: %v", err)
		}
		if h.OpCode != ws.OpPing {
			return h, p
		}
	}
}

func TestFaultHalfOpen(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 23, Speed: 10, PingInterval: 100 * time.Millisecond, PongTimeout: 300 * time.Millisecond}, MaxControlPerSec: 100})
	t.Run("until the client gives up", func(t *testing.T) {
		rc := dialRaw(t, s, "/ws/btcusdt@trade", "gobwas/0/1")
		rc.frame(t, 2*time.Second)
		sc, _ := s.WaitConn(ctxTimeout(t, time.Second), "gobwas/0/1")
		if _, err := s.Inject(wire.Fault{Kind: wire.FaultHalfOpen, Libs: []string{"gobwas"}}); err != nil {
			t.Fatal(err)
		}
		// drain what was on the way, then nothing may arrive: not data, not a
		// ping, not a close, not a FIN — a read times out.
		deadline := time.Now().Add(300 * time.Millisecond)
		_ = rc.SetReadDeadline(deadline)
		buf := make([]byte, 64<<10)
		for time.Now().Before(deadline) {
			if _, err := rc.r.Read(buf); err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					t.Fatalf("while draining: %v", err)
				}
			}
		}
		// a client ping is not answered
		if err := ws.WriteFrame(rc, ws.MaskFrame(ws.NewPingFrame([]byte("hi")))); err != nil {
			t.Fatal(err)
		}
		_ = rc.SetReadDeadline(time.Now().Add(800 * time.Millisecond)) // > 2 pong timeouts of the server
		n, err := rc.r.Read(buf)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read during half-open: %d bytes, %v (want a timeout)", n, err)
		}
		// the client gives up: the server notices and frees the connection
		_ = ws.WriteFrame(rc, ws.MaskFrame(ws.NewCloseFrame(ws.NewCloseFrameBody(1000, "bye"))))
		rc.Close()
		select {
		case <-sc.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("the server kept the half-open connection after the client left")
		}
	})
	t.Run("healed after For", func(t *testing.T) {
		c := dial(t, s, "/ws/btcusdt@trade", "gorilla/0/1")
		next(t, c, 2*time.Second)
		if _, err := s.Inject(wire.Fault{Kind: wire.FaultHalfOpen, For: 400 * time.Millisecond, Libs: []string{"gorilla"}}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		readFor(c, 100*time.Millisecond) // in flight
		if msgs, err := readFor(c, 250*time.Millisecond); len(msgs) != 0 || err != nil {
			t.Fatalf("%d messages during half-open, %v", len(msgs), err)
		}
		p := next(t, c, 2*time.Second)
		if d := time.Since(start); d < 380*time.Millisecond {
			t.Fatalf("data after %v", d)
		}
		field(t, p, "t")
		// the pings the server sent before went unanswered: no pong-timeout close follows
		if _, err := readFor(c, 500*time.Millisecond); err != nil {
			t.Fatalf("closed after healing: %v", err)
		}
	})
}

func TestFaultZombie(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 24, Speed: 10, PingInterval: 100 * time.Millisecond}, MaxControlPerSec: 100})
	pings := make(chan string, 100)
	pongs := make(chan string, 10)
	c := dial(t, s, "/ws/btcusdt@trade", "coder/0/1", func(c *websocket.Conn) {
		c.SetPingHandler(func(p string) error {
			pings <- p
			return c.WriteControl(websocket.PongMessage, []byte(p), time.Now().Add(time.Second))
		})
		c.SetPongHandler(func(p string) error { pongs <- p; return nil })
	})
	next(t, c, 2*time.Second)
	if _, err := s.Inject(wire.Fault{Kind: wire.FaultZombie, For: 700 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	readFor(c, 50*time.Millisecond) // in flight
	for len(pings) > 0 {
		<-pings
	}
	if err := c.WriteControl(websocket.PingMessage, []byte("alive?"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if msgs, err := readFor(c, 500*time.Millisecond); len(msgs) != 0 || err != nil {
		t.Fatalf("%d messages from a zombie, %v", len(msgs), err)
	}
	if len(pings) < 3 {
		t.Fatalf("%d server pings during the zombie's 500ms", len(pings))
	}
	select {
	case p := <-pongs:
		if p != "alive?" {
			t.Fatalf("pong %q", p)
		}
	default:
		t.Fatal("the zombie did not answer the client's ping")
	}
	next(t, c, 2*time.Second) // data again after For
}

func TestFaultSilence(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 25, Speed: 10}})
	c := dial(t, s, "/stream?streams=btcusdt@trade/ethusdt@trade", "gorilla/0/1")
	next(t, c, 2*time.Second)
	a, err := s.Inject(wire.Fault{Kind: wire.FaultSilence, For: 500 * time.Millisecond, Streams: []string{"btcusdt@trade"}})
	if err != nil {
		t.Fatal(err)
	}
	readFor(c, 50*time.Millisecond)
	msgs, _ := readFor(c, 400*time.Millisecond)
	count := map[string]int{}
	for _, p := range msgs {
		name, _ := unwrap(t, p)
		count[name]++
	}
	if count["btcusdt@trade"] != 0 || count["ethusdt@trade"] < 10 {
		t.Fatalf("during silence: %v", count)
	}
	for {
		p := next(t, c, 2*time.Second)
		if name, data := unwrap(t, p); name == "btcusdt@trade" {
			if e := time.UnixMilli(field(t, data, "E")); e.Before(a.At.Add(500 * time.Millisecond).Truncate(time.Millisecond)) {
				t.Fatalf("event of %v sent after a silence until %v", e, a.At.Add(500*time.Millisecond))
			}
			break
		}
	}
}

// TestFaultFrames checks the faults that shape frames, on the wire.
func TestFaultFrames(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 26, Speed: 10}, MaxControlPerSec: 100})
	t.Run("oversize", func(t *testing.T) {
		rc := dialRaw(t, s, "/ws", "gws/0/1")
		if _, err := s.Inject(wire.Fault{Kind: wire.FaultOversize, Size: 100_000, Libs: []string{"gws"}}); err != nil {
			t.Fatal(err)
		}
		h, p := rc.frame(t, 2*time.Second)
		if h.OpCode != ws.OpText || !h.Fin || len(p) != 100_000 || !json.Valid(p) {
			t.Fatalf("frame %+v, %d bytes", h, len(p))
		}
		sc, _ := s.WaitConn(ctxTimeout(t, time.Second), "gws/0/1")
		// counted once the flush returned, which may be after the client read it
		if !eventually(func() bool { st := sc.stats().Streams[""]; return st.Sent == 1 && st.Bytes == 100_000 }) {
			t.Fatalf("counted %+v", sc.stats().Streams[""])
		}
	})
	t.Run("invalid utf8", func(t *testing.T) {
		rc := dialRaw(t, s, "/ws", "coder/0/1")
		if _, err := s.Inject(wire.Fault{Kind: wire.FaultInvalidUTF8, Libs: []string{"coder"}}); err != nil {
			t.Fatal(err)
		}
		h, p := rc.frame(t, 2*time.Second)
		if h.OpCode != ws.OpText || string(p) != string(InvalidUTF8) || utf8.Valid(p) {
			t.Fatalf("frame %+v %q", h, p)
		}
	})
	t.Run("fragment", func(t *testing.T) {
		rc := dialRaw(t, s, "/ws/btcusdt@trade", "fasthttp/0/1")
		rc.frame(t, 2*time.Second)
		a, err := s.Inject(wire.Fault{Kind: wire.FaultFragment, N: 2, Libs: []string{"fasthttp"}})
		if err != nil || len(a.Conns) != 1 {
			t.Fatalf("%v %v", a, err)
		}
		var ids []int64
		fragmented := 0
		for len(ids) < 6 {
			var msg []byte
			var ops []ws.OpCode
			for {
				h, p := rc.frame(t, 2*time.Second)
				ops = append(ops, h.OpCode)
				msg = append(msg, p...)
				if h.Fin {
					break
				}
			}
			if len(ops) == FragmentParts {
				fragmented++
				if ops[0] != ws.OpText || ops[1] != ws.OpContinuation || ops[3] != ws.OpContinuation {
					t.Fatalf("opcodes %v", ops)
				}
			} else if len(ops) != 1 {
				t.Fatalf("opcodes %v", ops)
			}
			ids = append(ids, field(t, msg, "t")) // reassembled to the original trade
		}
		if fragmented != 2 {
			t.Fatalf("%d fragmented messages, want 2", fragmented)
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] != ids[i-1]+1 {
				t.Fatalf("ids %v", ids)
			}
		}
	})
	for _, tc := range []struct{ path, want string }{
		{"/ws/btcusdt@trade", `{"e":"serverShutdown","E":`},
		{"/stream?streams=btcusdt@trade", `{"stream":"!serverShutdown","data":{"e":"serverShutdown","E":`},
	} {
		t.Run("server_shutdown "+tc.path, func(t *testing.T) {
			c := dial(t, s, tc.path, "gorilla/9/1")
			next(t, c, 2*time.Second)
			a, err := s.Inject(wire.Fault{Kind: wire.FaultShutdown, Libs: []string{"gorilla"}})
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := readFor(c, 2*time.Second)
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != 1001 || len(msgs) == 0 {
				t.Fatalf("ended with %v after %d messages", err, len(msgs))
			}
			last := string(msgs[len(msgs)-1])
			want := tc.want + strconv.FormatInt(a.At.UnixMilli(), 10) + "}"
			if strings.HasPrefix(tc.want, `{"stream"`) {
				want += "}"
			}
			if last != want {
				t.Fatalf("last message %s, want %s", last, want)
			}
		})
	}
}

func TestFaultDrip(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 27, Speed: 2}})
	rc := dialRaw(t, s, "/ws/btcusdt@trade", "gobwas/0/1")
	rc.frame(t, 2*time.Second)
	a, err := s.Inject(wire.Fault{Kind: wire.FaultDrip, For: time.Second, Delay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Count the socket reads of one message: dripped, most return one byte.
	counter := &readCounter{r: rc.r}
	rc.r = counter
	for range 3 {
		_, p := rc.frame(t, 3*time.Second)
		field(t, p, "t") // intact
	}
	if counter.reads < 50 || counter.ones*2 < counter.reads {
		t.Fatalf("%d reads, %d of one byte: not dripped", counter.reads, counter.ones)
	}
	// The fault ends at For even in the middle of a buffer: the backlog
	// (about 6 KB/s of trades against 500 B/s of drip) comes at once.
	time.Sleep(time.Until(a.At.Add(time.Second + 50*time.Millisecond)))
	for {
		_, p := rc.frame(t, 3*time.Second)
		if e := time.UnixMilli(field(t, p, "E")); e.After(a.At.Add(time.Second)) {
			// dripped at 500 B/s the second's backlog would take ~12 s: 2 s
			// tells "at once" from "dripped" even on a loaded machine
			if lat := time.Since(e); lat > 2*time.Second {
				t.Fatalf("an event after the drip arrived %v late", lat)
			}
			break
		}
	}
}

type readCounter struct {
	r           io.Reader
	reads, ones int
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.reads++
	if n == 1 {
		c.ones++
	}
	return n, err
}

func TestFaultLatency(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 28, Speed: 10}})
	c := dial(t, s, "/ws/btcusdt@trade?timeUnit=MICROSECOND", "gws/0/1")
	next(t, c, 2*time.Second)
	const delay = 300 * time.Millisecond
	a, err := s.Inject(wire.Fault{Kind: wire.FaultLatency, For: 600 * time.Millisecond, Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	during := 0
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		p := next(t, c, 2*time.Second)
		e := time.UnixMicro(field(t, p, "E"))
		lat := time.Since(e)
		// events the writer takes before For ends (it writes them Delay after their time)
		if e.After(a.At.Add(10*time.Millisecond)) && e.Before(a.At.Add(250*time.Millisecond)) {
			during++
			if lat < delay {
				t.Fatalf("event %v arrived after %v, want >= %v", e, lat, delay)
			}
		}
	}
	if during < 15 {
		t.Fatalf("only %d events during the fault", during)
	}
}

func TestFaultSchedule(t *testing.T) {
	start := time.Now().Add(200 * time.Millisecond)
	stop := start.Add(1100 * time.Millisecond)
	s := startServer(t, Config{Replay: wire.Replay{Seed: 29, Start: start, Stop: stop, Faults: []wire.ScheduledFault{
		{Fault: wire.Fault{Kind: wire.FaultReject, N: 1, Status: 503}, At: 200 * time.Millisecond, Every: 300 * time.Millisecond},
		{Fault: wire.Fault{Kind: wire.FaultClose, Code: 1000, Reason: "scheduled"}, At: 500 * time.Millisecond},
		{Fault: wire.Fault{Kind: wire.FaultShutdown}, At: 2 * time.Second}, // after Stop: never
	}}})
	c := dial(t, s, "/ws/btcusdt@trade", "gorilla/0/0")
	code, reason := closeCode(t, c, 3*time.Second)
	if code != 1000 || reason != "scheduled" {
		t.Fatalf("close %d %q", code, reason)
	}
	want := []time.Duration{200, 500, 500, 800} // 1100 is Stop: not fired
	// Wait for the four (a loaded machine fires timers late) and past Stop.
	log := s.Faults()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && (len(log) < len(want) || time.Now().Before(stop.Add(200*time.Millisecond))); log = s.Faults() {
		time.Sleep(20 * time.Millisecond)
	}
	kinds := []wire.FaultKind{wire.FaultReject, wire.FaultReject, wire.FaultClose, wire.FaultReject}
	if len(log) != len(want) {
		t.Fatalf("%d faults: %+v", len(log), log)
	}
	for i, a := range log {
		d := a.At.Sub(start.Add(want[i] * time.Millisecond))
		// never before its instant; how late is the machine's timer, not the schedule
		if a.Fault.Kind != kinds[i] || d < 0 {
			t.Errorf("fault %d: %s at +%v, want %s at or after +%v", i, a.Fault.Kind, a.At.Sub(start), kinds[i], want[i]*time.Millisecond)
		}
	}
	if !slices.Equal(log[2].Conns, []string{"gorilla/0/0"}) {
		t.Errorf("close hit %v", log[2].Conns)
	}
	// the same log over HTTP
	resp, err := noKeepAlive.Get("http://" + s.Addr() + "/_soak/faults")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var overHTTP []wire.Applied
	if err := json.NewDecoder(resp.Body).Decode(&overHTTP); err != nil {
		t.Fatal(err)
	}
	if len(overHTTP) != len(log) || !overHTTP[2].At.Equal(log[2].At) || overHTTP[2].Fault.Code != 1000 {
		t.Fatalf("over http %+v", overHTTP)
	}
}

// A zombie sends no data, but a serverShutdown still goes out and closes.
func TestFaultShutdownOfZombie(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 30, Speed: 10}})
	c := dial(t, s, "/ws/btcusdt@trade", "gws/0/1")
	next(t, c, 2*time.Second)
	if _, err := s.Inject(wire.Fault{Kind: wire.FaultZombie}); err != nil {
		t.Fatal(err)
	}
	readFor(c, 100*time.Millisecond) // in flight
	if _, err := s.Inject(wire.Fault{Kind: wire.FaultShutdown}); err != nil {
		t.Fatal(err)
	}
	msgs, err := readFor(c, 2*time.Second)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 1001 || len(msgs) != 1 || !strings.HasPrefix(string(msgs[0]), `{"e":"serverShutdown"`) {
		t.Fatalf("after the zombie's shutdown: %q, %v", msgs, err)
	}
}
