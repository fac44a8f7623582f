package measure

import (
	"math"
	"slices"
	"testing"

	"github.com/wssoak/wssoak/internal/store"
)

func TestSignificant(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want bool
	}{
		{"apart", []float64{100, 101, 102, 103, 104}, []float64{120, 121, 122, 123, 124}, true},
		{"interleaved", []float64{100, 102, 104, 106, 108}, []float64{101, 103, 105, 107, 109}, false},
		{"same", []float64{5, 5, 5, 5, 5}, []float64{5, 5, 5, 5, 5}, false},
		{"too few to tell", []float64{1, 2}, []float64{10, 20}, false}, // n=2+2: the U test cannot reach 0.05
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := slices.Clone(tt.a)
			got, p := Significant(tt.a, tt.b)
			if got != tt.want {
				t.Errorf("Significant(%v, %v) = %v (p=%.3f), want %v", tt.a, tt.b, got, p, tt.want)
			}
			if !slices.Equal(a, tt.a) {
				t.Errorf("Significant reordered its argument: %v", tt.a)
			}
		})
	}
}

// TestAggregate: the warm-up is left out, an invalid run is counted apart,
// the median, min and max are the valid counted runs'; a measure not
// measured in a run (frame bytes of the raw reader) is left out of its
// Stat; cells come in the order they first ran, warm-up included, and a
// column that only warmed up has no cell.
func TestAggregate(t *testing.T) {
	r := func(lib string, round int, wallMS int64, valid bool) store.BenchResult {
		return store.BenchResult{Scenario: "aggTrade", Compression: "off", Lib: lib, Path: "bare", Round: round, Msgs: 1000,
			WallNS: wallMS * 1e6, UserNS: 1e6, Valid: valid, WireBytes: 1000 * 210}
	}
	raw := r("raw", 1, 10, true)
	raw.Path, raw.WireBytes = "raw", 0
	rs := []store.BenchResult{
		r("gws", 0, 1, true), r("gorilla", 0, 1, true), r("coder", 0, 1, true), // warm-up: left out; coder only warms up
		r("gorilla", 1, 10, true), // 100,000 msgs/s
		r("gorilla", 2, 5, true),  // 200,000
		r("gorilla", 3, 20, true), // 50,000
		r("gorilla", 4, 1, false), // invalid: left out
		r("gws", 1, 4, true), raw,
	}
	a := AggregateBench(rs)
	var order []string
	for _, c := range a.Cells {
		order = append(order, c.Lib)
	}
	if !slices.Equal(order, []string{"gws", "gorilla", "raw"}) {
		t.Errorf("cells %v, want gws, gorilla, raw (first run order, no warm-up only cell)", order)
	}
	d := Dims{Side: SideClient, Scenario: "aggTrade", Compression: "off", Path: "bare", Lib: "gorilla"}
	c := a.Cell(d)
	if c == nil {
		t.Fatal("no gorilla cell")
	}
	if s := c.Stat("bench_msg_rate"); c.Runs != 3 || c.Invalid != 1 || s.N != 3 || s.Median != 100000 || s.Min != 50000 || s.Max != 200000 {
		t.Errorf("cell %d runs %d invalid, rate %+v; want 3, 1, median 100000, min 50000, max 200000", c.Runs, c.Invalid, s)
	}
	if s := c.Stat("bench_cpu_per_msg"); s.Median != 1 {
		t.Errorf("CPU µs/msg %+v, want 1", s)
	}
	if got := c.Values("bench_msg_rate"); !slices.Equal(got, []float64{100000, 200000, 50000}) {
		t.Errorf("values %v, want the counted valid runs in run order", got)
	}
	rd := d
	rd.Path, rd.Lib = "raw", "raw"
	if s := a.Cell(rd).Stat("bench_wire_per_msg"); s.N != 0 || !math.IsNaN(s.Median) {
		t.Errorf("raw wire bytes %+v, want not measured", s)
	}
	if s := c.Stat("bench_wire_per_msg"); s.N != 3 || s.Median != 210 {
		t.Errorf("gorilla wire bytes %+v, want 210 over 3 runs", s)
	}
	cd := d
	cd.Lib = "coder"
	if a.Cell(cd) != nil {
		t.Error("a cell of warm-up runs only")
	}
}

// TestPaired: full − bare is paired by round: the median of the rounds'
// differences, not the difference of the medians, with its min–max; the
// warm-up and invalid runs are left out, and a round without both paths
// gives nothing.
func TestPaired(t *testing.T) {
	r := func(path string, round int, cpuNS int64, valid bool) store.BenchResult {
		return store.BenchResult{Scenario: "aggTrade", Compression: "off", Lib: "gorilla", Path: path, Round: round, Msgs: 1000,
			WallNS: 1e6, UserNS: cpuNS * 1000, Valid: valid}
	}
	// CPU ns/msg by round: the machine drifts (round 3 is slow for both), the
	// paired differences are 100, 120, 90, 110 ns; round 5 has no valid bare.
	rs := []store.BenchResult{
		r("full", 0, 9000, true), r("bare", 0, 100, true), // warm-up
		r("full", 1, 300, true), r("bare", 1, 200, true),
		r("full", 2, 320, true), r("bare", 2, 200, true),
		r("full", 3, 990, true), r("bare", 3, 900, true),
		r("full", 4, 330, true), r("bare", 4, 220, true),
		r("full", 5, 5000, true), r("bare", 5, 1, false),
	}
	cell := func(a *Agg, path string) *BenchCell {
		return a.Cell(Dims{Side: SideClient, Scenario: "aggTrade", Compression: "off", Path: path, Lib: "gorilla"})
	}
	a := AggregateBench(rs)
	d, _, _ := Paired(cell(a, "full"), cell(a, "bare"), "bench_cpu_per_msg")
	const eps = 1e-9
	if d.N != 4 || math.Abs(d.Median-0.105) > eps || math.Abs(d.Min-0.090) > eps || math.Abs(d.Max-0.120) > eps {
		t.Errorf("harness cost %+v, want 4 pairs, median 0.105 µs, min 0.090, max 0.120", d)
	}
	w := AggregateBench(rs[:2])
	if d, sig, p := Paired(cell(w, "full"), cell(w, "bare"), "bench_cpu_per_msg"); d.N != 0 || sig || p != 1 {
		t.Errorf("warm-up only: %+v %v %v, want no pair", d, sig, p)
	}
}

// TestRow: a row's name from its dimensions, and back from a name stored
// before the dimensions had columns.
func TestRow(t *testing.T) {
	for _, tt := range []struct {
		d    Dims
		want string
	}{
		{Dims{Scenario: "aggTrade", Compression: "off"}, "aggTrade"},
		{Dims{Scenario: "depth20", Encoding: "msgpack", Compression: "off"}, "depth20-msgpack"},
		{Dims{Scenario: "depth20", Compression: "on"}, "depth20+deflate"},
		{Dims{Scenario: "depth20", Encoding: "packed", Compression: "no_context_takeover"}, "depth20-packed+deflate_nct"},
		{Dims{Scenario: "depth-2000B", Compression: "off"}, "depth-2000B"},
		{Dims{Scenario: "depth20", Encoding: "json", Compression: "on"}, "depth20-json+deflate"},
	} {
		if got := tt.d.Row(); got != tt.want {
			t.Errorf("%+v.Row() = %q, want %q", tt.d, got, tt.want)
		}
		if got := ParseRow(tt.want); got != tt.d {
			t.Errorf("ParseRow(%q) = %+v, want %+v", tt.want, got, tt.d)
		}
	}
	if got := (Dims{Side: SideServer, Scenario: ChatScenario, Clients: 16, Lib: "gws"}).Row(); got != "chat N=16" {
		t.Errorf("server bench row %q, want chat N=16", got)
	}
}

// TestChatMeasures: a load run's measures, and a partial run (recorded
// before chat_results) measures only what it recorded.
func TestChatMeasures(t *testing.T) {
	r := store.ChatResult{Lib: "gws", Clients: 4, Round: 1, Valid: true, Deliveries: 1000, WallNS: 5e6, ServerUserNS: 3e6, ServerSysNS: 1e6,
		ServerMaxRSSKiB: 22000, ServerWrites: 1500, ClientUserNS: 2e6, ClientSysNS: 5e5, ClientReads: 400, P50us: 120, P99us: 900}
	want := map[string]float64{"chat_delivery_rate": 200000, "chat_server_cpu_per_delivery": 4, "chat_server_cpu_pct": 80,
		"chat_server_peak_rss": 22000, "chat_latency_p50": 120, "chat_latency_p99": 900, "chat_client_cpu_per_delivery": 2.5,
		"chat_client_cpu_pct": 50, "chat_server_writes_per_delivery": 1.5, "chat_client_reads_per_delivery": 0.4}
	p := r
	p.Partial = true
	s := ChatSamples([]store.ChatResult{r, p})
	for _, m := range Chat {
		w, ok := want[m.ID]
		if !ok {
			t.Errorf("%s: no value to check", m.ID)
			continue
		}
		if got := s[0].Value(m.ID); math.Abs(got-w) > 1e-9 {
			t.Errorf("%s = %v, want %v", m.ID, got, w)
		}
		recorded := m.ID == "chat_delivery_rate" || m.ID == "chat_server_cpu_per_delivery" || m.ID == "chat_server_cpu_pct" || m.ID == "chat_server_peak_rss"
		if got := s[1].Value(m.ID); recorded == math.IsNaN(got) {
			t.Errorf("partial run: %s = %v; want a value only for what it recorded", m.ID, got)
		}
	}
	if s[0].Dims != (Dims{Side: SideServer, Scenario: ChatScenario, Clients: 4, Lib: "gws"}) {
		t.Errorf("dims %+v", s[0].Dims)
	}
}
