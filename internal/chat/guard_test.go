package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// What the servers guarantee against a hostile client: text is UTF-8 (else
// close 1007), a message over the read limit closes with 1009, a name
// outside the rule is refused at join with 1008, and the counts add up.

// dialRaw connects a client named name (escaped into the query; "" sends no
// name at all) to s, bounded in time.
func dialRaw(t *testing.T, s addrer, name string) *rawws.Conn {
	t.Helper()
	u := "ws://" + s.Addr() + "/"
	if name != "" {
		u += "?name=" + url.QueryEscape(name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rawws.Dial(ctx, u, rawws.Options{})
	if err != nil {
		t.Fatalf("dial %q: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Conn.Close() })
	return c
}

// next reads c's next data message within 10 s.
func next(t *testing.T, c *rawws.Conn) (string, error) {
	t.Helper()
	_ = c.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.Conn.SetReadDeadline(time.Time{})
	m, err := c.Next(true)
	return string(m.Payload), err
}

// closedWith reads c until the server's close frame and returns its code
// and reason; a data message on the way is an error.
func closedWith(t *testing.T, c *rawws.Conn) (int, error) {
	t.Helper()
	p, err := next(t, c)
	if err == nil {
		return 0, fmt.Errorf("got the message %q, want a close", trim([]byte(p)))
	}
	if !errors.Is(err, io.EOF) {
		return 0, err
	}
	return c.Counts().CloseCode, nil
}

// readyRoom dials n clients named names into s and reads their ready.
func readyRoom(t *testing.T, s addrer, names ...string) []*rawws.Conn {
	t.Helper()
	var cs []*rawws.Conn
	for _, n := range names {
		cs = append(cs, dialRaw(t, s, n))
	}
	for i, c := range cs {
		if p, err := next(t, c); err != nil || p != Ready {
			t.Fatalf("%s: first message %q, %v; want %q", names[i], p, err, Ready)
		}
	}
	return cs
}

// send writes frames (already framed, masked) on c.
func send(t *testing.T, c *rawws.Conn, frames []byte) {
	t.Helper()
	if _, err := c.Conn.Write(frames); err != nil {
		t.Fatal(err)
	}
}

// TestInvalidUTF8Closed: a text message that is not UTF-8 (61 ff fe 62)
// closes its sender with 1007 (RFC 6455 8.1) and reaches nobody: the next
// message the others read is the one sent after it, and the server counts
// one broadcast, that one. The room goes on.
func TestInvalidUTF8Closed(t *testing.T) {
	for _, lib := range Libs {
		t.Run(lib, func(t *testing.T) {
			s := start(t, Config{Lib: lib, N: 3})
			cs := readyRoom(t, s, "a", "b", "c")
			send(t, cs[0], rawws.AppendFrame(nil, rawws.OpText, true, []byte{0x61, 0xff, 0xfe, 0x62}, true))
			code, err := closedWith(t, cs[0])
			if err != nil || code != CloseInvalidText {
				t.Fatalf("sender: close %d, %v; want %d", code, err, CloseInvalidText)
			}
			send(t, cs[1], rawws.AppendFrame(nil, rawws.OpText, true, []byte("after"), true))
			for _, c := range cs[1:] {
				if p, err := next(t, c); err != nil || p != "b: after" {
					t.Errorf("next message %q, %v; want %q (nothing of the invalid one)", p, err, "b: after")
				}
			}
			st := fetchStats(t, s, "5s")
			if st.Broadcasts != 1 || st.Conns != 2 {
				t.Errorf("stats %+v: want 1 broadcast (the valid one), 2 clients left in the room", st)
			}
		})
	}
}

// TestFragmentedUTF8Relayed: a text message whose UTF-8 sequence spans two
// fragments (c3 | a9: "é") is valid and relayed whole.
func TestFragmentedUTF8Relayed(t *testing.T) {
	for _, lib := range Libs {
		t.Run(lib, func(t *testing.T) {
			s := start(t, Config{Lib: lib, N: 2})
			cs := readyRoom(t, s, "a", "b")
			f := rawws.AppendFrame(nil, rawws.OpText, false, []byte("caf\xc3"), true)
			f = rawws.AppendFrame(f, rawws.OpContinuation, true, []byte("\xa9!"), true)
			send(t, cs[0], f)
			for _, c := range cs {
				if p, err := next(t, c); err != nil || p != "a: café!" {
					t.Errorf("got %q, %v; want %q", p, err, "a: café!")
				}
			}
		})
	}
}

// TestOversizeClosed1009: a message over the read limit (20 MB, written
// whole before the client reads) closes its sender with 1009 (the close
// frame reaches it: no reset while it was still writing), broadcasts
// nothing, and the room goes on.
func TestOversizeClosed1009(t *testing.T) {
	for _, lib := range Libs {
		t.Run(lib, func(t *testing.T) {
			s := start(t, Config{Lib: lib, N: 2})
			cs := readyRoom(t, s, "a", "b")
			big := rawws.AppendFrame(nil, rawws.OpText, true, make([]byte, 20<<20), true)
			_ = cs[0].Conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
			if _, err := cs[0].Conn.Write(big); err != nil {
				t.Errorf("writing the 20 MB message: %v (the server reset the connection while it was sent)", err)
			}
			code, err := closedWith(t, cs[0])
			if err != nil || code != CloseTooBig {
				t.Errorf("sender: close %d, %v; want %d", code, err, CloseTooBig)
			}
			send(t, cs[1], rawws.AppendFrame(nil, rawws.OpText, true, []byte("after"), true))
			if p, err := next(t, cs[1]); err != nil || p != "b: after" {
				t.Errorf("next message %q, %v; want %q (nothing of the oversize one)", p, err, "b: after")
			}
			if st := fetchStats(t, s, "5s"); st.Broadcasts != 1 {
				t.Errorf("stats %+v: want 1 broadcast", st)
			}
		})
	}
}

// TestNames: a name outside the rule, or one already in the room, is
// refused at join: the upgrade succeeds and the first frame is a close 1008
// whose reason says what is wrong; the room keeps its clients. Names the
// rule allows join.
func TestNames(t *testing.T) {
	bad := []struct{ name, reason string }{
		{"", "no name"},
		{"a: b", "':'"},
		{"x\ny", "control character"},
		{"tab\there", "control character"},
		{"del\x7f", "control character"},
		{"bad\xffutf8", "UTF-8"},
		{strings.Repeat("n", MaxNameLen+1), fmt.Sprint(MaxNameLen)},
		{"dup", "already in the room"},
	}
	for _, lib := range Libs {
		t.Run(lib, func(t *testing.T) {
			s := start(t, Config{Lib: lib, N: 3})
			in := readyRoom(t, s, "dup", "Zoë-1", strings.Repeat("n", MaxNameLen))
			for _, tc := range bad {
				c := dialRaw(t, s, tc.name)
				code, err := closedWith(t, c)
				if err != nil || code != CloseBadName {
					t.Errorf("name %q: close %d, %v; want %d", tc.name, code, err, CloseBadName)
					continue
				}
				if r := c.Counts().CloseReason; !strings.Contains(r, tc.reason) {
					t.Errorf("name %q: close reason %q, want it to say %q", tc.name, r, tc.reason)
				}
			}
			st := fetchStats(t, s, "")
			if st.Conns != 3 || st.Joined != 3 || st.Rejected != int64(len(bad)) {
				t.Errorf("stats %+v: want 3 clients in, 3 joined, %d rejected", st, len(bad))
			}
			send(t, in[1], rawws.AppendFrame(nil, rawws.OpText, true, []byte("hi"), true))
			for _, c := range in {
				if p, err := next(t, c); err != nil || p != "Zoë-1: hi" {
					t.Errorf("got %q, %v; want %q", p, err, "Zoë-1: hi")
				}
			}
		})
	}
}

// TestCountsAddUp: a dropped client is a leave too, so that at rest
// joined - left == conns (the room of an issue said "joined 2, left 0,
// conns 0" after two drops).
func TestCountsAddUp(t *testing.T) {
	r := NewRoom(4, 4)
	var ms []*member
	for _, name := range []string{"a", "b", "c"} {
		m := r.newMember(name, discard{}, nil)
		if err := r.join(m); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	r.drop(ms[0])
	r.drop(ms[1])
	r.leave(ms[1]) // its connection ends after the drop: not a second leave
	joined, left, drops := r.joined.Load(), r.left.Load(), r.drops.Load()
	r.mu.RLock()
	conns := len(r.members)
	r.mu.RUnlock()
	if joined != 3 || left != 2 || drops != 2 || conns != 1 {
		t.Errorf("joined %d, left %d, drops %d, conns %d; want 3, 2, 2, 1", joined, left, drops, conns)
	}
	r.leave(ms[2])
	if got := r.joined.Load() - r.left.Load(); got != 0 {
		t.Errorf("joined - left = %d with nobody in the room", got)
	}
}
