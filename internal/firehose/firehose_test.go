package firehose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gobwas/ws"
	gorilla "github.com/gorilla/websocket"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// testN is the message count of a scenario in the tests: small, so that the
// suite stays fast on a busy machine.
func testN(sc Scenario) int {
	switch sc.Name {
	case "tickerArr":
		return 4
	case "depth":
		return 200
	}
	return 2000
}

// start runs a firehose of sc that serves conns connections on loopback.
func start(t testing.TB, sc Scenario, n, conns int) *Server {
	t.Helper()
	s, err := New(Config{Scenario: sc, N: n, Seed: 7, Conns: conns})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waitDone waits until the server has served its connections.
func waitDone(t testing.TB, s *Server) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the firehose did not finish its connections within 30 s")
	}
}

// accounting checks messages as the soak does: stream name from the wrapper,
// the kind's fields, the sequence rule.
type accounting struct {
	seq      map[string]*binance.SeqState
	kinds    map[string]binance.Kind
	counts   binance.SeqCounts
	withSeq  int // messages that carried sequence ids
	messages int
	bytes    int64
	bad      error
}

func newAccounting() *accounting {
	return &accounting{seq: map[string]*binance.SeqState{}, kinds: map[string]binance.Kind{}}
}

func (a *accounting) observe(p []byte) {
	a.messages++
	a.bytes += int64(len(p))
	name, data, ok := binance.SplitCombined(p)
	if !ok {
		if a.bad == nil {
			a.bad = fmt.Errorf("message %d: not a combined-stream payload: %.80q", a.messages, p)
		}
		return
	}
	k, ok := a.kinds[string(name)]
	if !ok {
		st, err := binance.ParseStream(string(name))
		if err != nil {
			a.bad = err
			return
		}
		k = st.Kind
		a.kinds[string(name)] = k
		a.seq[string(name)] = &binance.SeqState{}
	}
	if !json.Valid(data) && a.bad == nil {
		a.bad = fmt.Errorf("message %d: data is not JSON: %.80q", a.messages, data)
	}
	var f binance.Fields
	if !binance.Scan(data, k, &f) {
		if a.bad == nil {
			a.bad = fmt.Errorf("message %d: scan failed: %.80q", a.messages, data)
		}
		return
	}
	if f.HasSeq {
		a.withSeq++
	}
	a.counts = a.counts.Add(a.seq[string(name)].Observe(k.Seq(), &f))
}

// check compares what a client received with what the firehose says it sent.
func (a *accounting) check(t *testing.T, s *Server, n int) {
	t.Helper()
	if a.bad != nil {
		t.Error(a.bad)
	}
	st := s.Stats()
	if len(st.Conns) != 1 {
		t.Fatalf("stats hold %d connections; want 1", len(st.Conns))
	}
	c := st.Conns[0]
	t.Logf("sent %d messages %d bytes, received %d messages %d bytes, %d with sequence ids", c.Messages, c.PayloadBytes, a.messages, a.bytes, a.withSeq)
	if c.Messages != n || a.messages != n {
		t.Errorf("firehose sent %d messages, client received %d; want %d both", c.Messages, a.messages, n)
	}
	if c.PayloadBytes != a.bytes || c.PayloadBytes != st.PayloadBytes {
		t.Errorf("firehose sent %d payload bytes (batch %d), client received %d", c.PayloadBytes, st.PayloadBytes, a.bytes)
	}
	if c.CloseSent != 1000 || c.CloseGot != 1000 || c.Err != "" || !c.Done {
		t.Errorf("connection %+v; want close 1000 sent and echoed, no error, done", c)
	}
	if a.counts != (binance.SeqCounts{}) {
		t.Errorf("sequence anomalies %+v; want none", a.counts)
	}
}

// TestRawTruth: for every scenario the raw reader receives exactly the
// messages and payload bytes the firehose says it sent, in sequence, and the
// close 1000.
func TestRawTruth(t *testing.T) {
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			n := testN(sc)
			s := start(t, sc, n, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := rawws.Dial(ctx, s.URL(), rawws.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			a := newAccounting()
			for {
				m, err := c.Next(true)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if !m.Text {
					t.Fatal("binary message")
				}
				a.observe(m.Payload)
			}
			waitDone(t, s)
			a.check(t, s, n)
			rc := c.Counts()
			if rc.CloseCode != 1000 || rc.Messages != int64(n) || rc.PayloadBytes != a.bytes {
				t.Errorf("reader counts %+v; want %d messages, %d bytes, close 1000", rc, n, a.bytes)
			}
			if want := s.Stats().Conns[0].WireBytes + CloseFrameSize; rc.WireBytes != want {
				t.Errorf("reader read %d bytes off the socket; the firehose wrote %d", rc.WireBytes, want)
			}
			if sc.Name != "tickerArr" && a.withSeq != n {
				t.Errorf("%d of %d messages carried sequence ids; want all", a.withSeq, n)
			}
		})
	}
}

// TestRawForm: a /ws/… path gets the payloads unwrapped, counted alike.
func TestRawForm(t *testing.T) {
	sc, _ := Lookup("aggTrade")
	s := start(t, sc, 500, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := rawws.Dial(ctx, s.RawURL(), rawws.Options{BufferSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seq binance.SeqState
	for {
		m, err := c.Next(true)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var f binance.Fields
		if !binance.Scan(m.Payload, binance.KindAggTrade, &f) || m.Payload[0] != '{' || m.Payload[2] != 'e' {
			t.Fatalf("payload %.60q: not a bare aggTrade", m.Payload)
		}
		seq.Observe(binance.SeqAgg, &f)
	}
	waitDone(t, s)
	st := s.Stats().Conns[0]
	if rc := c.Counts(); rc.Messages != 500 || rc.PayloadBytes != st.PayloadBytes || st.Combined || st.Messages != 500 {
		t.Errorf("reader %+v, firehose %+v; want 500 messages, equal bytes, raw form", rc, st)
	}
	if seq.Counts() != (binance.SeqCounts{}) {
		t.Errorf("sequence anomalies %+v", seq.Counts())
	}
}

// handler counts what a library delivers.
type handler struct{ a *accounting }

func (h handler) OnMessage(_ bool, p []byte) { h.a.observe(p) }
func (h handler) OnPing([]byte)              {}
func (h handler) OnPong([]byte)              {}

// TestLibraries: every client library, through its transport adapter, reads
// the mix scenario fully: received == sent, in sequence, closed 1000.
func TestLibraries(t *testing.T) {
	sc, _ := Lookup("mix")
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			const n = 3000
			s := start(t, sc, n, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := tr.Dial(ctx, transport.DialConfig{URL: s.URL()})
			if err != nil {
				t.Fatal(err)
			}
			a := newAccounting()
			runErr := make(chan error, 1)
			go func() { runErr <- c.Run(handler{a}) }()
			select {
			case err = <-runErr:
			case <-ctx.Done():
				_ = c.Abort()
				t.Fatal("the library did not finish reading within 30 s")
			}
			var ce *transport.CloseError
			if !errors.As(err, &ce) || ce.Code != 1000 {
				t.Errorf("Run: %v; want a close 1000", err)
			}
			waitDone(t, s)
			a.check(t, s, n)
		})
	}
}

// TestStatsEndpoint: GET /_firehose/stats answers what Stats holds, and a
// connection beyond Conns is refused.
func TestStatsEndpoint(t *testing.T) {
	sc, _ := Lookup("kline")
	s := start(t, sc, 100, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := rawws.Dial(ctx, s.URL(), rawws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := c.Drain()
	c.Close()
	if err != nil || counts.Messages != 100 {
		t.Fatalf("drain: %+v %v", counts, err)
	}
	waitDone(t, s)
	plain, err := http.Get("http://" + s.Addr() + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	plain.Body.Close()
	if plain.StatusCode != http.StatusBadRequest {
		t.Errorf("plain GET /stream: status %d; want 400", plain.StatusCode)
	}
	resp, err := http.Get("http://" + s.Addr() + StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Scenario != "kline" || st.N != 100 || st.Served != 1 || len(st.Conns) != 1 || st.Conns[0].Messages != 100 || st.Conns[0].PayloadBytes != counts.PayloadBytes {
		t.Errorf("stats %+v; want kline, 100 messages of %d bytes on one connection", st, counts.PayloadBytes)
	}
	if _, err := rawws.Dial(ctx, s.URL(), rawws.Options{}); err == nil {
		t.Error("a second connection was accepted; want it refused (Conns 1)")
	}
}

// TestConfigErrors: bad configurations are refused.
func TestConfigErrors(t *testing.T) {
	sc, _ := Lookup("aggTrade")
	for _, cfg := range []Config{{Scenario: sc}, {Scenario: sc, N: 1, Conns: -1}, {N: 1}, {Scenario: sc, N: MaxBytes / 10}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(N %d, Conns %d, scenario %q): no error", cfg.N, cfg.Conns, cfg.Scenario.Name)
		}
	}
	if _, err := Lookup("depth5"); err == nil {
		t.Error("Lookup(depth5): no error")
	}
}

// TestRawRcvBuf: the raw reader dials through transport's dialer, which sets
// SO_RCVBUF before connect, and still reads everything.
func TestRawRcvBuf(t *testing.T) {
	sc, _ := Lookup("tickerArr")
	s := start(t, sc, 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := &transport.Dialer{RcvBuf: 128 << 10}
	c, err := rawws.Dial(ctx, s.URL(), rawws.Options{NetDial: d.DialContext, BufferSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := transport.ReceiveBuffer(c.Conn)
	if err != nil || got < 128<<10 {
		t.Errorf("SO_RCVBUF %d, %v; want at least 128 KiB", got, err)
	}
	counts, err := c.Drain()
	if err != nil || counts.Messages != 3 || counts.CloseCode != 1000 {
		t.Fatalf("drain: %+v, %v", counts, err)
	}
	waitDone(t, s)
	if st := s.Stats().Conns[0]; st.PayloadBytes != counts.PayloadBytes {
		t.Errorf("sent %d payload bytes, received %d", st.PayloadBytes, counts.PayloadBytes)
	}
}

// TestSkip: the byte-counting reader takes exactly the frames and the close
// frame the stats announce, and its close reaches the server.
func TestSkip(t *testing.T) {
	sc, _ := Lookup("depth")
	s := start(t, sc, 50, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := rawws.Dial(ctx, s.URL(), rawws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := s.Stats()
	counts, err := c.Skip(st.WireBytes + CloseFrameSize)
	if err != nil || counts.WireBytes != st.WireBytes+CloseFrameSize {
		t.Fatalf("skip: %+v, %v; want %d bytes", counts, err, st.WireBytes+CloseFrameSize)
	}
	waitDone(t, s)
	if cs := s.Stats().Conns[0]; cs.CloseGot != 1000 || cs.WireBytes != st.WireBytes || cs.Messages != 50 {
		t.Errorf("connection %+v; want 50 messages, %d wire bytes, close 1000 received", cs, st.WireBytes)
	}
}

// TestEncodings: a client asking for msgpack or packed by subprotocol gets
// the batch in that encoding, in binary frames, every message and byte the
// server counts; one asking nothing known gets JSON text.
func TestEncodings(t *testing.T) {
	sc, _ := Lookup("depth20")
	const n = 500
	for _, tc := range []struct {
		offered []string
		enc     codec.Encoding
	}{
		{nil, codec.JSON},
		{[]string{"soak.json.v2"}, codec.JSON},
		{[]string{"soak.msgpack.v1"}, codec.Msgpack},
		{[]string{"x", "soak.packed.v1"}, codec.Packed},
	} {
		t.Run(tc.enc.String(), func(t *testing.T) {
			s := start(t, sc, n, 1)
			want, err := PrepareEncoded(sc, n, 7, true, tc.enc)
			if err != nil {
				t.Fatal(err)
			}
			d := gorilla.Dialer{HandshakeTimeout: 5 * time.Second, Subprotocols: tc.offered}
			c, _, err := d.Dial(s.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.Subprotocol(); (got != "") != tc.enc.Binary() || got != "" && got != tc.enc.Subprotocol() {
				t.Fatalf("answered %q for %v", got, tc.enc)
			}
			wantType := gorilla.TextMessage
			if tc.enc.Binary() {
				wantType = gorilla.BinaryMessage
			}
			var got []byte
			msgs := 0
			for {
				typ, p, err := c.ReadMessage()
				if err != nil {
					if !gorilla.IsCloseError(err, 1000) {
						t.Fatalf("after %d messages: %v", msgs, err)
					}
					break
				}
				if typ != wantType {
					t.Fatalf("message %d: type %d, want %d", msgs, typ, wantType)
				}
				msgs++
				hdr := ws.Header{Fin: true, OpCode: ws.OpText, Length: int64(len(p))}
				if tc.enc.Binary() {
					hdr.OpCode = ws.OpBinary
				}
				var buf bytes.Buffer
				_ = ws.WriteHeader(&buf, hdr)
				got = append(append(got, buf.Bytes()...), p...)
			}
			waitDone(t, s)
			cs := s.Stats().Conns[0]
			if msgs != n || cs.Messages != n || cs.Encoding != tc.enc.String() {
				t.Errorf("received %d, sent %d (%s); want %d %v", msgs, cs.Messages, cs.Encoding, n, tc.enc)
			}
			// Values aside from times (taken at Prepare), the frames are the batch's.
			if len(got) != len(want.Wire()) || cs.WireBytes != int64(len(got)) {
				t.Errorf("received %d frame bytes, server wrote %d, batch has %d", len(got), cs.WireBytes, len(want.Wire()))
			}
		})
	}
}
