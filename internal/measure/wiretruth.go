package measure

import (
	"fmt"
	"strings"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/wire"
)

// WireCheck compares, for one library, the WebSocket frame bytes its worker
// read on each slot (summed over the slot's connections) with what the
// replay server wrote to the connections tagged with that library and slot.
//
// The server counts two figures per connection: every frame byte it wrote
// (Written), and of those what it wrote before the client's close frame
// came (Readable; all of Written when the server closed or the client left
// without a close frame). The difference is the server's close echo (13
// bytes for "soak stop"), written after the client's close frame. A library
// that reads the echo before it gives up the socket (coder) counts Written;
// one that stops reading once its close frame is out (gorilla, gobwas, gws,
// fasthttp) counts Readable. A slot is exact when its count equals one of
// the two exactly; nothing else is let through.
type WireCheck struct {
	Lib   string
	Slots int // slots with a final account
	// Exact is the slots whose count equals the server's; EchoRead of them
	// read the server's close echo (count = Written > Readable), EchoUnread
	// stopped before it (count = Readable < Written).
	Exact, EchoRead, EchoUnread int
	// EchoBytes is what the server wrote after the client's close frame on
	// the EchoUnread slots: the bytes the client rightly never read.
	EchoBytes int64
	// Client and Server are the totals over the slots (Server as matched:
	// Written on the EchoRead slots, Readable on the others).
	Client, Server int64
	Mismatches     []WireSlot // the slots that differ, by slot
	// From is the second of the window the compared part starts at: 0 for
	// the whole run, the resume's for a resumed run (the replay server
	// before it died with its controller, and its counts with it).
	From float64
}

// Restarted is the cell of a library whose worker restarted: its slot
// counts start anew in every process, so they cover only the last one's
// connections and are not compared.
func Restarted(n int) string {
	return fmt.Sprintf("not compared: the worker restarted ×%d (its count covers the last process only)", n)
}

// WireSlot is one slot's figures.
type WireSlot struct {
	Slot                      int
	Client, Written, Readable int64
	Conns                     int // the server's connections of the slot
}

// Diff is the client's count less the server's bytes written before the
// client's close frame.
func (s WireSlot) Diff() int64 { return s.Client - s.Readable }

// AbsDiff is the sum of the mismatched slots' differences, each counted
// positive (a slot short and another over do not cancel).
func (w WireCheck) AbsDiff() int64 {
	var d int64
	for _, s := range w.Mismatches {
		d += max(s.Diff(), -s.Diff())
	}
	return d
}

// OK says whether every slot is exact.
func (w WireCheck) OK() bool { return w.Slots > 0 && len(w.Mismatches) == 0 }

// Diff is the sum of the mismatched slots' differences (client − server
// before the client's close).
func (w WireCheck) Diff() int64 {
	var d int64
	for _, s := range w.Mismatches {
		d += s.Diff()
	}
	return d
}

// CheckWire compares every library's slot accounts with the server's
// per-connection counts (tags column/slot/attempt; rows of other tags, such as
// the preflight's, are left out). A library without any slot account is
// left out, and so is an interim account (recorded during the run: its
// bytes are not the slot's to the end); the result is ordered as the
// accounts are.
func CheckWire(server []store.ServerWire, dials []store.SlotDials) []WireCheck {
	type key struct {
		lib  string
		slot int
	}
	bySlot := map[key]WireSlot{}
	for _, w := range server {
		t, err := wire.ParseTag(w.Tag)
		if err != nil {
			continue
		}
		k := key{t.Column, t.Slot}
		s := bySlot[k]
		s.Written += w.WireBytes
		s.Readable += w.Readable
		s.Conns++
		bySlot[k] = s
	}
	var out []WireCheck
	idx := map[string]int{}
	for _, d := range dials {
		if d.Interim {
			continue
		}
		i, ok := idx[d.Lib]
		if !ok {
			i = len(out)
			idx[d.Lib] = i
			out = append(out, WireCheck{Lib: d.Lib})
		}
		c := &out[i]
		s := bySlot[key{d.Lib, d.Slot}]
		s.Slot, s.Client = d.Slot, d.WireBytes
		c.Slots++
		c.Client += s.Client
		switch {
		case s.Client == s.Readable:
			c.Exact++
			c.Server += s.Readable
			if s.Written > s.Readable {
				c.EchoUnread++
				c.EchoBytes += s.Written - s.Readable
			}
		case s.Client == s.Written:
			c.Exact++
			c.EchoRead++
			c.Server += s.Written
		default:
			c.Server += s.Readable
			c.Mismatches = append(c.Mismatches, s)
		}
	}
	return out
}

// String is the check in a line: "✓ 1.2 MB on 12 slots; close echo unread
// ×12 (156 B)", or "✗ 2 of 12 slots differ: client −40 B (slot 3: read
// 100, server wrote 140, 140 before the client's close; …)"; for a resumed
// run followed by ", since the resume at 12 s".
func (w WireCheck) String() string {
	if w.Slots == 0 {
		return NotMeasured
	}
	s := w.text()
	if w.From > 0 {
		s += fmt.Sprintf(", since the resume at %.0f s", w.From)
	}
	return s
}

func (w WireCheck) text() string {
	if w.OK() {
		s := fmt.Sprintf("✓ %s on %s", unit.Bytes(float64(w.Client)), slots(w.Slots))
		var notes []string
		if w.EchoRead > 0 {
			notes = append(notes, fmt.Sprintf("close echo read ×%d", w.EchoRead))
		}
		if w.EchoUnread > 0 {
			notes = append(notes, fmt.Sprintf("close echo unread ×%d (%d B)", w.EchoUnread, w.EchoBytes))
		}
		if len(notes) > 0 {
			s += "; " + strings.Join(notes, ", ")
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "✗ %d of %s differ: client %+d B (", len(w.Mismatches), slots(w.Slots), w.Diff())
	for i, s := range w.Mismatches {
		if i == 3 {
			fmt.Fprintf(&b, "; +%d more", len(w.Mismatches)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "slot %d: read %d, server wrote %d, %d before the client's close", s.Slot, s.Client, s.Written, s.Readable)
	}
	b.WriteString(")")
	return b.String()
}

func slots(n int) string {
	if n == 1 {
		return "1 slot"
	}
	return fmt.Sprintf("%d slots", n)
}
