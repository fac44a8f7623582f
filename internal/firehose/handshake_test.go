package firehose

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// rawHandshake sends an upgrade request with the given key and version on a
// new loopback connection and returns the response's status.
func rawHandshake(t *testing.T, addr, key, version string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET /stream?streams=x HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: " + version + "\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestFailedHandshakeNotCounted: with Conns 2, handshakes that fail (a bad
// Sec-WebSocket-Key: 400, version 12: 426) use up no connection: both real
// clients that come after them are served, and only then is the firehose
// done.
func TestFailedHandshakeNotCounted(t *testing.T) {
	sc, _ := Lookup("kline")
	s := start(t, sc, 50, 2)
	if got := rawHandshake(t, s.Addr(), "not-base64-of-16-bytes", "13"); got != http.StatusBadRequest {
		t.Errorf("bad key: status %d, want 400", got)
	}
	if got := rawHandshake(t, s.Addr(), "dGhlIHNhbXBsZSBub25jZQ==", "12"); got != http.StatusUpgradeRequired {
		t.Errorf("version 12: status %d, want 426", got)
	}
	select {
	case <-s.Done():
		t.Fatal("done after two failed handshakes, before serving a client")
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 2 {
		c, err := rawws.Dial(ctx, s.URL(), rawws.Options{})
		if err != nil {
			t.Fatalf("client %d: %v (stats %+v)", i, err, s.Stats())
		}
		counts, err := c.Drain()
		c.Close()
		if err != nil || counts.Messages != 50 {
			t.Fatalf("client %d: %+v, %v; want 50 messages", i, counts, err)
		}
	}
	waitDone(t, s)
	st := s.Stats()
	if st.Served != 2 || len(st.Conns) != 2 || st.Failed != 2 {
		t.Errorf("served %d, %d connections in the stats, %d failed handshakes; want 2, 2, 2", st.Served, len(st.Conns), st.Failed)
	}
	for _, cs := range st.Conns {
		if cs.Messages != 50 || cs.Err != "" {
			t.Errorf("connection %d: %d messages, err %q; want 50 and none", cs.ID, cs.Messages, cs.Err)
		}
	}
}
