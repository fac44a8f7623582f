package worker

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// bogusAcceptServer answers every upgrade on loopback with 101 Switching
// Protocols, the right Upgrade and Connection headers and a wrong
// Sec-WebSocket-Accept, then ends its side. It returns its address and the number
// of upgrades it answered.
func bogusAcceptServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				n.Add(1)
				_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
					"Sec-WebSocket-Accept: bm90IHRoZSBrZXk=\r\n\r\n")
				_ = c.(*net.TCPConn).CloseWrite() // nothing follows the answer (coder reads the body until EOF)
				_, _ = io.Copy(io.Discard, c)     // until the client gives up
			})
		}
	})
	return ln.Addr().String(), &n
}

// TestBadAcceptIsNotAStatus: a 101 with a wrong Sec-WebSocket-Accept is a
// failed handshake of its own cause, bad_accept, in every library (gorilla
// and fasthttp report the 101 they refused; gobwas, coder and gws an error
// naming the header), counted as "accept" in the slot's account, never as a
// refusal with status 101.
func TestBadAcceptIsNotAStatus(t *testing.T) {
	addr, _ := bogusAcceptServer(t)
	for _, tr := range transport.All() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := tr.Dial(ctx, transport.DialConfig{URL: "ws://" + addr + "/ws", HandshakeTimeout: 5 * time.Second})
		cancel()
		if err == nil {
			conn.Abort()
			t.Errorf("%s: accepted a wrong Sec-WebSocket-Accept", tr.Name())
			continue
		}
		code, cause, detail := classify(err, false, nil)
		if code != 101 || cause != causeBadAccept || failKey(code, cause) != "accept" {
			t.Errorf("%s: %v classified %d %s %q (key %q), want 101 %s (key accept)", tr.Name(), err, code, cause, detail,
				failKey(code, cause), causeBadAccept)
		}
	}
}

// TestWorkerCountsBadAccept: a worker slot against that server counts every
// failed dial in its account as "accept" (the table's "accept×n"), and each
// dial_error event says bad_accept with code 101.
func TestWorkerCountsBadAccept(t *testing.T) {
	addr, answered := bogusAcceptServer(t)
	tr, err := transport.Lookup("gorilla")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	plan := &wire.Plan{Version: wire.PlanVersion, RunID: "accept", Column: wire.LibraryColumn(tr.Name()), Target: "ws://" + addr, TimeUnit: "MICROSECOND",
		Start: now, End: now.Add(time.Minute), PingInterval: time.Second, PongTimeout: 10 * time.Second,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, HandshakeTimeout: 2 * time.Second,
		StallFactor: 10, StallMin: 3 * time.Second, StallRealTime: time.Minute, UnrepairableDial: 100, SubsEvery: 10,
		Slots: []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade"}}}}
	var (
		mu     sync.Mutex
		errs   []wire.Event
		slots  []wire.SlotStat
		failed = make(chan struct{})
		once   sync.Once
	)
	w := newTestWorker(t, plan, tr, func(f *wire.Frame) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case f.Type == wire.FrameEvent && f.Ev.Kind == wire.EventDialError:
			errs = append(errs, *f.Ev)
			if len(errs) >= 3 {
				once.Do(func() { close(failed) })
			}
		case f.Type == wire.FrameSubs && f.Slots != nil:
			slots = f.Slots
		}
	})
	w.start()
	select {
	case <-failed:
	case <-time.After(20 * time.Second):
		t.Error("no 3 failed dials in 20 s")
	}
	w.stop(t)
	mu.Lock()
	defer mu.Unlock()
	for _, e := range errs {
		if e.Code != 101 || len(e.Detail) < len(causeBadAccept) || e.Detail[:len(causeBadAccept)] != causeBadAccept {
			t.Errorf("dial_error %d %q, want code 101 and cause %s", e.Code, e.Detail, causeBadAccept)
		}
	}
	if len(slots) != 1 {
		t.Fatalf("%d slot accounts, want 1", len(slots))
	}
	st := slots[0]
	if st.DialFails < 3 || st.DialFails != int64(len(errs)) || len(st.Statuses) != 1 || st.Statuses["accept"] != st.DialFails ||
		st.Dials != st.DialFails || answered.Load() < st.DialFails {
		t.Errorf("slot account %+v after %d dial errors (%d answered): want every failed dial counted as accept",
			st, len(errs), answered.Load())
	}
}
