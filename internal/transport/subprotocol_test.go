package transport_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

// protoServer answers each connection's upgrade with the first offered
// subprotocol it knows (none if none), then sends one message, binary if a
// subprotocol was chosen (its payload the name), text "none" otherwise, and
// closes 1000.
func protoServer(t *testing.T, known ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { _ = ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			serveProto(conn, known)
		}
	}()
	return "ws://" + ln.Addr().String() + "/"
}

func serveProto(conn net.Conn, known []string) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	chosen := ""
	for _, v := range req.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); chosen == "" && slices.Contains(known, p) {
				chosen = p
			}
		}
	}
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Accept: " + acceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n"
	if chosen != "" {
		resp += "Sec-WebSocket-Protocol: " + chosen + "\r\n"
	}
	var out []byte
	if chosen != "" {
		out = appendFrame(out, true, opBinary, []byte(chosen))
	} else {
		out = appendFrame(out, true, opText, []byte("none"))
	}
	out = appendFrame(out, true, opClose, closePayload(1000, ""))
	if _, err := io.WriteString(conn, resp+"\r\n"); err != nil {
		return
	}
	if _, err := conn.Write(out); err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, br) // until the client's close and EOF
}

type oneMsg struct {
	text bool
	p    string
}

func (m *oneMsg) OnMessage(text bool, p []byte) { m.text, m.p = text, string(p) }
func (m *oneMsg) OnPing([]byte)                 {}
func (m *oneMsg) OnPong([]byte)                 {}

// TestSubprotocols: every adapter offers DialConfig.Subprotocols, reports the
// server's choice as its Conn's Subprotocol, and delivers the binary message
// as binary. When the server knows none of them, every library but gws goes
// on without a subprotocol; gws fails the dial, as the library checks.
func TestSubprotocols(t *testing.T) {
	url := protoServer(t, "soak.msgpack.v1", "soak.packed.v1")
	for _, tr := range transport.All() {
		for _, tc := range []struct {
			name    string
			offered []string
			want    string
		}{
			{"none", nil, ""},
			{"chosen", []string{"chat", "soak.packed.v1", "soak.msgpack.v1"}, "soak.packed.v1"},
			{"unknown", []string{"soak.msgpack.v9"}, ""},
		} {
			t.Run(tr.Name()+"/"+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := tr.Dial(ctx, transport.DialConfig{URL: url, NetDial: (&net.Dialer{}).DialContext, Subprotocols: tc.offered})
				if tr.Name() == "gws" && tc.name == "unknown" {
					if err == nil {
						_ = c.Abort()
						t.Fatal("gws dialled without the subprotocol it offered")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Abort()
				if _, ok := c.(transport.Negotiated); !ok {
					t.Fatal("Conn does not implement Negotiated")
				}
				if got := transport.SubprotocolOf(c); got != tc.want {
					t.Fatalf("Subprotocol() = %q, want %q", got, tc.want)
				}
				var m oneMsg
				err = c.Run(&m)
				var ce *transport.CloseError
				if !errors.As(err, &ce) || ce.Code != 1000 {
					t.Fatalf("Run: %v, want close 1000", err)
				}
				if tc.want != "" && (m.text || m.p != tc.want) || tc.want == "" && (!m.text || m.p != "none") {
					t.Fatalf("got text=%v %q", m.text, m.p)
				}
			})
		}
	}
}
