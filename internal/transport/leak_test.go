package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
)

// TestNoGoroutineLeak dials, runs and closes every adapter many times, and also runs
// rejected and timed-out handshakes; afterwards no goroutine may be left.
func TestNoGoroutineLeak(t *testing.T) {
	mustOK(t, transport.StartNbio()) // the process's event loop, not a connection's
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	srv, err := newWSServer()
	mustOK(t, err)
	defer srv.Close()
	// The replay server keeps a rejected connection alive (net/http), the raw one closes it.
	rp, err := replay.New(replay.Config{})
	mustOK(t, err)
	defer rp.Close()
	mustOK(t, rp.Listen("127.0.0.1:0"))
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	mustOK(t, err)
	defer silent.Close()

	const rounds = 100
	for _, tr := range transport.All() {
		for i := range rounds {
			tag := fmt.Sprintf("leak-%s-%d", tr.Name(), i)
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			conn, err := tr.Dial(ctx, transport.DialConfig{
				URL:     srv.URL() + "/ws",
				Header:  http.Header{"X-Soak-Conn": {tag}},
				NetDial: (&transport.Dialer{}).DialContext,
			})
			cancel()
			if err != nil {
				t.Fatalf("%s dial %d: %v", tr.Name(), i, err)
			}
			errc := make(chan error, 1)
			go func() { errc <- conn.Run(newRecorder()) }()
			if i%2 == 0 {
				err = conn.Close(1000, "")
			} else {
				err = conn.Abort()
			}
			if err != nil {
				t.Fatalf("%s close %d: %v", tr.Name(), i, err)
			}
			select {
			case <-errc:
			case <-time.After(waitTimeout):
				t.Fatalf("%s: Run did not return after close", tr.Name())
			}
		}
		// A ping still waiting for its pong when the server closes must not
		// outlive the connection (coder's Ping blocks until the pong).
		for i := range 5 {
			tag := fmt.Sprintf("leak-ping-%s-%d", tr.Name(), i)
			conn, err := tr.Dial(context.Background(), transport.DialConfig{URL: srv.URL() + "/ws", Header: http.Header{"X-Soak-Conn": {tag}}})
			mustOK(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			sc, err := srv.WaitConn(ctx, tag)
			cancel()
			mustOK(t, err)
			sc.ignorePings.Store(true)
			errc := make(chan error, 1)
			go func() { errc <- conn.Run(newRecorder()) }()
			mustOK(t, conn.Ping([]byte("unanswered")))
			if i%2 == 0 {
				mustOK(t, sc.Close(1001, "going away"))
			} else {
				mustOK(t, sc.Reset())
			}
			select {
			case <-errc:
			case <-time.After(waitTimeout):
				t.Fatalf("%s: Run did not return after the server's close", tr.Name())
			}
		}
		for i := range 6 {
			url := srv.URL()
			if i%2 == 0 {
				srv.RejectHandshakes(1, http.StatusTooManyRequests, nil)
			} else {
				rp.RejectHandshakes(1, http.StatusTooManyRequests, nil)
				url = rp.URL()
			}
			_, err := tr.Dial(context.Background(), transport.DialConfig{URL: url + "/ws"})
			var he *transport.HandshakeError
			if !errors.As(err, &he) {
				t.Fatalf("%s: rejected dial returned %v", tr.Name(), err)
			}
			start := time.Now()
			_, err = tr.Dial(context.Background(), transport.DialConfig{
				URL:              "ws://" + silent.Addr().String() + "/ws",
				HandshakeTimeout: 100 * time.Millisecond,
			})
			if err == nil {
				t.Fatalf("%s: dial to a silent server succeeded", tr.Name())
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("%s: handshake timeout of 100ms took %v", tr.Name(), d)
			}
		}
	}
}
