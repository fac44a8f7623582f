package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

type groupRow struct {
	Group, Lib           string
	Subs                 int
	Msgs, Lost, Dup, OOO int64
	MaxSilence           float64 // seconds
	Reconnects           int
	Short                bool // fewer messages than the group's best library
}

type subRow struct {
	Group, Stream        string
	Slot                 int
	Lib                  string
	Msgs, Lost, Dup, OOO int64
	MaxSilence           float64 // seconds
	Reconnects           int     // of the subscription's connection (slot)
	Sec                  int64   // second of the last stored total
	Short, First         bool    // fewer messages than the best library; first row of its subscription
	LibsOfSub            int     // rows of this subscription (for the row span)
}

// streamTables builds the per-group and per-subscription tables from each
// subscription's latest totals; reconnects are the 'disconnected' events of
// the subscription's connection (slot), as in the reference table.
func streamTables(libs []string, run store.Run, streams []store.StreamSample, events []store.Event) ([]groupRow, []subRow) {
	type slotKey struct {
		lib  string
		slot int
	}
	recon := map[slotKey]int{}
	groupRecon := map[[2]string]int{}
	for _, e := range events {
		if e.Kind == wire.EventDisconnected {
			recon[slotKey{e.Lib, e.Slot}]++
			groupRecon[[2]string{e.Group, e.Lib}]++
		}
	}
	groups := measure.PlanGroups(run.Settings["plan"])
	for _, s := range streams {
		if !slices.Contains(groups, s.Group) {
			groups = append(groups, s.Group)
		}
	}
	libRank := func(l string) int {
		if i := slices.Index(libs, l); i >= 0 {
			return i
		}
		return len(libs) + measure.Rank(l)
	}
	ss := slices.Clone(streams)
	slices.SortStableFunc(ss, func(a, b store.StreamSample) int {
		return cmp.Or(cmp.Compare(slices.Index(groups, a.Group), slices.Index(groups, b.Group)),
			cmp.Compare(a.Slot, b.Slot), strings.Compare(a.Stream, b.Stream), cmp.Compare(libRank(a.Lib), libRank(b.Lib)))
	})
	var subs []subRow
	for i := 0; i < len(ss); {
		j := i
		var most int64
		for j < len(ss) && ss[j].Group == ss[i].Group && ss[j].Slot == ss[i].Slot && ss[j].Stream == ss[i].Stream {
			most = max(most, ss[j].MsgsTotal)
			j++
		}
		for k := i; k < j; k++ {
			s := ss[k]
			subs = append(subs, subRow{Group: s.Group, Stream: s.Stream, Slot: s.Slot, Lib: s.Lib, Msgs: s.MsgsTotal,
				Lost: s.LostTotal, Dup: s.DupTotal, OOO: s.OOOTotal, MaxSilence: float64(s.MaxSilenceMs) / 1000,
				Reconnects: recon[slotKey{s.Lib, s.Slot}], Sec: s.Sec, Short: s.MsgsTotal < most, First: k == i, LibsOfSub: j - i})
		}
		i = j
	}

	type gk struct{ group, lib string }
	agg := map[gk]*groupRow{}
	var order []gk
	for _, s := range subs {
		k := gk{s.Group, s.Lib}
		g := agg[k]
		if g == nil {
			g = &groupRow{Group: s.Group, Lib: s.Lib, Reconnects: groupRecon[[2]string{s.Group, s.Lib}]}
			agg[k] = g
			order = append(order, k)
		}
		g.Subs++
		g.Msgs += s.Msgs
		g.Lost += s.Lost
		g.Dup += s.Dup
		g.OOO += s.OOO
		g.MaxSilence = max(g.MaxSilence, s.MaxSilence)
	}
	slices.SortStableFunc(order, func(a, b gk) int {
		return cmp.Or(cmp.Compare(slices.Index(groups, a.group), slices.Index(groups, b.group)), cmp.Compare(libRank(a.lib), libRank(b.lib)))
	})
	var out []groupRow
	mostByGroup := map[string]int64{}
	for _, k := range order {
		mostByGroup[k.group] = max(mostByGroup[k.group], agg[k].Msgs)
	}
	for _, k := range order {
		g := agg[k]
		g.Short = g.Msgs < mostByGroup[k.group]
		out = append(out, *g)
	}
	return out, subs
}
