package runner

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

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
