package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// start runs a chat server of lib on loopback for the test.
func start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// addrer is a chat server under test: one of ours, or the Node reference.
type addrer interface{ Addr() string }

// fetchStats reads the server's /_stats over HTTP, as a foreign client would.
func fetchStats(t *testing.T, s addrer, settle string) Stats {
	t.Helper()
	url := "http://" + s.Addr() + StatsPath
	if settle != "" {
		url += "?settle=" + settle
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRoom: N clients, R rounds of K messages each: every client receives
// every broadcast exactly once and in each sender's order (RunLoad checks
// it), and the deliveries the clients counted equal the server's own count
// of writes, exactly.
func TestRoom(t *testing.T) {
	for _, lib := range Libs {
		for _, strategy := range Strategies {
			if CheckStrategy(lib, strategy) != nil {
				continue // coder and nbio have no best
			}
			t.Run(lib+"/"+strategy, func(t *testing.T) { testRoom(t, lib, strategy) })
		}
	}
}

func testRoom(t *testing.T, lib, strategy string) {
	const n, rounds, k = 8, 20, 3
	s := start(t, Config{Lib: lib, N: n, Strategy: strategy})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := RunLoad(ctx, LoadConfig{URL: s.URL(), N: n, Rounds: rounds, PerRound: k, Payload: 40, RoundTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := fetchStats(t, s, "5s")
	want := int64(n * n * rounds * k)
	if res.Deliveries != want || st.Deliveries != want || !st.Settled {
		t.Errorf("deliveries: clients %d, server %d (settled %v); want %d", res.Deliveries, st.Deliveries, st.Settled, want)
	}
	if res.Sent != int64(n*rounds*k) || st.Broadcasts != res.Sent {
		t.Errorf("sent %d, server broadcast %d; want %d", res.Sent, st.Broadcasts, n*rounds*k)
	}
	if st.Drops != 0 || st.Joined != n || st.Rejected != 0 {
		t.Errorf("stats %+v: want no drop, %d joined, none rejected", st, n)
	}
	if res.P50us <= 0 || res.P99us < res.P50us {
		t.Errorf("latency p50 %v µs, p99 %v µs: want 0 < p50 ≤ p99", res.P50us, res.P99us)
	}
	if st.Strategy != strategy {
		t.Errorf("stats say strategy %q, want %q", st.Strategy, strategy)
	}
}

// TestStrategies: best is refused where a library has none (saying why) and
// an unknown strategy everywhere; every library runs plain.
func TestStrategies(t *testing.T) {
	for _, lib := range Libs {
		what, ok := Best(lib)
		if what == "" {
			t.Errorf("%s: no word on its best strategy", lib)
		}
		if err := CheckStrategy(lib, StrategyBest); (err == nil) != ok {
			t.Errorf("%s best: %v, has one %v", lib, err, ok)
		}
		if err := CheckStrategy(lib, StrategyPlain); err != nil {
			t.Errorf("%s plain: %v", lib, err)
		}
		if _, err := New(Config{Lib: lib, N: 2, Strategy: "fastest"}); err == nil {
			t.Errorf("%s: strategy fastest accepted", lib)
		}
	}
	if got := HasBest(Libs); slices.Contains(got, "coder") || !slices.Contains(got, "gobwas") {
		t.Errorf("HasBest = %v", got)
	}
}

// reader reads a fast client's deliveries in the background.
type reader struct {
	c     *rawws.Conn
	ready chan struct{} // closed when the room's ready came
	got   chan int64    // the sequence numbers of c0's messages, in order
	err   chan error
	name  string
}

func dialClient(t *testing.T, s addrer, name string) *rawws.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rawws.Dial(ctx, "ws://"+s.Addr()+"/?name="+name, rawws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Conn.Close() })
	return c
}

func (r *reader) run(n int) {
	m, err := r.c.Next(true)
	if err == nil && string(m.Payload) != Ready {
		err = fmt.Errorf("%s: first message %q", r.name, trim(m.Payload))
	}
	if err == nil {
		close(r.ready)
	}
	for err == nil {
		if m, err = r.c.Next(true); err != nil {
			break
		}
		from, seq, ok := parseDelivery(m.Payload, n)
		if !ok || from != 0 {
			err = fmt.Errorf("%s: delivery %q", r.name, trim(m.Payload))
			break
		}
		r.got <- seq
	}
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s: closed with %d", r.name, r.c.Counts().CloseCode)
	}
	r.err <- err
}

// TestSlowReaderDropped: a client that never reads is dropped once its
// queue is full, and only it: the others receive every message exactly once,
// in order, and the room goes on.
func TestSlowReaderDropped(t *testing.T) {
	for _, lib := range Libs {
		t.Run(lib, func(t *testing.T) {
			s := start(t, Config{Lib: lib, N: 4, Queue: 16})
			slowReaderDropped(t, s)
			// The dropped client left: the counts add up at rest.
			if st := fetchStats(t, s, "5s"); st.Joined != 4 || st.Left != 1 || st.Joined-st.Left != int64(st.Conns) {
				t.Errorf("joined %d, left %d, conns %d: want 4, 1 (the dropped client), joined - left == conns", st.Joined, st.Left, st.Conns)
			}
		})
	}
}

// slowReaderDropped checks a server of a room of 4 with a queue of 16.
func slowReaderDropped(t *testing.T, s addrer) {
	// A burst of 8 fits a queue of 16: the readers that keep up
	// never fill theirs; the one that never reads does.
	const n, burst = 4, 8
	var readers []*reader
	for i := range n - 1 {
		r := &reader{c: dialClient(t, s, ClientName(i)), ready: make(chan struct{}), got: make(chan int64, 1024), err: make(chan error, 1), name: ClientName(i)}
		readers = append(readers, r)
	}
	slow := dialClient(t, s, "slow") // never reads until dropped
	for _, r := range readers {
		go r.run(n)
	}
	// As the room's protocol has it, a client sends once it got ready: the
	// server sends ready when the last one is in, which can be after that
	// client's handshake returned (seen: fasthttp's room broadcast c0's first
	// message before its ready).
	for _, r := range readers {
		select {
		case <-r.ready:
		case err := <-r.err:
			t.Fatalf("%s: %v", r.name, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no ready within 30 s", r.name)
		}
	}
	payload := strings.Repeat("x", 64<<10)
	var seq int64
	for batch := 0; ; batch++ {
		if batch == 400 { // 400 × 8 × 64 KiB: 200 MiB past a reader that never reads
			t.Fatalf("no drop after %d messages: %+v", seq, fetchStats(t, s, "1s"))
		}
		var frames []byte
		for range burst {
			seq++
			frames = rawws.AppendFrame(frames, rawws.OpText, true, []byte(fmt.Sprint(seq, payload)), true)
		}
		if _, err := readers[0].c.Conn.Write(frames); err != nil {
			t.Fatal(err)
		}
		for _, r := range readers {
			for want := seq - burst + 1; want <= seq; want++ {
				select {
				case got := <-r.got:
					if got != want {
						t.Fatalf("%s: sequence %d, want %d", r.name, got, want)
					}
				case err := <-r.err:
					t.Fatalf("%s: %v", r.name, err)
				case <-time.After(30 * time.Second):
					t.Fatalf("%s: no message %d within 30 s", r.name, want)
				}
			}
		}
		if st := fetchStats(t, s, ""); st.Drops > 0 {
			if st.Drops != 1 || !slices.Equal(st.Dropped, []string{"slow"}) || st.Conns != n-1 {
				t.Fatalf("stats %+v: want exactly the slow client dropped, %d left in the room", st, n-1)
			}
			break
		}
	}
	// The dropped client's connection ends (after what was in flight).
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := slow.Next(false); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) && slow.Counts().CloseCode == 0 && !isConnEnd(err) {
			t.Errorf("dropped client's read ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the dropped client's connection did not end within 30 s")
	}
	// The room goes on: one more message reaches the others exactly once.
	seq++
	if _, err := readers[0].c.Conn.Write(rawws.AppendFrame(nil, rawws.OpText, true, []byte(fmt.Sprint(seq)), true)); err != nil {
		t.Fatal(err)
	}
	for _, r := range readers {
		select {
		case got := <-r.got:
			if got != seq {
				t.Fatalf("%s: sequence %d, want %d", r.name, got, seq)
			}
		case err := <-r.err:
			t.Fatalf("%s: %v", r.name, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no message after the drop", r.name)
		}
	}
	if st := fetchStats(t, s, "5s"); st.Drops != 1 {
		t.Errorf("drops %d after the room went on, want 1", st.Drops)
	}
}

// isConnEnd: a connection that ended without a close frame (reset or EOF mid-frame).
func isConnEnd(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "without a close frame") || strings.Contains(s, "EOF")
}

// TestServerCloseLeaks: after a load run and Close, no goroutine of the
// server (readers, writers, gws's queue, fasthttp's workers) is left, and a
// server closed with clients still in the room ends them too.
func TestServerCloseLeaks(t *testing.T) {
	for _, lib := range Libs {
		t.Run(lib, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			s, err := New(Config{Lib: lib, N: 4})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Listen("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := RunLoad(ctx, LoadConfig{URL: s.URL(), N: 4, Rounds: 3}); err != nil {
				t.Fatal(err)
			}
			// Two clients stay connected while the server closes.
			a, b := dialClient(t, s, "a"), dialClient(t, s, "b")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, c := range []*rawws.Conn{a, b} {
				for {
					if _, err := c.Next(false); err != nil {
						break // closed by the server
					}
				}
				_ = c.Conn.Close()
			}
			http.DefaultClient.CloseIdleConnections()
			goleak.VerifyNone(t, ignore,
				// fasthttp's: the date updater is one per process, for good; the
				// worker pool's cleaner returns after its sleep (10 s) once stopped.
				goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
				goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
		})
	}
}
