package measure

import (
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/store"
)

// TestCheckWire: the slot accounts against the server's per-connection
// counts, summed over attempts: exact when the client read what the server
// wrote before the client's close (the echo unread) or all of it (the echo
// read); any other count is a mismatch, by the bytes it differs.
func TestCheckWire(t *testing.T) {
	server := []store.ServerWire{
		// gorilla slot 0: two attempts, the first closed by the server (all
		// readable), the second by the client (the 13-byte echo after).
		{Tag: "gorilla/0/1", WireBytes: 1000, Readable: 1000},
		{Tag: "gorilla/0/2", WireBytes: 513, Readable: 500},
		{Tag: "gorilla/1/1", WireBytes: 213, Readable: 200},
		{Tag: "coder/0/1", WireBytes: 313, Readable: 300},
		{Tag: "gws/0/1", WireBytes: 413, Readable: 400},
		{Tag: "gws/1/1", WireBytes: 113, Readable: 100},
		{Tag: "preflight", WireBytes: 99, Readable: 99}, // not a slot's: left out
	}
	dials := []store.SlotDials{
		{Lib: "gorilla", Slot: 0, WireBytes: 1500},
		{Lib: "gorilla", Slot: 1, WireBytes: 200},
		{Lib: "coder", Slot: 0, WireBytes: 313},
		{Lib: "gws", Slot: 0, WireBytes: 406}, // neither 400 nor 413
		{Lib: "gws", Slot: 1, WireBytes: 90},  // short of both
		{Lib: "fasthttp", Slot: 0, WireBytes: 0},
	}
	got := CheckWire(server, dials)
	tests := []struct {
		lib                         string
		ok                          bool
		exact, echoRead, echoUnread int
		echoBytes, absDiff, diff    int64
		text                        string
	}{
		{"gorilla", true, 2, 0, 2, 26, 0, 0, "✓ 1.7 kB on 2 slots; close echo unread ×2 (26 B)"},
		{"coder", true, 1, 1, 0, 0, 0, 0, "✓ 313 B on 1 slot; close echo read ×1"},
		{"gws", false, 0, 0, 0, 0, 16, -4, "✗ 2 of 2 slots differ: client -4 B (slot 0: read 406, server wrote 413, 400 before the client's close; slot 1: read 90"},
		{"fasthttp", true, 1, 0, 0, 0, 0, 0, "✓ 0 B on 1 slot"}, // never connected: nothing on either side
	}
	if len(got) != len(tests) {
		t.Fatalf("%d checks, want %d: %+v", len(got), len(tests), got)
	}
	for i, tc := range tests {
		w := got[i]
		if w.Lib != tc.lib || w.OK() != tc.ok || w.Exact != tc.exact || w.EchoRead != tc.echoRead || w.EchoUnread != tc.echoUnread ||
			w.EchoBytes != tc.echoBytes || w.AbsDiff() != tc.absDiff || w.Diff() != tc.diff {
			t.Errorf("%s: got %+v (ok %v, abs diff %d, diff %d)", tc.lib, w, w.OK(), w.AbsDiff(), w.Diff())
		}
		if !strings.HasPrefix(w.String(), tc.text) {
			t.Errorf("%s: %q, want it to start with %q", tc.lib, w.String(), tc.text)
		}
	}
	if s := (WireCheck{}).String(); s != NotMeasured {
		t.Errorf("no slots: %q", s)
	}
}
