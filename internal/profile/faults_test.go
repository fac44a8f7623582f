package profile

import (
	"reflect"
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
