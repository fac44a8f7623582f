package controller

import (
	"slices"
	"sort"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// chargeLost compares what the libraries lost per subscription (the same
// slot and stream in every worker: they run the same plan) and charges each
// lost id to the source when every library that reported the subscription
// lost it too, else to the library. Ids a library lost beyond its recorded
// ranges (overflow) cannot be compared and are charged to the library. Each
// charge is split by where the ids were lost: across a reconnect (the ranges
// found at a subscription's first message on a new connection) or while a
// connection was up.
// finals holds each library's last subscription totals, with their gaps.
func chargeLost(finals map[string][]wire.SubStat) []store.LostCharge {
	type key struct {
		slot   int
		stream string
	}
	// Every library's sorted gaps of a subscription, gathered in one pass (a
	// search of each library's list per subscription was quadratic: 45 s for
	// two libraries of 80,000 subscriptions, now 0.8 s).
	byKey := map[key][][][2]int64{}
	for _, subs := range finals {
		for _, s := range subs {
			k := key{s.Slot, s.Stream}
			byKey[k] = append(byKey[k], sorted(s.Gaps))
		}
	}
	shared := make(map[key][][2]int64, len(byKey))
	for k, gaps := range byKey {
		common := gaps[0]
		for _, g := range gaps[1:] {
			common = intersect(common, g)
		}
		shared[k] = common
	}
	var out []store.LostCharge
	for lib, subs := range finals {
		for _, s := range subs {
			// The ranges of each kind are disjoint: their source parts add up
			// to what all of them share with the other libraries.
			connected, across := splitGaps(s)
			common := shared[key{s.Slot, s.Stream}]
			srcConn, srcAcross := idCount(intersect(sorted(connected), common)), idCount(intersect(sorted(across), common))
			src := srcConn + srcAcross
			l := store.LostCharge{Lib: lib, Slot: s.Slot, Group: s.Group, Stream: s.Stream,
				Lost: s.Lost, Source: src, Library: s.Lost - src, Overflow: s.GapOverflow, Gaps: s.Gaps,
				LostAcross: s.LostAcross, SourceAcross: srcAcross, LibraryAcross: s.LostAcross - srcAcross}
			l.SetConnected()
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Lib != b.Lib {
			return a.Lib < b.Lib
		}
		if a.Slot != b.Slot {
			return a.Slot < b.Slot
		}
		return a.Stream < b.Stream
	})
	return out
}

// splitGaps separates a subscription's lost ranges into those lost while
// connected and those lost across a reconnect (SubStat.GapAcross).
func splitGaps(s wire.SubStat) (connected, across [][2]int64) {
	if len(s.GapAcross) != len(s.Gaps) {
		return s.Gaps, nil
	}
	for i, g := range s.Gaps {
		if s.GapAcross[i] {
			across = append(across, g)
		} else {
			connected = append(connected, g)
		}
	}
	return connected, across
}

func sorted(r [][2]int64) [][2]int64 {
	r = slices.Clone(r)
	slices.SortFunc(r, func(a, b [2]int64) int { return int(min(max(a[0]-b[0], -1), 1)) })
	return r
}

// intersect returns the ids in both sorted lists of inclusive ranges.
func intersect(a, b [][2]int64) [][2]int64 {
	var out [][2]int64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
		if lo <= hi {
			out = append(out, [2]int64{lo, hi})
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return out
}

func idCount(r [][2]int64) int64 {
	var n int64
	for _, x := range r {
		n += x[1] - x[0] + 1
	}
	return n
}

// saveTruth compares the libraries' lost ids per subscription (over all
// their processes) and stores who each is charged to; every slot's final
// dial account goes with the last batch (after the interim ones, which the
// writer may still be writing).
func (c *controller) saveTruth() error {
	finals := map[string][]wire.SubStat{}
	for _, w := range c.workers {
		subs, dials := w.finalAccounts()
		if subs == nil {
			continue // no final account (the worker died at the end): nothing to compare
		}
		finals[w.lib] = subs
		c.batch.Dials = append(c.batch.Dials, dials...)
	}
	if len(finals) == 0 {
		return nil
	}
	lost := chargeLost(finals)
	return c.o.EndRetry.Do("store lost charges", func() error { return c.db.SaveTruth(lost, nil) })
}
