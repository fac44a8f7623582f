package measure

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// SentCheck compares, for one library, the messages each subscription
// received with what the replay server sent on the library's connections
// of the subscription's slot (server_counts, their attempts added up). The
// server counts a message once it has written all of it, a dropped or
// discarded one not at all, a duplicated one twice: so what it sent is
// what a library must have received, and a lost id the library counted is
// one the server never sent (the truth of the lost counts).
type SentCheck struct {
	Subs       int       // subscriptions compared
	Mismatches []SentSub // those that differ, by slot and stream
}

// SentSub is one subscription's figures.
type SentSub struct {
	Slot           int
	Stream         string
	Received, Sent int64
}

// CheckSent compares the server's counts with each library's latest
// subscription totals, by library. Messages that belong to no stream
// (counted by the server under "") are left out.
func CheckSent(server []store.ServerCount, streams []store.StreamSample) map[string]*SentCheck {
	type key struct {
		lib    string
		slot   int
		stream string
	}
	sent := map[key]int64{}
	for _, c := range server {
		t, err := wire.ParseTag(c.Tag)
		if err != nil || c.Stream == "" {
			continue
		}
		sent[key{t.Column, t.Slot, c.Stream}] += c.Sent
	}
	out := map[string]*SentCheck{}
	for _, s := range streams {
		sc := out[s.Lib]
		if sc == nil {
			sc = &SentCheck{}
			out[s.Lib] = sc
		}
		sc.Subs++
		if n := sent[key{s.Lib, s.Slot, s.Stream}]; n != s.MsgsTotal {
			sc.Mismatches = append(sc.Mismatches, SentSub{Slot: s.Slot, Stream: s.Stream, Received: s.MsgsTotal, Sent: n})
		}
	}
	for _, sc := range out {
		slices.SortFunc(sc.Mismatches, func(a, b SentSub) int {
			return cmp.Or(cmp.Compare(a.Slot, b.Slot), strings.Compare(a.Stream, b.Stream))
		})
	}
	return out
}

// discards says whether a fault of kind k may rightly make what a library
// received differ from what the server counted sent: a reset drops what
// was still in flight, and a library closes its connection on an oversize
// message or invalid UTF-8 with messages behind it unread.
func discards(k wire.FaultKind) bool {
	return k == wire.FaultReset || k == wire.FaultOversize || k == wire.FaultInvalidUTF8
}

// sentCell is the server_truth cell: "✓ N subscriptions", or the first
// subscription that differs; not measured against a live target, and not
// compared across a restart or a fault that discards messages.
func (c *column) sentCell() Cell {
	switch {
	case c.sent == nil || c.sent.Subs == 0:
		return notMeasured()
	case c.restarts > 0:
		return Cell{Text: Restarted(c.restarts), Num: nan}
	case len(c.dropKinds) > 0:
		return Cell{Text: fmt.Sprintf("not compared: a %s fault discards messages in flight", c.dropKinds[0]), Num: nan}
	}
	sc := c.sent
	if len(sc.Mismatches) == 0 {
		return Cell{Text: fmt.Sprintf("✓ %d subscriptions", sc.Subs), Num: 0}
	}
	m := sc.Mismatches[0]
	return Cell{Text: fmt.Sprintf("✗ %d of %d differ (slot %d %s: received %d, server sent %d)", len(sc.Mismatches), sc.Subs, m.Slot, m.Stream, m.Received, m.Sent), Num: float64(len(sc.Mismatches))}
}
