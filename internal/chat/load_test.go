package chat

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseDelivery(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		from int
		seq  int64
		ok   bool
	}{
		{"c0: 1", 4, 0, 1, true},
		{"c3: 42xxxx", 4, 3, 42, true},
		{"c4: 1", 4, 0, 0, false}, // not a client of the room
		{"c1:1", 4, 0, 0, false},
		{"c1: ", 4, 0, 0, false},
		{"c1: 1y", 4, 0, 0, false},
		{"x1: 1", 4, 0, 0, false},
		{"c: 12", 4, 0, 0, false},
		{"ready", 4, 0, 0, false},
		{"c01: 1", 4, 0, 0, false},
		{"c1: 01", 4, 0, 0, false},
		{"c0: 0", 4, 0, 0, true},
		{"c1: 99999999999999999999", 4, 0, 0, false}, // overflows int64
	}
	for _, tc := range tests {
		from, seq, ok := parseDelivery([]byte(tc.in), tc.n)
		if ok != tc.ok || ok && (from != tc.from || seq != tc.seq) {
			t.Errorf("parseDelivery(%q, %d) = %d, %d, %v; want %d, %d, %v", tc.in, tc.n, from, seq, ok, tc.from, tc.seq, tc.ok)
		}
	}
}

// FuzzParseDelivery: never a panic; what parses is a client of the room
// with a sequence number that formats back to the input.
func FuzzParseDelivery(f *testing.F) {
	for _, s := range []string{"c0: 1", "c12: 345xxx", "ready", "c1:", "c99999999999: 1", "c1: 9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		from, seq, ok := parseDelivery([]byte(s), 64)
		if !ok {
			return
		}
		if from < 0 || from >= 64 || seq < 0 {
			t.Fatalf("parseDelivery(%q) = %d, %d", s, from, seq)
		}
		canon := fmt.Sprintf("c%d: %d", from, seq)
		if trimmed := strings.TrimRight(s, "x"); trimmed != canon {
			t.Fatalf("parseDelivery(%q) = %d, %d: formats as %q", s, from, seq, canon)
		}
	})
}

// TestNextDelivery: a delivery is the sender's next number from a client of
// the room, or an error naming what is wrong (a loss, a duplicate, a
// stranger), for the load of the bench and of the soak alike.
func TestNextDelivery(t *testing.T) {
	last := []int64{4, 0, 9}
	tests := []struct {
		p    string
		from int
		seq  int64
		err  string
	}{
		{p: "c0: 5", from: 0, seq: 5},
		{p: "c1: 1xxxx", from: 1, seq: 1},
		{p: "c2: 11", err: "from c2: sequence 11, want 10 (a loss, a duplicate or out of order)"},
		{p: "c0: 4", err: "from c0: sequence 4, want 5"},
		{p: "c3: 1", err: `delivery "c3: 1": want "cI: SEQ" from a client of the room`},
		{p: "hello", err: `delivery "hello"`},
	}
	for _, tc := range tests {
		from, seq, err := nextDelivery([]byte(tc.p), last)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: %d %d %v; want an error starting %q", tc.p, from, seq, err, tc.err)
			}
			continue
		}
		if err != nil || from != tc.from || seq != tc.seq {
			t.Errorf("%q: %d %d %v; want %d %d", tc.p, from, seq, err, tc.from, tc.seq)
		}
	}
	p := []byte("c2: 10")
	if n := testing.AllocsPerRun(100, func() { _, _, _ = nextDelivery(p, last) }); n != 0 {
		t.Errorf("a good delivery allocates %v times; the read loop's path allocates nothing", n)
	}
}
