package worker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestWireBytesEqualServer: for every library and compression setting, the
// frame bytes a worker counts for a connection equal what the replay server
// wrote to it (the server closes it, so the client reads its last frame), the
// connected event names what was negotiated, and the per-second frames carry
// the total. Under compression on the worker asks for msgpack too: the
// detail is then the extensions answer, "; ", the subprotocol.
func TestWireBytesEqualServer(t *testing.T) {
	if testing.Short() {
		t.Skip("drives real connections")
	}
	for _, tr := range transport.All() {
		for _, mode := range []wire.Compression{wire.CompressionOff, wire.CompressionOn, wire.CompressionNoContextTakeover} {
			t.Run(tr.Name()+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				srv := listenReplay(t, replay.Config{Replay: wire.Replay{Seed: 1, Start: time.Now().Add(time.Hour), Symbols: []string{"btcusdt"},
					Compression: wire.CompressionOn}, MaxControlPerSec: 1000})
				plan := localPlan("wire", tr.Name(), srv.URL())
				plan.Compression = mode
				plan.Slots = []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade"}}}
				if mode == wire.CompressionOn {
					plan.Encoding = "msgpack" // the trades below are sent as text: read as JSON all the same
				}
				var (
					mu        sync.Mutex
					events    []wire.Event
					lastTotal int64
				)
				tw := newTestWorker(t, plan, tr, func(f *wire.Frame) {
					mu.Lock()
					defer mu.Unlock()
					switch f.Type {
					case wire.FrameEvent:
						events = append(events, *f.Ev)
					case wire.FrameSec:
						lastTotal = f.Stat.WireBytesTotal
					}
				})
				tw.start()
				defer tw.stop(t)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := srv.WaitConn(ctx, tr.Name()+"/0/0")
				if err != nil {
					t.Fatal(err)
				}
				const n = 300
				for i := range n {
					if err := c.SendText(trade(int64(i+1), "")); err != nil {
						t.Fatal(err)
					}
				}
				s := tw.slots[0]
				if err := waitFor(5*time.Second, "messages", func() bool { return s.msgs.Load() >= n }); err != nil {
					t.Fatal(err)
				}
				if err := c.Close(1001, "going away"); err != nil {
					t.Fatal(err)
				}
				var connected string
				if err := waitFor(5*time.Second, "disconnected", func() bool {
					mu.Lock()
					defer mu.Unlock()
					for _, e := range events {
						if e.Kind == wire.EventConnected && connected == "" {
							connected = e.Detail + " " // the answer ("" when none) as it was
						}
						if e.Kind == wire.EventDisconnected {
							return true
						}
					}
					return false
				}); err != nil {
					t.Fatal(err)
				}
				s.wmu.Lock()
				client := s.wireDone // the first connection's bytes: it has ended
				s.wmu.Unlock()
				var server int64 = -1
				for _, st := range srv.Stats().Conns {
					if st.Tag == tr.Name()+"/0/0" {
						server = st.WireBytes
					}
				}
				if client != server {
					t.Fatalf("worker read %d frame bytes, server wrote %d", client, server)
				}
				negotiated := strings.Contains(connected, "permessage-deflate")
				if negotiated != mode.Enabled() {
					t.Fatalf("connected with %q, compression %s", connected, mode)
				}
				if sp := strings.HasSuffix(connected, "; subprotocol soak.msgpack.v1 "); sp != (plan.Encoding == "msgpack") {
					t.Fatalf("connected with %q, encoding %q: want the extensions answer, then \"; subprotocol soak.msgpack.v1\"", connected, plan.Encoding)
				}
				if err := waitFor(5*time.Second, "a second's total", func() bool {
					mu.Lock()
					defer mu.Unlock()
					return lastTotal >= client
				}); err != nil {
					t.Fatal(err)
				}
				payload := s.bytes.Load()
				t.Logf("%s: %d messages, %d payload bytes, %d frame bytes (%.2f), negotiated %q",
					mode, s.msgs.Load(), payload, client, float64(client)/float64(payload), strings.TrimSpace(connected))
				// Small messages each compressed alone gain little (~0.77 here);
				// with the window kept across messages far more.
				limit := 1.05
				switch {
				case strings.Contains(connected, "server_no_context_takeover"):
					limit = 0.9
				case negotiated:
					limit = 0.5
				}
				if r := float64(client) / float64(payload); r > limit {
					t.Fatalf("frame bytes / payload %.2f, want at most %.2f", r, limit)
				}
			})
		}
	}
}
