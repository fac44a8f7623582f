package replay

import (
	"crypto/tls"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestResetUnderTLS: a reset on a wss:// connection is an RST of the TCP
// socket beneath, not a TLS close_notify followed by a FIN, so a reset fault
// means the same thing over ws:// and wss://.
func TestResetUnderTLS(t *testing.T) {
	ca, err := cert.New(time.Hour, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Config{Replay: wire.Replay{Seed: 1}, TLS: ca.ServerTLS()})
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	c, _, err := dialResp(s, "/ws", "tls-reset", &d)
	if err != nil {
		t.Fatal(err)
	}
	cl := startClient(t, c)
	sc, err := s.WaitConn(ctxTimeout(t, 2*time.Second), "tls-reset")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Reset(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-cl.end:
		cl.end <- err
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("want a connection reset, got %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("connection not ended within 3s")
	}
}
