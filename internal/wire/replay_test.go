package wire

import (
	"reflect"
	"testing"
	"time"
)

func TestReplayWithDefaults(t *testing.T) {
	def := DefaultReplay()
	full := def
	full.Symbols = DefaultReplaySymbols
	given := Replay{Seed: 7, Speed: 2.5, Rates: map[string]float64{"trade": 5, "blockTrade": 0}, PingInterval: time.Second,
		PongTimeout: 3 * time.Second, Lifetime: time.Minute, QueueSize: 16, Symbols: []string{"ethbtc"}, TLS: true}
	kept := given
	kept.Rates = map[string]float64{"trade": 5, "aggTrade": 20, "bookTicker": 100, "blockTrade": 0}
	for _, tc := range []struct {
		name    string
		in, out Replay
	}{
		{"zero", Replay{}, func() Replay { r := full; r.Seed = 0; return r }()},
		{"defaults", def, full},
		{"negative durations", Replay{Seed: 1, PingInterval: -1, PongTimeout: -1, Lifetime: -1, QueueSize: -1}, full},
		{"given", given, kept},
	} {
		if got := tc.in.WithDefaults(); !reflect.DeepEqual(got, tc.out) {
			t.Errorf("%s: WithDefaults\n got %+v\nwant %+v", tc.name, got, tc.out)
		}
	}
	r := Replay{Rates: map[string]float64{"trade": 1}}
	r.WithDefaults()
	if len(r.Rates) != 1 {
		t.Errorf("WithDefaults changed its receiver's rates: %v", r.Rates)
	}
	if d := DefaultReplay(); d.Rates["trade"] != 30 || len(d.Rates) != len(RateKeys) {
		t.Errorf("DefaultReplay rates %v: want the profile's 30/20/100/0.05 for %v", d.Rates, RateKeys)
	}
}
