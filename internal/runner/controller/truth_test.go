package controller

import (
	"fmt"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

func TestChargeLost(t *testing.T) {
	sub := func(stream string, lost, overflow int64, gaps ...[2]int64) wire.SubStat {
		return wire.SubStat{Slot: 1, Group: "g", Stream: stream, Lost: lost, GapOverflow: overflow, Gaps: gaps}
	}
	finals := map[string][]wire.SubStat{
		// trade: ids 10..19 lost by all (the source), 30..31 only by gorilla, 40 only by gws.
		"gorilla": {sub("btcusdt@trade", 12, 0, [2]int64{10, 19}, [2]int64{30, 31}), sub("btcusdt@aggTrade", 0, 0)},
		"gws":     {sub("btcusdt@trade", 11, 0, [2]int64{40, 40}, [2]int64{10, 19}), sub("btcusdt@aggTrade", 5, 2, [2]int64{1, 3})},
		"coder":   {sub("btcusdt@trade", 14, 0, [2]int64{8, 21})},
	}
	got := map[string]string{}
	for _, c := range chargeLost(finals) {
		got[c.Lib+"/"+c.Stream] = fmt.Sprintf("lost %d library %d source %d", c.Lost, c.Library, c.Source)
	}
	want := map[string]string{
		"gorilla/btcusdt@trade":    "lost 12 library 2 source 10",
		"gws/btcusdt@trade":        "lost 11 library 1 source 10",
		"coder/btcusdt@trade":      "lost 14 library 4 source 10", // 8, 9, 20, 21 were received by the others
		"gorilla/btcusdt@aggTrade": "lost 0 library 0 source 0",
		"gws/btcusdt@aggTrade":     "lost 5 library 5 source 0", // gorilla received 1..3; overflow is the library's
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	for _, c := range chargeLost(finals) {
		if !c.Split || c.LostAcross != 0 || c.LostConnected != c.Lost || c.LibraryConnected != c.Library || c.SourceConnected != c.Source {
			t.Errorf("%s/%s: without ranges across a reconnect all is lost while connected: %+v", c.Lib, c.Stream, c)
		}
	}
	// One library alone: everything it lost is the source's.
	one := chargeLost(map[string][]wire.SubStat{"gws": {sub("x@trade", 3, 0, [2]int64{5, 7})}})
	if one[0].Source != 3 || one[0].Library != 0 {
		t.Errorf("single library: %+v", one[0])
	}
}

// BenchmarkChargeLost compares 1k, 10k and 80k subscriptions of two
// libraries: the time per subscription stays flat.
func BenchmarkChargeLost(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 80_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			finals := map[string][]wire.SubStat{}
			for _, lib := range []string{"gorilla", "gws"} {
				for i := range n {
					finals[lib] = append(finals[lib], wire.SubStat{Slot: i / 1024, Group: "g", Stream: fmt.Sprintf("s%dusdt@trade", i),
						Lost: 2, Gaps: [][2]int64{{10, 11}}})
				}
			}
			for b.Loop() {
				if out := chargeLost(finals); len(out) != 2*n || out[0].Source != 2 {
					b.Fatalf("%d charges, first %+v", len(out), out[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/subscription")
		})
	}
}

// TestChargeLostSplit: each library's charges split by where the ids were
// lost. The source lost 10..19 for everyone (gorilla while connected, gws
// across its reconnect); gorilla alone lost 30..34 across a reconnect and
// 40 while connected; gws alone lost 50..51 while connected.
func TestChargeLostSplit(t *testing.T) {
	finals := map[string][]wire.SubStat{
		"gorilla": {{Slot: 0, Stream: "s@trade", Lost: 16, LostAcross: 5,
			Gaps: [][2]int64{{10, 19}, {30, 34}, {40, 40}}, GapAcross: []bool{false, true, false}}},
		"gws": {{Slot: 0, Stream: "s@trade", Lost: 12, LostAcross: 10,
			Gaps: [][2]int64{{10, 19}, {50, 51}}, GapAcross: []bool{true, false}}},
	}
	type split struct{ lost, lib, src, lostA, libA, srcA, lostC, libC, srcC int64 }
	want := map[string]split{
		"gorilla": {16, 6, 10, 5, 5, 0, 11, 1, 10},
		"gws":     {12, 2, 10, 10, 0, 10, 2, 2, 0},
	}
	for _, c := range chargeLost(finals) {
		got := split{c.Lost, c.Library, c.Source, c.LostAcross, c.LibraryAcross, c.SourceAcross, c.LostConnected, c.LibraryConnected, c.SourceConnected}
		if got != want[c.Lib] || !c.Split {
			t.Errorf("%s: %+v, want %+v", c.Lib, got, want[c.Lib])
		}
	}
}
