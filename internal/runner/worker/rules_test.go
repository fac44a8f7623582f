package worker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/runner/controller"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestBinanceConnectionRules runs every library's worker, from a plan built from a profile,
// against the replay server with Binance's connection limits on (at most 5 incoming
// messages per second — SUBSCRIBE, ping and pong alike — and at most 1024 streams per
// connection, either closes the connection with 1008). A group of 1,100 streams subscribed
// by message is split into 1024 + 76; the slots subscribe them all while the client and
// the server each ping every second, so that SUBSCRIBEs, pings and pongs compete for the
// same five per second. Not one request may be refused, no connection
// closed by the server, and every server ping must be answered with its own payload.
func TestBinanceConnectionRules(t *testing.T) {
	if testing.Short() {
		t.Skip("drives real connections for several seconds")
	}
	var syms []string
	for i := range 1100 {
		syms = append(syms, fmt.Sprintf("s%04dusdt", i))
	}
	text := "name: rules\nsymbols: [" + strings.Join(syms, ", ") + "]\n" +
		"keepalive: {interval: 1s, timeout: 5s}\n" +
		"groups:\n  - name: many\n    streams: ['{symbol}@aggTrade']\n    subscribe: message\n"
	p, err := profile.Parse("rules.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.New(replay.Config{Replay: wire.Replay{Seed: 5, Rates: map[string]float64{"aggTrade": 0.2}, PingInterval: time.Second, PongTimeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	plan, err := controller.BuildPlan(p, "rules", srv.URL(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Slots) != 2 || len(plan.Slots[0].Streams) != 1024 || len(plan.Slots[1].Streams) != 76 {
		t.Fatalf("plan: %d slots, want 1024 + 76 streams", len(plan.Slots))
	}
	now := time.Now()
	plan.Start, plan.End = now, now.Add(time.Minute)

	var wg sync.WaitGroup
	for _, tr := range transport.All() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(tr.Name(), func(t *testing.T) { testConnectionRules(t, tr, *plan, srv) })
		}()
	}
	wg.Wait()
}

func testConnectionRules(t *testing.T, tr transport.Transport, plan wire.Plan, srv *replay.Server) {
	plan.Column = wire.LibraryColumn(tr.Name())
	pr, pw := io.Pipe()
	w, err := New(&plan, tr, pw, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		events  []wire.Event
		replies = map[int][]string{} // slot -> control replies
	)
	w.tap = func(slot int, p []byte) {
		if bytes.HasPrefix(p, []byte(`{"result"`)) || bytes.HasPrefix(p, []byte(`{"error"`)) || bytes.HasPrefix(p, []byte(`{"code"`)) {
			mu.Lock()
			replies[slot] = append(replies[slot], string(p))
			mu.Unlock()
		}
	}
	read := make(chan error, 1)
	go func() {
		read <- wire.ReadFrames(pr, func(f *wire.Frame) error {
			if f.Type == wire.FrameEvent {
				mu.Lock()
				events = append(events, *f.Ev)
				mu.Unlock()
			}
			return nil
		})
	}()
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- w.Run(ctx) }()

	// Until both slots have subscribed and been answered, and the server has pinged each
	// connection three times.
	tags := []string{tr.Name() + "/0/0", tr.Name() + "/1/0"}
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		subscribed := 0
		for _, e := range events {
			if e.Kind == wire.EventSubscribed {
				subscribed++
			}
		}
		if len(replies[0]) < 6 || len(replies[1]) < 1 { // the answers to the last SUBSCRIBEs
			subscribed = 0
		}
		mu.Unlock()
		pinged := 0
		for _, c := range srv.Stats().Conns {
			for _, tag := range tags {
				if c.Tag == tag && c.PingsSent >= 3 {
					pinged++
				}
			}
		}
		if subscribed == 2 && pinged == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after 15 s: %d of 2 slots subscribed, %d of 2 connections pinged 3 times", subscribed, pinged)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Errorf("worker: %v", err)
	}
	pw.Close()
	if err := <-read; err != nil {
		t.Errorf("frames: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, e := range events {
		switch e.Kind {
		case wire.EventDisconnected, wire.EventDialError: // a stall abort is a disconnected event (cause stall_abort)
			t.Errorf("%s event: %+v", e.Kind, e)
		}
	}
	for slot, n := range []int{1024, 76} {
		want := (n + 199) / 200 // SUBSCRIBE messages of 200 streams
		ok := 0
		for _, r := range replies[slot] {
			if strings.HasPrefix(r, `{"result":null,`) {
				ok++
			} else {
				t.Errorf("slot %d: the server refused a request: %s", slot, r)
			}
		}
		if ok != want {
			t.Errorf("slot %d: %d SUBSCRIBE accepted, want %d", slot, ok, want)
		}
	}
	// The server records a close once it has read it: wait for both ends, on a busy machine.
	stats := srv.Stats()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); stats = srv.Stats() {
		open := 0
		for _, c := range stats.Conns {
			if strings.HasPrefix(c.Tag, tr.Name()+"/") && c.ClosedBy == "" {
				open++
			}
		}
		if open == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	conns := 0
	for _, c := range stats.Conns {
		if !strings.HasPrefix(c.Tag, tr.Name()+"/") {
			continue
		}
		conns++
		want := map[string]int{tags[0]: 1024, tags[1]: 76}[c.Tag]
		if len(c.Streams) != want {
			t.Errorf("%s: %d streams subscribed on the server, want %d", c.Tag, len(c.Streams), want)
		}
		// Closed by the worker at the end, not by the server for breaking a rule. (The code
		// may be 1006: gws closes its socket right after its close frame, and a server still
		// writing data then sees a reset.)
		if c.ClosedBy != "client" {
			t.Errorf("%s: closed by %q with %d %q, want closed by the client", c.Tag, c.ClosedBy, c.CloseCode, c.CloseReason)
		}
		// Only a ping still in flight when the client closed may go unanswered.
		if c.PingsSent < 3 || c.PongsReceived < c.PingsSent-1 {
			t.Errorf("%s: %d server pings, %d answered with their payload", c.Tag, c.PingsSent, c.PongsReceived)
		}
	}
	if conns != 2 {
		t.Errorf("%d connections, want 2", conns)
	}
}

// TestCtlBudget: what the worker starts leaves at least ctlGap after the last message, at
// most ctlMax messages fall within any ctlWindow, and a noted pong counts like any other.
func TestCtlBudget(t *testing.T) {
	var b ctlBudget
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		pong bool          // note a pong instead of taking
		at   time.Duration // since t0
		wait time.Duration // take's answer
	}{
		{at: 0},
		{at: time.Millisecond, wait: ctlGap - time.Millisecond}, // too close to the last
		{at: ctlGap}, {at: 2 * ctlGap}, {at: 3 * ctlGap},
		{at: 4 * ctlGap}, // = ctlWindow after the first: it has left the window
		{pong: true, at: 4*ctlGap + time.Millisecond},
		// Last four: 2g, 3g, 4g and the pong at 4g+1ms; the gap after the pong is kept, then
		// the window of the oldest (2g) must pass.
		{at: 4*ctlGap + 2*time.Millisecond, wait: ctlGap - time.Millisecond},
		{at: 5*ctlGap + time.Millisecond, wait: 2*ctlGap + ctlWindow - 5*ctlGap - time.Millisecond},
		{at: 2*ctlGap + ctlWindow},
	}
	for i, s := range steps {
		if s.pong {
			b.note(at(s.at))
			continue
		}
		if d := b.take(at(s.at)); d != s.wait {
			t.Fatalf("step %d (t0+%v): wait %v, want %v", i, s.at, d, s.wait)
		}
	}
	b.reset()
	if d := b.take(t0); d != 0 {
		t.Fatalf("after reset: wait %v", d)
	}
}
