package profile

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// TestReplayConfig: the server's configuration is the replay section, the
// profile's symbols when it names none (also once {top: N} is resolved), its
// faults, and the defaults for what is left zero.
func TestReplayConfig(t *testing.T) {
	if got, want := Default().ReplayConfig(), func() wire.Replay {
		r := wire.DefaultReplay()
		r.Symbols = Default().Symbols
		r.Faults = []wire.ScheduledFault{}
		return r
	}(); !reflect.DeepEqual(got, want) {
		t.Errorf("default profile: ReplayConfig\n got %+v\nwant %+v", got, want)
	}
	src := "symbols: {top: 2, quote: USDT}\nreplay:\n  seed: 0\n  rates: {trade: 5}\n" +
		"faults:\n  - {at: 1m, kind: close, code: 1001}\n"
	p, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ResolveSymbols(fixedTop); err != nil {
		t.Fatal(err)
	}
	r := p.ReplayConfig()
	if r.Seed != 0 || r.PingInterval != 20*time.Second || r.Rates["trade"] != 5 || r.Rates["aggTrade"] != 20 {
		t.Errorf("seed %d, ping interval %v, rates %v: want 0, the default 20s (not given), trade 5 and aggTrade's default 20", r.Seed, r.PingInterval, r.Rates)
	}
	if !slices.Equal(r.Symbols, p.Symbols) || len(r.Faults) != 1 || r.Faults[0].At != time.Minute || r.Faults[0].Kind != wire.FaultClose {
		t.Errorf("symbols %v, faults %+v: want the resolved %v and the close at 1m", r.Symbols, r.Faults, p.Symbols)
	}
	r.Rates["trade"] = 9
	if p.Replay.Rates["trade"] != 5 {
		t.Error("ReplayConfig shares its rates with the profile")
	}
}
