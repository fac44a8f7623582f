package replay

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tinylib/msgp/msgp"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/wire"
)

type frame struct {
	typ int
	p   []byte
}

// readFrames reads until it holds n data messages (or fails after a deadline).
func readFrames(t *testing.T, c *websocket.Conn, n int) []frame {
	t.Helper()
	var out []frame
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for len(out) < n {
		typ, p, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("after %d messages: %v", len(out), err)
		}
		out = append(out, frame{typ, p})
	}
	return out
}

// TestEncodingNegotiation dials with each set of offered subprotocols and
// checks the answer, the frame type, and that the events are the JSON
// connection's events, transcoded: the same bytes codec.Append makes of them.
func TestEncodingNegotiation(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 5, Speed: 20}})
	const streams = "btcusdt@aggTrade/btcusdt@depth@100ms/ethusdt@depth20@100ms/btcusdt@kline_1s"
	path := "/stream?streams=" + streams
	// The JSON reference connection comes first, so every later one's first
	// event is among its events.
	ref, _, err := dialResp(s, path, "ref", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, tc := range []struct {
		name    string
		offered []string
		enc     codec.Encoding
		answer  string
	}{
		{"none", nil, codec.JSON, ""},
		{"unknown", []string{"chat", "soak.msgpack.v9"}, codec.JSON, ""},
		{"json", []string{"soak.json.v1"}, codec.JSON, "soak.json.v1"},
		{"msgpack", []string{"chat", "soak.msgpack.v1"}, codec.Msgpack, "soak.msgpack.v1"},
		{"packed", []string{"soak.packed.v1", "soak.msgpack.v1"}, codec.Packed, "soak.packed.v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, Subprotocols: tc.offered}
			c, _, err := dialResp(s, path, tc.name, &d)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Subprotocol() != tc.answer {
				t.Fatalf("answered %q, want %q", c.Subprotocol(), tc.answer)
			}
			got := readFrames(t, c, 40)
			want := websocket.TextMessage
			if tc.enc.Binary() {
				want = websocket.BinaryMessage
			}
			// The reference connection is ahead of or behind this one by
			// its backlog: read it until this one's first event comes.
			var refs []frame
			first := -1
			for first < 0 && len(refs) < 5000 {
				r := readFrames(t, ref, 1)[0]
				e, err := codec.Append(nil, r.p, tc.enc)
				if err != nil {
					t.Fatal(err)
				}
				refs = append(refs[:0], r)
				if bytes.Equal(e, got[0].p) {
					first = 0
				}
			}
			if first < 0 {
				t.Fatalf("first message (%d bytes) is none of the reference's events transcoded", len(got[0].p))
			}
			for i, f := range got {
				if f.typ != want {
					t.Fatalf("message %d: frame type %d, want %d", i, f.typ, want)
				}
				if first+i >= len(refs) {
					refs = append(refs, readFrames(t, ref, first+i+1-len(refs))...)
				}
				e, _ := codec.Append(nil, refs[first+i].p, tc.enc)
				if !bytes.Equal(e, f.p) {
					t.Fatalf("message %d differs from the reference's event %d transcoded", i, first+i)
				}
				if tc.enc.Binary() {
					v, rest, err := msgp.ReadIntfBytes(f.p)
					m, ok := v.(map[string]any)
					if err != nil || len(rest) > 0 || !ok || m["stream"] == nil || m["data"] == nil {
						t.Fatalf("message %d: not a msgpack combined event: %v %v", i, err, v)
					}
				}
			}
			for _, cs := range s.Stats().Conns {
				if cs.Tag == tc.name && cs.Subprotocol != tc.answer {
					t.Errorf("stats say subprotocol %q, want %q", cs.Subprotocol, tc.answer)
				}
			}
			// Control replies stay JSON text whatever the encoding.
			if err := c.WriteMessage(websocket.TextMessage, []byte(`{"method":"LIST_SUBSCRIPTIONS","id":7}`)); err != nil {
				t.Fatal(err)
			}
			for {
				fs := readFrames(t, c, 1)
				if fs[0].typ == websocket.TextMessage && strings.HasPrefix(string(fs[0].p), `{"result"`) {
					break
				}
			}
		})
	}
}
