package controller

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/profile"
)

func TestBuildPlanSplitsGroups(t *testing.T) {
	p := profile.Default()
	var syms []string
	for i := range 300 {
		syms = append(syms, fmt.Sprintf("sym%dusdt", i))
	}
	p.Symbols = syms
	p.Groups = []profile.Group{
		{Name: "arr", Streams: []string{"!miniTicker@arr"}, Subscribe: "url", PerConnection: 1024},
		{Name: "markets", Streams: []string{"{symbol}@aggTrade", "{symbol}@trade", "{symbol}@bookTicker"}, Subscribe: "url", PerConnection: 200},
		{Name: "depth", Streams: []string{"{symbol}@depth@100ms"}, Subscribe: "message", PerConnection: 1024},
	}
	plan, err := BuildPlan(p, "r", "ws://127.0.0.1:9443", true)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	seen := map[string]bool{}
	for _, s := range plan.Slots {
		per[s.Group] += len(s.Streams)
		if s.Group == "markets" && len(s.Streams) > 200 {
			t.Errorf("slot %d has %d streams, limit 200", s.ID, len(s.Streams))
		}
		u := s.URL(plan.Target, plan.TimeUnit)
		if len(u) > maxURLLen+100 {
			t.Errorf("slot %d URL is %d characters", s.ID, len(u))
		}
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		if s.Subscribe == "url" && strings.Count(pu.Query().Get("streams"), "/")+1 != len(s.Streams) {
			t.Errorf("slot %d URL does not carry its %d streams", s.ID, len(s.Streams))
		}
		if s.Subscribe == "message" && pu.Query().Has("streams") {
			t.Errorf("slot %d subscribes by message but its URL names streams", s.ID)
		}
		for _, st := range s.Streams {
			if seen[st] {
				t.Errorf("stream %s planned twice", st)
			}
			seen[st] = true
		}
	}
	if per["arr"] != 1 || per["markets"] != 900 || per["depth"] != 300 {
		t.Errorf("streams per group %v, want arr 1, markets 900, depth 300", per)
	}
}

// TestPlanBinance24h builds the plan of the live reference profile with a
// fixed symbol list (no network): one connection for the market-wide array,
// one per stream type over the top 50 markets, one for the top 20 diff depths.
func TestPlanBinance24h(t *testing.T) {
	p, err := profile.Load("../../../profiles/binance-24h.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Target != "wss://stream.binance.com:9443" || p.RESTBase("unused") != profile.DefaultREST || time.Duration(p.Duration) != 24*time.Hour {
		t.Fatalf("target %q rest %q duration %v", p.Target, p.RESTBase("unused"), p.Duration)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings: %v", p.Warnings)
	}
	var universe []string
	for i := range 60 {
		universe = append(universe, fmt.Sprintf("s%02dusdt", i))
	}
	if _, err := p.ResolveSymbols(func(tp profile.Top) ([]string, error) {
		if tp.Quote != "USDT" {
			t.Errorf("quote %q", tp.Quote)
		}
		return universe[:tp.N], nil
	}); err != nil {
		t.Fatal(err)
	}
	plan, err := BuildPlan(p, "r", p.Target, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	total := 0
	for _, s := range plan.Slots {
		got = append(got, fmt.Sprintf("%s:%d:%s", s.Group, len(s.Streams), s.Streams[0]))
		total += len(s.Streams)
		if u := s.URL(p.Target, plan.TimeUnit); len(u) > maxURLLen+200 {
			t.Errorf("slot %d URL is %d characters", s.ID, len(u))
		}
	}
	want := []string{"arr:1:!miniTicker@arr", "markets:50:s00usdt@aggTrade", "markets:50:s00usdt@trade",
		"markets:50:s00usdt@depth20@100ms", "markets:50:s00usdt@kline_1m", "markets:50:s00usdt@bookTicker",
		"depth:20:s00usdt@depth@100ms"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slots\n got %v\nwant %v", got, want)
	}
	if total != 1+250+20 {
		t.Errorf("%d subscriptions, want 271", total)
	}
	if plan.SubsEvery != 60 {
		t.Errorf("subs every %d s on a 24 h run, want 60", plan.SubsEvery)
	}
}
