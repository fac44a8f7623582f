package controller

import (
	"maps"
	"slices"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// A library's accounts continue over its processes: a worker restarted
// after it died, and the workers of a resumed run, start from what the
// processes before them counted. The per-second totals continue in
// onFrame; this file continues the others, which the worker sends when
// they change (a subscription's loss account with its lost ranges, a
// slot's dial account) and the controller writes with the second's batch,
// so that a resume reads them back to the second: per subscription its
// counters (carrySub) and lost ranges (carryGaps), per slot its dials,
// failures by status and unrepairable mark (carrySlot). A slot's wire
// bytes are not carried: they are compared with the replay server's, which
// counts the connections it served (a resumed run's server is new).

// carryGaps adds the lost ranges of earlier processes to s's, when s
// carries its ranges (their sizes and overflow add up to its Lost: a
// subscription that lost nothing has none). It returns the subscription's
// ranges and whether they changed since last recorded.
func (w *workerProc) carryGaps(s wire.SubStat) (store.SubGaps, bool) {
	if len(s.Gaps) == 0 && s.GapOverflow == 0 && s.Lost != 0 {
		return store.SubGaps{}, false // a total frame: its ranges were sent when they changed
	}
	k := subKey{s.Slot, s.Stream}
	g := w.acc.gaps[k]
	g.Lib, g.Slot, g.Group, g.Stream = w.lib, s.Slot, s.Group, s.Stream
	g = mergeGaps(g, s.Gaps, s.GapAcross, s.GapOverflow, s.GapOverflowAcross)
	prev, ok := w.gaps[k]
	if !ok && len(g.Gaps) == 0 && g.Overflow == 0 || ok && sameGaps(prev, g) {
		return g, false
	}
	if w.gaps == nil {
		w.gaps = map[subKey]store.SubGaps{}
	}
	w.gaps[k] = g
	return g, true
}

// mergeGaps appends ranges (and their across marks) and overflows to g's,
// in a new slice: the ids of a later process come after the earlier's.
func mergeGaps(g store.SubGaps, ranges [][2]int64, across []bool, overflow, overflowAcross int64) store.SubGaps {
	out := g
	out.Gaps = append(slices.Clone(g.Gaps), ranges...)
	out.Across = nil
	if g.Across != nil || across != nil {
		out.Across = make([]bool, 0, len(out.Gaps))
		out.Across = append(out.Across, marks(g.Across, len(g.Gaps))...)
		out.Across = append(out.Across, marks(across, len(ranges))...)
	}
	out.Overflow += overflow
	out.OverflowAcross += overflowAcross
	return out
}

// marks is a ranges list's across marks, n long (nil: none across).
func marks(m []bool, n int) []bool {
	if len(m) == n {
		return m
	}
	return make([]bool, n)
}

func sameGaps(a, b store.SubGaps) bool {
	return slices.Equal(a.Gaps, b.Gaps) && slices.Equal(marks(a.Across, len(a.Gaps)), marks(b.Across, len(b.Gaps))) &&
		a.Overflow == b.Overflow && a.OverflowAcross == b.OverflowAcross
}

// carrySlot adds the dial account of the slot's earlier processes to s's
// and remembers the result. Its wire bytes are this process's.
func (w *workerProc) carrySlot(s wire.SlotStat) store.SlotDials {
	d := store.SlotDials{Lib: w.lib, Slot: s.Slot, Group: s.Group, Dials: s.Dials, DialFails: s.DialFails,
		Unrepairable: s.Unrepairable, WireBytes: s.WireBytes}
	if len(s.Statuses) > 0 {
		d.Statuses = maps.Clone(s.Statuses)
	}
	if b, ok := w.acc.slots[s.Slot]; ok {
		d.Dials += b.Dials
		d.DialFails += b.DialFails
		d.Unrepairable = d.Unrepairable || b.Unrepairable
		for code, n := range b.Statuses {
			if d.Statuses == nil {
				d.Statuses = map[string]int64{}
			}
			d.Statuses[code] += n
		}
	}
	if w.slots == nil {
		w.slots = map[int]store.SlotDials{}
	}
	w.slots[s.Slot] = d
	return d
}

// carryOver makes what the library counted so far the base of its next
// process (a restart after a death).
func (w *workerProc) carryOver() {
	w.acc.subs = maps.Clone(w.subs)
	w.acc.gaps = maps.Clone(w.gaps)
	w.acc.slots = maps.Clone(w.slots)
}

// finalAccounts are the library's final subscription totals, each with the
// lost ranges of all its processes, and its slots' final dial accounts (the
// last process's wire bytes), when its last process sent them (nil, nil
// when it died at the end).
func (w *workerProc) finalAccounts() ([]wire.SubStat, []store.SlotDials) {
	if w.finalSubs == nil {
		return nil, nil
	}
	subs := make([]wire.SubStat, 0, len(w.finalSubs))
	for _, s := range w.finalSubs {
		k := subKey{s.Slot, s.Stream}
		if c, ok := w.subs[k]; ok {
			s = c
		}
		g := w.gaps[k]
		s.Gaps, s.GapAcross, s.GapOverflow, s.GapOverflowAcross = g.Gaps, g.Across, g.Overflow, g.OverflowAcross
		subs = append(subs, s)
	}
	var dials []store.SlotDials
	for _, s := range w.finalSlots {
		d, ok := w.slots[s.Slot]
		if !ok {
			d = w.carrySlot(s)
		}
		d.Interim = false
		dials = append(dials, d)
	}
	return subs, dials
}
