package profile

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

func TestScheduledFaults(t *testing.T) {
	p, err := Parse("f.yaml", []byte(`symbols: [btcusdt, ethusdt]
faults:
  - every: 20s
    kind: drop
    n: 3
    streams: ['{symbol}@trade', btcusdt@aggTrade]
  - at: 30s
    kind: drip
    for: 2s
  - at: 40s
    kind: oversize
    size: 1MiB
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.ScheduledFault{
		{Fault: wire.Fault{Kind: wire.FaultDrop, N: 3, Streams: []string{"btcusdt@trade", "ethusdt@trade", "btcusdt@aggTrade"}},
			At: 20 * time.Second, Every: 20 * time.Second},
		{Fault: wire.Fault{Kind: wire.FaultDrip, For: 2 * time.Second}, At: 30 * time.Second},
		{Fault: wire.Fault{Kind: wire.FaultOversize, Size: 1 << 20}, At: 40 * time.Second},
	}
	if got := p.ScheduledFaults(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// what the profile accepts, the replay server accepts
	for _, sf := range p.ScheduledFaults() {
		if err := sf.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServerFaultPeriod: on side: server the load injects a fault between
// two of its ticks (wire.ServerTick), so a fault cannot repeat more often:
// a shorter every is refused at its line, naming the minimum; the tick
// itself is accepted.
func TestServerFaultPeriod(t *testing.T) {
	const head = "side: server\nduration: 8s\nchat: {n: 4}\nfaults:\n  - kind: reset\n    at: 1s\n"
	tests := []struct {
		every string
		ok    bool
	}{
		{"1ms", false},
		{"99ms", false},
		{"100ms", true},
		{"1s", true},
	}
	for _, tc := range tests {
		_, err := Parse("f.yaml", []byte(head+"    every: "+tc.every+"\n"))
		if tc.ok {
			if err != nil {
				t.Errorf("every %s: %v", tc.every, err)
			}
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Line != 7 || !strings.Contains(pe.Msg, wire.ServerTick.String()) {
			t.Errorf("every %s: error %v; want one at line 7 naming the minimum %v", tc.every, err, wire.ServerTick)
		}
	}
}

// TestServerFaultsNotReplayed: the faults of a side: server run are the
// load client's; none reaches the replay server's list, whose kinds a
// slow_reader is not (FuzzParse found it: parsed, then refused there).
func TestServerFaultsNotReplayed(t *testing.T) {
	p, err := Parse("f.yaml", []byte("side: server\nduration: 10s\nchat: {n: 4}\nfaults:\n  - kind: slow_reader\n    at: 1s\n  - kind: reset\n    at: 2s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.ScheduledFaults(); len(got) != 0 {
		t.Errorf("replay server's faults %+v, want none on side: server", got)
	}
	if got := p.ReplayConfig().Faults; len(got) != 0 {
		t.Errorf("replay config's faults %+v, want none on side: server", got)
	}
	want := []ServerFault{{Kind: wire.FaultSlowReader, At: time.Second, N: 1}, {Kind: wire.FaultReset, At: 2 * time.Second, N: 1}}
	if got := p.ServerFaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("load client's faults %+v, want %+v", got, want)
	}
}
