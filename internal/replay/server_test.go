package replay

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gorilla/websocket"
	"github.com/wssoak/wssoak/internal/wire"
	"go.uber.org/goleak"
)

func TestPaths(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 1}})
	tests := []struct {
		path   string
		status int
	}{
		{"/ws", 101},
		{"/ws/", 101},
		{"/ws/btcusdt@trade", 101},
		{"/ws/btcusdt@trade/ethusdt@aggTrade", 101},
		{"/ws/btcusdt%40trade", 101},
		{"/stream", 101},
		{"/stream?streams=", 101},
		{"/stream?streams=btcusdt@trade/ethusdt@bookTicker", 101},
		{"/stream?streams=btcusdt%40kline_1m%40%2B08%3A00", 101},
		{"/ws/btcusdt@trade?timeUnit=microsecond", 101},
		{"/ws/btcusdt@trade?timeUnit=MILLISECOND", 101},
		{"/ws/btcusdt@trade?timeUnit=seconds", 400},
		{"/ws/btc-usdt@trade", 400},
		{"/stream/nonsense", 404},
		{"/", 404},
		{"/api/v3/depth", 400}, // REST (rest.go): no symbol
		{"/api/v3/exchangeInfo", 404},
		{"/_soak/nothing", 404},
		{"/wsx", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			c, resp, err := dialResp(s, tt.path, "", nil)
			if c != nil {
				c.Close()
			}
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tt.status, err)
			}
		})
	}
	// A plain HTTP GET on a WebSocket path is not upgraded.
	resp, err := noKeepAlive.Get("http://" + s.Addr() + "/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("GET /nowhere: %d", resp.StatusCode)
	}
}

var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}

func TestCombinedAndRaw(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 2, Speed: 10}, MaxControlPerSec: 100})
	raw := dial(t, s, "/ws/btcusdt@trade", "raw")
	comb := dial(t, s, "/stream?streams=btcusdt@trade", "comb")
	for _, tc := range []struct {
		c        *client
		combined bool
	}{{raw, false}, {comb, true}} {
		msgs, err := readFor(tc.c, 500*time.Millisecond)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("combined=%v: %d msgs, %v", tc.combined, len(msgs), err)
		}
		for _, m := range msgs {
			payload := m
			if tc.combined {
				var name string
				name, payload = unwrap(t, m)
				if name != "btcusdt@trade" {
					t.Fatalf("stream %q", name)
				}
			} else if !strings.HasPrefix(string(m), `{"e":"trade",`) {
				t.Fatalf("raw message %s", m)
			}
			if k := keys(t, payload); strings.Join(k, ",") != "e,E,s,t,p,q,T,m,M" {
				t.Fatalf("trade keys %v", k)
			}
		}
	}
	// SET_PROPERTY switches the wrapping of a raw connection; events may come
	// before the reply, in either shape (the switch takes effect before the
	// reply is queued, so an event generated in between is already wrapped);
	// every one after the reply is wrapped.
	if err := raw.WriteMessage(websocket.TextMessage, []byte(`{"method":"SET_PROPERTY","params":["combined",true],"id":7}`)); err != nil {
		t.Fatal(err)
	}
	for {
		p := next(t, raw, 2*time.Second)
		if strings.HasPrefix(string(p), `{"e":"trade"`) || strings.HasPrefix(string(p), `{"stream":"btcusdt@trade","data":{"e":"trade"`) {
			continue
		}
		if string(p) != `{"result":null,"id":7}` {
			t.Fatalf("reply %s", p)
		}
		break
	}
	msgs, _ := readFor(raw, 300*time.Millisecond)
	if len(msgs) == 0 {
		t.Fatal("no messages after SET_PROPERTY")
	}
	for _, m := range msgs {
		if name, _ := unwrap(t, m); name != "btcusdt@trade" {
			t.Fatalf("stream %q", name)
		}
	}
}

func TestControlMessages(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 3}, MaxControlPerSec: 1000})
	c := dial(t, s, "/ws", "ctl")
	long := strings.Repeat("a", 37)
	tests := []struct{ req, want string }{
		{`{"method":"LIST_SUBSCRIPTIONS","id":1}`, `{"result":[],"id":1}`},
		{`{"method":"SUBSCRIBE","params":["btcusdt@nosuchstream","BTCUSDT@trade","!ticker@arr"],"id":2}`, `{"result":null,"id":2}`},
		{`{"method":"LIST_SUBSCRIPTIONS","id":3}`, `{"result":["btcusdt@nosuchstream","BTCUSDT@trade","!ticker@arr"],"id":3}`},
		{`{"method":"UNSUBSCRIBE","params":["BTCUSDT@trade","ethusdt@trade"],"id":312}`, `{"result":null,"id":312}`},
		{`{"method":"LIST_SUBSCRIPTIONS","params":[],"id":4}`, `{"result":["btcusdt@nosuchstream","!ticker@arr"],"id":4}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":5}`, `{"result":false,"id":5}`},
		{`{"method":"SET_PROPERTY","params":["combined",true],"id":6}`, `{"result":null,"id":6}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":7}`, `{"result":true,"id":7}`},
		{`{"method":"SET_PROPERTY","params":["combined",false],"id":8}`, `{"result":null,"id":8}`},
		// ids
		{`{"method":"GET_PROPERTY","params":["combined"],"id":"abc123XYZ"}`, `{"result":false,"id":"abc123XYZ"}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":null}`, `{"result":false,"id":null}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":-9223372036854775808}`, `{"result":false,"id":-9223372036854775808}`},
		{`{"id":9223372036854775807,"params":["combined"],"method":"GET_PROPERTY"}`, `{"result":false,"id":9223372036854775807}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":"` + long[:36] + `"}`, `{"result":false,"id":"` + long[:36] + `"}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":"` + long + `"}`, `{"error":{"code":2,"msg":"Invalid request: request ID must be an unsigned integer"},"id":null}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":"a-b"}`, `{"error":{"code":2,"msg":"Invalid request: request ID must be an unsigned integer"},"id":null}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":1.5}`, `{"error":{"code":2,"msg":"Invalid request: request ID must be an unsigned integer"},"id":null}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":9223372036854775808}`, `{"error":{"code":2,"msg":"Invalid request: request ID must be an unsigned integer"},"id":null}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":true}`, `{"error":{"code":2,"msg":"Invalid request: request ID must be an unsigned integer"},"id":null}`},
		{`{"method":"GET_PROPERTY","params":["combined"],"id":[1]}`, `{"error":{"code":2,"msg":"Invalid request: request ID must be an unsigned integer"},"id":null}`},
		{`{"method":"GET_PROPERTY","params":["combined"]}`, `{"error":{"code":2,"msg":"Invalid request: request ID must be an unsigned integer"},"id":null}`},
		// errors
		{`{"method":"SUBSCRIBE","params":["btcusdt@trade x"],"id":10}`, `{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":10}`},
		{`{"method":"SUBSCRIBE","params":["@trade"],"id":11}`, `{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":11}`},
		{`{"method":"SUBSCRIBE","params":[5],"id":12}`, `{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":12}`},
		{`{"method":"UNSUBSCRIBE","params":["a b"],"id":13}`, `{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":13}`},
		{`{"method":"SET_PROPERTY","params":["combined","yes"],"id":14}`, `{"error":{"code":1,"msg":"Invalid value type: expected Boolean"},"id":14}`},
		{`{"method":"SET_PROPERTY","params":["combined"],"id":15}`, `{"error":{"code":1,"msg":"Invalid value type: expected Boolean"},"id":15}`},
		{`{"method":"SET_PROPERTY","params":["compressed",true],"id":16}`, `{"error":{"code":0,"msg":"Unknown property"},"id":16}`},
		{`{"method":"GET_PROPERTY","params":["foo"],"id":17}`, `{"error":{"code":0,"msg":"Unknown property"},"id":17}`},
		{`{"method":"SET_PROPERTY","params":[1,true],"id":18}`, `{"error":{"code":2,"msg":"Invalid request: property name must be a string"},"id":18}`},
		{`{"method":"GET_PROPERTY","params":[],"id":19}`, `{"error":{"code":2,"msg":"Invalid request: property name must be a string"},"id":19}`},
		{`{"method":"GET_PROPERTY","params":["combined","x"],"id":20}`, `{"error":{"code":2,"msg":"Invalid request: too many parameters"},"id":20}`},
		{`{"method":"SET_PROPERTY","params":["combined",true,1],"id":21}`, `{"error":{"code":2,"msg":"Invalid request: too many parameters"},"id":21}`},
		{`{"method":"LIST_SUBSCRIPTIONS","params":["x"],"id":22}`, `{"error":{"code":2,"msg":"Invalid request: too many parameters"},"id":22}`},
		{`{"method":"FOO","params":[],"id":23}`, "{\"error\":{\"code\":2,\"msg\":\"Invalid request: unknown variant `FOO`, expected one of `SUBSCRIBE`, `UNSUBSCRIBE`, `LIST_SUBSCRIPTIONS`, `SET_PROPERTY`, `GET_PROPERTY` at line 1 column 15\"},\"id\":23}"},
		{`{"params":["btcusdt@trade"],"id":24}`, "{\"error\":{\"code\":2,\"msg\":\"Invalid request: missing field `method` at line 1 column 36\"},\"id\":24}"},
		{`{"method":`, `{"error":{"code":3,"msg":"Invalid JSON: EOF while parsing a value at line 1 column 10"}}`},
		{`hello`, `{"error":{"code":3,"msg":"Invalid JSON: expected value at line 1 column 1"}}`},
		{``, `{"error":{"code":3,"msg":"Invalid JSON: EOF while parsing a value"}}`},
		// the connection is still open after errors
		{`{"method":"LIST_SUBSCRIPTIONS","id":"last"}`, `{"result":["btcusdt@nosuchstream","!ticker@arr"],"id":"last"}`},
	}
	for _, tt := range tests {
		if got := ask(t, c, tt.req); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.req, got, tt.want)
		}
	}
	// Nothing but replies arrived: unknown and retired streams are silent.
	if msgs, err := readFor(c, 300*time.Millisecond); len(msgs) != 0 || err != nil {
		t.Fatalf("unexpected %d messages (%v): %q", len(msgs), err, msgs)
	}
}

func TestUnknownStreamsSilent(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 4, Speed: 20}})
	c := dial(t, s, "/stream?streams=btcusdt@nosuchstream/BTCUSDT@trade/!ticker@arr/!bookTicker/btcusdt@kline_7m/!foo", "silent")
	if msgs, err := readFor(c, 500*time.Millisecond); len(msgs) != 0 || err != nil {
		t.Fatalf("got %d messages (%v)", len(msgs), err)
	}
	st := s.Stats().Conns[0]
	if len(st.Streams) != 6 {
		t.Fatalf("stats list %d streams, want 6: %v", len(st.Streams), st.Streams)
	}
}

func TestTimeUnit(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 5, Speed: 10}})
	for _, tc := range []struct {
		query  string
		digits int
	}{{"?", 13}, {"?timeUnit=MILLISECOND&", 13}, {"?timeUnit=MICROSECOND&", 16}, {"?timeUnit=microsecond&", 16}} {
		t.Run(tc.query, func(t *testing.T) {
			t.Parallel()
			c := dial(t, s, "/stream"+tc.query+"streams=btcusdt@trade/btcusdt@kline_1s/btcusdt@ticker", "")
			msgs, err := readFor(c, 1200*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			unit := int64(1000)
			if tc.digits == 16 {
				unit = 1_000_000
			}
			seen := map[string]bool{}
			for _, m := range msgs {
				name, p := unwrap(t, m)
				seen[name] = true
				now := time.Now()
				check := func(field string, v int64) {
					t.Helper()
					if n := len(strconv.FormatInt(v, 10)); n != tc.digits {
						t.Fatalf("%s %s=%d has %d digits", name, field, v, n)
					}
					at := time.UnixMilli(v)
					if tc.digits == 16 {
						at = time.UnixMicro(v)
					}
					if d := now.Sub(at); d < -time.Second || d > 25*time.Hour {
						t.Fatalf("%s %s=%d is %v from now", name, field, v, d)
					}
				}
				e := field(t, p, "E")
				check("E", e)
				switch name {
				case "btcusdt@trade":
					tt := field(t, p, "T")
					check("T", tt)
					if tt > e {
						t.Fatalf("T %d after E %d", tt, e)
					}
				case "btcusdt@ticker":
					o, cl := field(t, p, "O"), field(t, p, "C")
					check("O", o)
					check("C", cl)
					if cl-o != 86400*unit {
						t.Fatalf("ticker window %d..%d", o, cl)
					}
				case "btcusdt@kline_1s":
					var k struct {
						K json.RawMessage `json:"k"`
					}
					_ = json.Unmarshal(p, &k)
					open, closeT := field(t, k.K, "t"), field(t, k.K, "T")
					check("k.t", open)
					check("k.T", closeT)
					if closeT-open != unit-1 || e < open {
						t.Fatalf("kline_1s window %d..%d at E %d", open, closeT, e)
					}
				}
			}
			if len(seen) != 3 {
				t.Fatalf("streams seen %v", seen)
			}
		})
	}
}

func TestSameBytesAcrossConnsAndServers(t *testing.T) {
	start := time.Now().Add(100 * time.Millisecond)
	streams := "btcusdt@trade/btcusdt@depth@100ms/ethusdt@bookTicker/btcusdt@kline_1s/!miniTicker@arr"
	a := startServer(t, Config{Replay: wire.Replay{Seed: 42, Speed: 10, Start: start}})
	b := startServer(t, Config{Replay: wire.Replay{Seed: 42, Speed: 10, Start: start}})
	other := startServer(t, Config{Replay: wire.Replay{Seed: 43, Speed: 10, Start: start}})
	c1 := dial(t, a, "/stream?streams="+streams, "c1")
	c2 := dial(t, a, "/stream?streams="+streams, "c2")
	c3 := dial(t, b, "/stream?streams="+streams, "c3")
	// a fourth connection on a subset in another order: per-stream bytes must not change
	c4 := dial(t, b, "/stream?streams=!miniTicker@arr/btcusdt@trade", "c4")
	c5 := dial(t, other, "/stream?streams="+streams, "c5")
	// Read until every stream of the connection has 8 messages: a lagging
	// machine delays events but cannot change which ones are sent.
	perStream := func(c *client, want int) map[string][]string {
		out := map[string][]string{}
		deadline := time.After(15 * time.Second)
		for {
			full := len(out) == want
			for _, seq := range out {
				full = full && len(seq) >= 8
			}
			if full {
				return out
			}
			select {
			case m := <-c.msgs:
				name, _ := unwrap(t, m)
				out[name] = append(out[name], string(m))
			case err := <-c.end:
				t.Errorf("connection ended: %v", err)
				return out
			case <-deadline:
				t.Errorf("timed out with %d streams", len(out))
				return out
			}
		}
	}
	conns := []*client{c1, c2, c3, c4, c5}
	got := make([]map[string][]string, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		want := 5
		if c == c4 {
			want = 2
		}
		wg.Go(func() { got[i] = perStream(c, want) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	s1, s2, s3, s4, s5 := got[0], got[1], got[2], got[3], got[4]
	for name, seq := range s1 {
		if len(seq) < 3 {
			t.Fatalf("%s: only %d messages", name, len(seq))
		}
		for i, other := range []map[string][]string{s2, s3} {
			if !sameOverlap(seq, other[name]) {
				t.Fatalf("%s differs between c1 and c%d: %d vs %d messages\n%.200s\n%.200s\n%s", name, i+2, len(seq), len(other[name]), seq[0], other[name][0], firstDiff(seq, other[name]))
			}
		}
	}
	for _, name := range []string{"!miniTicker@arr", "btcusdt@trade"} {
		if !sameOverlap(s1[name], s4[name]) {
			t.Fatalf("%s depends on the other streams of the connection", name)
		}
	}
	if sameOverlap(s1["btcusdt@trade"], s5["btcusdt@trade"]) {
		t.Fatal("another seed produced the same trades")
	}
}

// sameOverlap reports whether two sequences agree where they overlap (one may start later).
// firstDiff says where a and b first differ, index by index (for a
// failure's message: which message, and both texts).
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("first difference at message %d:\n%.300s\n%.300s", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("equal over %d messages; lengths %d and %d", min(len(a), len(b)), len(a), len(b))
}

func sameOverlap(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if len(b) > 0 && len(a) > 0 && a[0] != b[0] {
		// align on the later start
		i := index(a, b[0])
		if i < 0 {
			j := index(b, a[0])
			if j < 0 {
				return false
			}
			b = b[j:]
		} else {
			a = a[i:]
		}
	}
	n := min(len(a), len(b))
	if n < 2 {
		return false
	}
	for i := range n {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func index(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestStatsMatchClient(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 6, Speed: 10}})
	c := dial(t, s, "/stream?streams=btcusdt@trade/btcusdt@aggTrade/btcusdt@depth20@100ms/btcusdt@bookTicker", "count")
	sc, err := s.WaitConn(ctxTimeout(t, 2*time.Second), "count")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.SendText([]byte(`{"hello":1}`)); err != nil {
		t.Fatal(err)
	}
	type cnt struct {
		n, bytes    int64
		first, last int64
	}
	counts := map[string]*cnt{}
	time.Sleep(time.Second)
	if err := sc.Close(4001, "enough"); err != nil {
		t.Fatal(err)
	}
	msgs, err := readFor(c, 3*time.Second)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4001 || ce.Text != "enough" {
		t.Fatalf("client ended with %v", err)
	}
	for _, p := range msgs {
		name, payload := "", p
		if !strings.HasPrefix(string(p), `{"hello"`) {
			name, payload = unwrap(t, p)
		}
		k := counts[name]
		if k == nil {
			k = &cnt{}
			counts[name] = k
		}
		k.n++
		k.bytes += int64(len(p))
		if key := seqKey[name]; key != "" {
			seq := field(t, payload, key)
			if k.first == 0 {
				k.first = seq
			}
			k.last = seq
		}
	}
	st := s.Stats()
	if len(st.Conns) != 1 {
		t.Fatalf("%d conns", len(st.Conns))
	}
	cs := st.Conns[0]
	if cs.CloseCode != 4001 || cs.ClosedBy != "server" || cs.Closed.IsZero() || cs.Tag != "count" {
		t.Fatalf("conn stats %+v", cs)
	}
	if len(cs.Streams) != 5 {
		t.Fatalf("streams %v", cs.Streams)
	}
	for name, ss := range cs.Streams {
		k := counts[name]
		if k == nil || ss.Sent != k.n || ss.Bytes != k.bytes {
			t.Errorf("%q: server sent %d/%dB, client got %+v", name, ss.Sent, ss.Bytes, k)
		}
		if k != nil && (ss.FirstSeq != k.first || ss.LastSeq != k.last || name != "" && ss.LastSeq <= ss.FirstSeq) {
			t.Errorf("%q: server seq %d..%d, client %d..%d", name, ss.FirstSeq, ss.LastSeq, k.first, k.last)
		}
	}
	// the same numbers over HTTP
	resp, err := noKeepAlive.Get("http://" + s.Addr() + "/_soak/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var overHTTP Stats
	if err := json.NewDecoder(resp.Body).Decode(&overHTTP); err != nil {
		t.Fatal(err)
	}
	if overHTTP.Conns[0].Streams["btcusdt@trade"] != cs.Streams["btcusdt@trade"] {
		t.Fatalf("http stats %+v", overHTTP.Conns[0].Streams["btcusdt@trade"])
	}
}

var seqKey = map[string]string{
	"btcusdt@trade": "t", "btcusdt@aggTrade": "a", "btcusdt@depth20@100ms": "lastUpdateId", "btcusdt@bookTicker": "u",
}

func TestStartStopWindow(t *testing.T) {
	start := time.Now().Add(400 * time.Millisecond)
	stop := start.Add(600 * time.Millisecond)
	s := startServer(t, Config{Replay: wire.Replay{Seed: 7, Speed: 10, Start: start, Stop: stop}})
	c := dial(t, s, "/ws/btcusdt@trade/btcusdt@depth@100ms", "")
	var times []int64
	var recv []time.Time
	for time.Now().Before(stop.Add(700 * time.Millisecond)) {
		msgs, err := readFor(c, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range msgs {
			times = append(times, field(t, p, "E"))
			recv = append(recv, time.Now())
		}
	}
	if len(times) < 20 {
		t.Fatalf("only %d events in the window", len(times))
	}
	for i, e := range times {
		if e < start.UnixMilli() || e >= stop.UnixMilli()+1 {
			t.Fatalf("event E=%d outside [%d, %d)", e, start.UnixMilli(), stop.UnixMilli())
		}
		if recv[i].Before(start) {
			t.Fatalf("event received %v before Start", start.Sub(recv[i]))
		}
	}
}

func TestHeartbeat(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 8, PingInterval: 250 * time.Millisecond, PongTimeout: 400 * time.Millisecond}})
	t.Run("answered", func(t *testing.T) {
		payloads := make(chan string, 100)
		c := dial(t, s, "/ws", "good", func(c *websocket.Conn) {
			c.SetPingHandler(func(p string) error {
				payloads <- p
				return c.WriteControl(websocket.PongMessage, []byte(p), time.Now().Add(time.Second))
			})
		})
		if msgs, err := readFor(c, 1400*time.Millisecond); err != nil || len(msgs) != 0 {
			t.Fatalf("connection ended: %v", err)
		}
		if len(payloads) < 4 {
			t.Fatalf("%d pings", len(payloads))
		}
		p := <-payloads
		ms, err := strconv.ParseInt(p, 10, 64)
		if len(p) != 13 || err != nil || time.Since(time.UnixMilli(ms)) > 2*time.Second {
			t.Fatalf("ping payload %q", p)
		}
		sc, _ := s.WaitConn(ctxTimeout(t, time.Second), "good")
		st := sc.stats()
		if st.PingsSent < 4 || st.PongsReceived < st.PingsSent-1 {
			t.Fatalf("pings %d pongs %d", st.PingsSent, st.PongsReceived)
		}
	})
	for _, tc := range []struct {
		name string
		pong func(c *websocket.Conn, p string) error
	}{
		{"silent", func(*websocket.Conn, string) error { return nil }},
		{"wrong payload", func(c *websocket.Conn, p string) error {
			return c.WriteControl(websocket.PongMessage, []byte("x"+p[1:]), time.Now().Add(time.Second))
		}},
		{"unsolicited only", func(c *websocket.Conn, p string) error {
			return c.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c := dial(t, s, "/ws", "", func(c *websocket.Conn) {
				c.SetPingHandler(func(p string) error { return tc.pong(c, p) })
			})
			code, reason := closeCode(t, c, 3*time.Second)
			if code != 1008 || reason != "pong timeout" {
				t.Fatalf("close %d %q", code, reason)
			}
			if d := time.Since(start); d < 600*time.Millisecond {
				t.Fatalf("closed after %v, before the first ping timed out", d)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 9}})
	for _, tc := range []struct {
		name string
		send func(c *websocket.Conn, i int) error
		n    int
		code int
	}{
		{"5 pings pass", func(c *websocket.Conn, i int) error {
			return c.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second))
		}, 5, 0},
		{"6 pings", func(c *websocket.Conn, i int) error {
			return c.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second))
		}, 6, 1008},
		{"6 pongs", func(c *websocket.Conn, i int) error {
			return c.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second))
		}, 6, 1008},
		{"6 requests", func(c *websocket.Conn, i int) error {
			return c.WriteMessage(websocket.TextMessage, []byte(`{"method":"LIST_SUBSCRIPTIONS","id":`+strconv.Itoa(i)+`}`))
		}, 6, 1008},
		{"3 pongs 3 requests", func(c *websocket.Conn, i int) error {
			if i%2 == 0 {
				return c.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second))
			}
			return c.WriteMessage(websocket.TextMessage, []byte(`{"method":"LIST_SUBSCRIPTIONS","id":1}`))
		}, 6, 1008},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s, "/ws", "")
			for i := range tc.n {
				if err := tc.send(c.Conn, i); err != nil {
					t.Fatal(err)
				}
			}
			if tc.code == 0 {
				if _, err := readFor(c, 300*time.Millisecond); err != nil {
					t.Fatalf("closed: %v", err)
				}
				return
			}
			code, reason := closeCode(t, c, 2*time.Second)
			if code != tc.code || reason != "Too many requests" {
				t.Fatalf("close %d %q", code, reason)
			}
		})
	}
}

func TestMaxStreams(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 10}, MaxStreamsPerConn: 3})
	t.Run("url", func(t *testing.T) {
		c := dial(t, s, "/ws/a@trade/b@trade/c@trade/d@trade", "")
		if code, _ := closeCode(t, c, 2*time.Second); code != 1008 {
			t.Fatalf("close %d", code)
		}
	})
	t.Run("url+subscribe", func(t *testing.T) {
		c := dial(t, s, "/ws/a@trade/b@trade", "")
		if got := askReply(t, c, `{"method":"SUBSCRIBE","params":["a@trade","c@trade"],"id":1}`); got != `{"result":null,"id":1}` {
			t.Fatalf("reply %s", got)
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"method":"SUBSCRIBE","params":["d@trade"],"id":2}`)); err != nil {
			t.Fatal(err)
		}
		if code, _ := closeCode(t, c, 2*time.Second); code != 1008 {
			t.Fatalf("close %d", code)
		}
	})
}

func TestQueueOverflowClosesOnlySlowConn(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 11, Speed: 20, QueueSize: 1024}})
	streams := "/stream?streams=btcusdt@depth20@100ms/ethusdt@depth20@100ms/bnbusdt@depth20@100ms/solusdt@depth20@100ms" +
		"/xrpusdt@depth20@100ms/adausdt@depth20@100ms/dogeusdt@depth20@100ms/trxusdt@depth20@100ms"
	// The slow client never reads and keeps its receive buffer small.
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, NetDial: func(network, addr string) (net.Conn, error) {
		nc, err := net.Dial(network, addr)
		if err == nil {
			_ = nc.(*net.TCPConn).SetReadBuffer(4096)
		}
		return nc, err
	}}
	slow, _, err := dialResp(s, streams, "slow", &d)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close() // never read
	fast := dial(t, s, streams, "fast")
	sc, err := s.WaitConn(ctxTimeout(t, 2*time.Second), "slow")
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	deadline := time.Now().Add(15 * time.Second)
	closedAt := -1
	for time.Now().Before(deadline) {
		msgs, err := readFor(fast, 100*time.Millisecond)
		if err != nil {
			t.Fatalf("fast conn ended: %v", err)
		}
		got += len(msgs)
		select {
		case <-sc.Done():
			if closedAt < 0 {
				closedAt = got
				deadline = time.Now().Add(500 * time.Millisecond) // keep reading a little
			}
		default:
		}
	}
	if closedAt < 0 {
		t.Fatal("slow connection was never closed")
	}
	if got-closedAt < 10 {
		t.Fatalf("fast conn got %d messages after the slow one closed", got-closedAt)
	}
	for _, cs := range s.Stats().Conns {
		switch cs.Tag {
		case "slow":
			if cs.CloseCode != 1008 || cs.CloseReason != "queue overflow" || cs.ClosedBy != "server" {
				t.Fatalf("slow conn %+v", cs)
			}
		case "fast":
			if !cs.Closed.IsZero() {
				t.Fatalf("fast conn closed: %d %s", cs.CloseCode, cs.CloseReason)
			}
		}
	}
}

func TestRejectHandshakes(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 12}})
	s.RejectHandshakes(2, http.StatusTooManyRequests, http.Header{"Retry-After": {"3"}})
	for i := range 2 {
		_, resp, err := dialResp(s, "/ws/btcusdt@trade", "", nil)
		if err == nil || resp == nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
			t.Fatalf("attempt %d: %v %+v", i, err, resp)
		}
	}
	// /_soak/stats is not a handshake and keeps working
	dial(t, s, "/ws", "")
	s.RejectHandshakes(1, http.StatusNotFound, nil)
	if _, resp, _ := dialResp(s, "/ws", "", nil); resp == nil || resp.StatusCode != 404 {
		t.Fatalf("want 404: %+v", resp)
	}
	dial(t, s, "/ws", "")
}

func TestHooks(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 13}})
	t.Run("fragmented", func(t *testing.T) {
		nc, br, _, err := ws.Dialer{Header: ws.HandshakeHeaderHTTP(http.Header{"X-Soak-Conn": {"frag"}})}.Dial(ctxTimeout(t, 2*time.Second), s.URL()+"/ws")
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		var r io.Reader = nc
		if br != nil {
			r = io.MultiReader(br, nc)
		}
		sc, err := s.WaitConn(ctxTimeout(t, 2*time.Second), "frag")
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte(`{"e":"trade","E":1,"s":"BTCUSDT"}`)
		if err := sc.SendFragmented(msg, 4); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		var got []byte
		var ops []ws.OpCode
		for {
			h, err := ws.ReadHeader(r)
			if err != nil || h.Length > 1024 {
				t.Fatalf("header %+v: %v", h, err)
			}
			p := make([]byte, h.Length)
			if _, err := io.ReadFull(r, p); err != nil {
				t.Fatal(err)
			}
			if h.OpCode.IsControl() {
				continue
			}
			ops = append(ops, h.OpCode)
			got = append(got, p...)
			if h.Fin {
				break
			}
		}
		want := []ws.OpCode{ws.OpText, ws.OpContinuation, ws.OpContinuation, ws.OpContinuation}
		if string(got) != string(msg) || len(ops) != 4 || ops[0] != want[0] || ops[3] != want[3] {
			t.Fatalf("frames %v payload %s", ops, got)
		}
		// counted once the flush returned, which may be after the client read it
		if !eventually(func() bool { st := sc.stats().Streams[""]; return st.Sent == 1 && st.Bytes == int64(len(msg)) }) {
			t.Fatalf("stats %+v", sc.stats().Streams[""])
		}
	})
	t.Run("ping", func(t *testing.T) {
		dial(t, s, "/ws", "ping") // its reader answers pings
		sc, err := s.WaitConn(ctxTimeout(t, 2*time.Second), "ping")
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Ping([]byte("hook-1")); err != nil {
			t.Fatal(err)
		}
		if err := sc.WaitPong(ctxTimeout(t, 2*time.Second), []byte("hook-1")); err != nil {
			t.Fatal(err)
		}
		if err := sc.WaitPong(ctxTimeout(t, 200*time.Millisecond), []byte("never")); err == nil {
			t.Fatal("WaitPong for an unsent payload returned")
		}
		if st := sc.stats(); st.PingsSent != 1 || st.PongsReceived != 1 {
			t.Fatalf("pings %d pongs %d", st.PingsSent, st.PongsReceived)
		}
	})
	t.Run("client ping", func(t *testing.T) {
		pong := make(chan string, 1)
		c := dial(t, s, "/ws", "", func(c *websocket.Conn) {
			c.SetPongHandler(func(p string) error { pong <- p; return nil })
		})
		if err := c.WriteControl(websocket.PingMessage, []byte("abc"), time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-pong:
			if p != "abc" {
				t.Fatalf("pong %q", p)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("no pong")
		}
	})
	t.Run("reset", func(t *testing.T) {
		c := dial(t, s, "/ws", "reset")
		sc, err := s.WaitConn(ctxTimeout(t, 2*time.Second), "reset")
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Reset(); err != nil {
			t.Fatal(err)
		}
		if code, text := closeCode(t, c, 2*time.Second); code != 1006 {
			t.Fatalf("want an abrupt end, got %d %s", code, text)
		}
		if err := sc.Reset(); !errors.Is(err, ErrClosed) {
			t.Fatalf("second reset: %v", err)
		}
		if err := sc.SendText([]byte("x")); !errors.Is(err, ErrClosed) {
			t.Fatalf("send after close: %v", err)
		}
	})
	t.Run("client close", func(t *testing.T) {
		c := dial(t, s, "/ws", "bye")
		sc, _ := s.WaitConn(ctxTimeout(t, 2*time.Second), "bye")
		if err := c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "done"), time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if code, _ := closeCode(t, c, 2*time.Second); code != 1000 {
			t.Fatalf("echo %d", code)
		}
		<-sc.Done()
		if st := sc.stats(); st.CloseCode != 1000 || st.ClosedBy != "client" || st.CloseReason != "done" {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestLifetime(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 14, Lifetime: 300 * time.Millisecond}})
	c := dial(t, s, "/ws", "")
	code, _ := closeCode(t, c, 3*time.Second)
	if code != 1001 {
		t.Fatalf("close %d", code)
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	s, err := New(Config{Replay: wire.Replay{Seed: 15, Speed: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	var clients []*client
	for range 3 {
		clients = append(clients, dial(t, s, "/stream?streams=btcusdt@trade/btcusdt@depth@100ms", ""))
	}
	// one client that does not answer the close handshake
	raw, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte("GET /ws/btcusdt@trade HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(raw).ReadString('\n'); err != nil || !strings.Contains(line, "101") {
		t.Fatalf("raw handshake: %q %v", line, err)
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close took %v", d)
	}
	for _, c := range clients {
		if code, _ := closeCode(t, c, 2*time.Second); code != 1001 {
			t.Fatalf("client saw %d", code)
		}
	}
	goleak.VerifyNone(t) // every server goroutine is gone; the clients' readers have returned
	if _, _, err := dialResp(s, "/ws", "", nil); err == nil {
		t.Fatal("dial after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

var eightDecimals = regexp.MustCompile(`^-?[0-9]+\.[0-9]{8}$`)
