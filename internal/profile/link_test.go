package profile

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// TestLink: link: is read into wire.Link with its rate in bits per second;
// the network's faults go to NetworkFaults, not to the replay server's
// schedule; a profile without link: has none.
func TestLink(t *testing.T) {
	p, err := Parse("l.yaml", []byte(`duration: 1m
link:
  rate: 1.5Mbit
  loss: 0.5
  delay: 20ms
  jitter: 5ms
faults:
  - at: 10s
    kind: blackhole
    for: 5s
  - at: 20s
    kind: close
    code: 1000
  - every: 30s
    kind: throttle
    rate: 200kbit
    for: 10s
  - at: 25s
    kind: rst
  - at: 40s
    kind: syn_drop
    for: 3s
`))
	if err != nil {
		t.Fatal(err)
	}
	want := wire.Link{On: true, Rate: 1_500_000, Loss: 0.5, Delay: 20 * time.Millisecond, Jitter: 5 * time.Millisecond}
	if p.Link != want {
		t.Errorf("link %+v, want %+v", p.Link, want)
	}
	net := []wire.ScheduledFault{
		{Fault: wire.Fault{Kind: wire.FaultBlackhole, For: 5 * time.Second}, At: 10 * time.Second},
		{Fault: wire.Fault{Kind: wire.FaultThrottle, Rate: 200_000, For: 10 * time.Second}, At: 30 * time.Second, Every: 30 * time.Second},
		{Fault: wire.Fault{Kind: wire.FaultRST}, At: 25 * time.Second},
		{Fault: wire.Fault{Kind: wire.FaultSynDrop, For: 3 * time.Second}, At: 40 * time.Second},
	}
	if got := p.NetworkFaults(); !reflect.DeepEqual(got, net) {
		t.Errorf("network faults\n %+v\nwant\n %+v", got, net)
	}
	if got := p.ScheduledFaults(); len(got) != 1 || got[0].Kind != wire.FaultClose {
		t.Errorf("the replay server's faults %+v; want the close alone", got)
	}
	for _, sf := range p.NetworkFaults() {
		if err := sf.Validate(); err != nil {
			t.Errorf("%s: %v", sf.Kind, err)
		}
	}

	plain, err := Parse("p.yaml", []byte("link: {}\n"))
	if err != nil || plain.Link != (wire.Link{On: true}) {
		t.Errorf("link: {} gives %+v, %v; want a plain link", plain.Link, err)
	}
	if Default().Link.On {
		t.Error("the default profile has a link")
	}
}

// TestLinkErrors: what a link: section or a network fault gets wrong is one
// line at its place.
func TestLinkErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"link:\n  rate: 2mbps\n", `x.yaml:2: link.rate: bad rate "2mbps": "2mbps" is ambiguous (bytes or bits?)`},
		{"link:\n  rate: fast\n", `x.yaml:2: link.rate: bad rate "fast": want a number with a unit such as 500kbit`},
		{"link:\n  rate: 1000bit\n", `x.yaml:2: link.rate 1kbit: want at least 8kbit (or 0: not shaped)`},
		{"link:\n  rate: -1mbit\n", `x.yaml:2: link.rate must not be negative, got -1mbit`},
		{"link:\n  loss: 101\n", `x.yaml:2: link.loss 101: want a percentage from 0 to 100`},
		{"link:\n  loss: -1\n", `x.yaml:2: link.loss must not be negative`},
		{"link:\n  delay: 5\n", `x.yaml:2: bad duration "5"`},
		{"link:\n  speed: 1\n", `x.yaml:2: unknown key "speed" in link`},
		{"link:\n", `x.yaml:1: link has no value`},
		{"target: wss://example.com\nlink: {}\n", `x.yaml:2: link applies only to target "local" (the replay server goes behind it), not "wss://example.com"`},
		{"side: server\nlink: {}\n", `x.yaml:2: link applies only to side "client"`},
		{"duration: 1m\nfaults:\n  - at: 1s\n    kind: blackhole\n    for: 2s\n", `x.yaml:4: fault blackhole needs link: (the kernel plays it on the link to the replay server)`},
		{"duration: 1m\nlink: {}\nfaults:\n  - at: 1s\n    kind: blackhole\n", `x.yaml:4: fault blackhole: for must be positive`},
		{"duration: 1m\nlink: {}\nfaults:\n  - at: 1s\n    kind: throttle\n    for: 2s\n", `x.yaml:4: fault throttle: rate must be at least 8kbit`},
		{"duration: 1m\nlink: {}\nfaults:\n  - at: 1s\n    kind: syn_drop\n    for: 2s\n    rate: 1mbit\n", `x.yaml:7: fault syn_drop does not take rate`},
		{"duration: 1m\nlink: {}\nfaults:\n  - at: 1s\n    kind: rst\n    streams: [btcusdt@trade]\n", `x.yaml:6: fault rst: streams does not apply`},
		{"side: server\nduration: 1m\nfaults:\n  - at: 1s\n    kind: blackhole\n    for: 1s\n", `x.yaml:5: fault blackhole does not apply to side "server"`},
	}
	for _, tc := range tests {
		_, err := Parse("x.yaml", []byte(tc.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got  %v\n want %s…", tc.yaml, err, tc.want)
		}
	}
}

// TestParseBitRate reads rates with every unit, and refuses what is not one.
func TestParseBitRate(t *testing.T) {
	good := map[string]wire.BitRate{"0": 0, "8000bit": 8000, "500kbit": 500_000, "2mbit": 2_000_000, "1.5Mbit": 1_500_000,
		"10 gbit": 10_000_000_000, "100MBIT": 100_000_000}
	for in, want := range good {
		if got, err := parseBitRate(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "2m", "2mbps", "2MB/s", "mbit", "1e3kbit", "infmbit", "NaNkbit", "0x10kbit", "1e30gbit"} {
		if got, err := parseBitRate(in); err == nil {
			t.Errorf("%q: %v; want an error", in, got)
		}
	}
	for _, r := range []wire.BitRate{1, 8000, 1_500_000, 2_000_000, 10_000_000_000} {
		if got, err := parseBitRate(r.String()); err != nil || got != r {
			t.Errorf("%v written as %q reads back %v, %v", int64(r), r.String(), got, err)
		}
	}
}
