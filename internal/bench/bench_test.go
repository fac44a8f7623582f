package bench

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

func TestOrder(t *testing.T) {
	libs := []string{"A", "B", "C", "D", "E"}
	want := []string{"ABCDE", "EDCBA", "ABCDE", "EDCBA"}
	for round, w := range want {
		if got := strings.Join(Order(libs, round), ""); got != w {
			t.Errorf("round %d: order %s, want %s", round, got, w)
		}
	}
	if strings.Join(libs, "") != "ABCDE" {
		t.Errorf("Order changed its argument: %v", libs)
	}
}

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

func TestSummarize(t *testing.T) {
	cfg := Config{Scenarios: []string{"aggTrade"}, Libs: []string{"gorilla"}, Paths: []string{PathBare}}
	r := func(round int, wallMS int64, valid bool) Result {
		return Result{Scenario: "aggTrade", Lib: "gorilla", Path: PathBare, Round: round, Messages: 1000, WallNS: wallMS * 1e6, UserNS: 1e6, Valid: valid}
	}
	rs := []Result{
		r(0, 1, true),  // warm-up: left out
		r(1, 10, true), // 100,000 msgs/s
		r(2, 5, true),  // 200,000
		r(3, 20, true), // 50,000
		r(4, 1, false), // invalid: left out
	}
	c := Summarize(cfg, rs).Cell("aggTrade", PathBare, "gorilla")
	if c == nil {
		t.Fatal("no cell")
	}
	if c.Rate.N != 3 || c.Invalid != 1 || c.Rate.Median != 100000 || c.Rate.Min != 50000 || c.Rate.Max != 200000 {
		t.Errorf("cell %+v, want 3 runs, 1 invalid, median 100000, min 50000, max 200000", c.Rate)
	}
	if c.CPU.Median != 1 {
		t.Errorf("CPU µs/msg %v, want 1", c.CPU.Median)
	}
}

func TestSweepSizes(t *testing.T) {
	tests := []struct {
		lo, hi int
		want   []int
		err    bool
	}{
		{9000, 900_000, []int{9000, 19390, 41774, 90000, 193899, 417743, 900000}, false},
		{2000, 4000, []int{2000, 4000}, false},
		{5000, 5000, []int{5000}, false},
		{1000, 10_000_000, nil, false}, // 7 sizes at most: checked below
		{900_000, 9000, nil, true},
		{0, 10, nil, true},
	}
	for _, tt := range tests {
		got, err := SweepSizes(tt.lo, tt.hi)
		if (err != nil) != tt.err {
			t.Errorf("SweepSizes(%d, %d): error %v, want error %v", tt.lo, tt.hi, err, tt.err)
			continue
		}
		if tt.err {
			continue
		}
		if tt.want != nil && !slices.Equal(got, tt.want) {
			t.Errorf("SweepSizes(%d, %d) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
		if len(got) > MaxSweepSizes || got[0] != tt.lo || got[len(got)-1] != tt.hi || !slices.IsSorted(got) {
			t.Errorf("SweepSizes(%d, %d) = %v: want at most %d sizes, sorted, from %d to %d", tt.lo, tt.hi, got, MaxSweepSizes, tt.lo, tt.hi)
		}
	}
}

// TestHarnessCost checks full − bare is paired by round: the median of the
// rounds' differences, not the difference of the medians, with its min–max;
// the warm-up and invalid runs are left out, and a round without both paths
// gives nothing.
func TestHarnessCost(t *testing.T) {
	cfg := Config{Scenarios: []string{"aggTrade"}, Libs: []string{"gorilla"}, Paths: []string{PathFull, PathBare}}
	r := func(path string, round int, cpuNS int64, valid bool) Result {
		return Result{Scenario: "aggTrade", Lib: "gorilla", Path: path, Round: round, Messages: 1000, WallNS: 1e6, UserNS: cpuNS * 1000, Valid: valid}
	}
	// CPU ns/msg by round: the machine drifts (round 3 is slow for both), the
	// paired differences are 100, 120, 90, 110 ns; round 5 has no valid bare.
	rs := []Result{
		r(PathFull, 0, 9000, true), r(PathBare, 0, 100, true), // warm-up
		r(PathFull, 1, 300, true), r(PathBare, 1, 200, true),
		r(PathFull, 2, 320, true), r(PathBare, 2, 200, true),
		r(PathFull, 3, 990, true), r(PathBare, 3, 900, true),
		r(PathFull, 4, 330, true), r(PathBare, 4, 220, true),
		r(PathFull, 5, 5000, true), r(PathBare, 5, 1, false),
	}
	d, _, _ := Summarize(cfg, rs).HarnessCost("aggTrade", "gorilla")
	const eps = 1e-9
	if d.N != 4 || math.Abs(d.Median-0.105) > eps || math.Abs(d.Min-0.090) > eps || math.Abs(d.Max-0.120) > eps {
		t.Errorf("harness cost %+v, want 4 pairs, median 0.105 µs, min 0.090, max 0.120", d)
	}
	if d, _, _ := Summarize(cfg, rs[:2]).HarnessCost("aggTrade", "gorilla"); d.N != 0 {
		t.Errorf("warm-up only: %+v, want no pair", d)
	}
}

// TestRows: rows compose scenario × compression × encoding, in the order the
// bench runs them; without either list they are the scenarios' names.
func TestRows(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"plain", Config{Scenarios: []string{"aggTrade", "depth20"}}, "aggTrade depth20"},
		{"encodings", Config{Scenarios: []string{"depth20"}, Encodings: []string{"json", "msgpack"}}, "depth20-json depth20-msgpack"},
		{"compression", Config{Scenarios: []string{"depth20"}, Compression: []wire.Compression{wire.CompressionOff, wire.CompressionOn}},
			"depth20 depth20+deflate"},
		{"both", Config{Scenarios: []string{"depth20"}, Encodings: []string{"json", "msgpack"},
			Compression: []wire.Compression{wire.CompressionOff, wire.CompressionOn, wire.CompressionNoContextTakeover}},
			"depth20-json depth20-msgpack depth20-json+deflate depth20-msgpack+deflate depth20-json+deflate_nct depth20-msgpack+deflate_nct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(tt.cfg.Rows(), " "); got != tt.want {
				t.Errorf("Rows() = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestSizesFromWire: the comparison of encodings reads the frame bytes each
// library read (Cell.Wire), per compression setting.
func TestSizesFromWire(t *testing.T) {
	cfg := Config{Scenarios: []string{"depth20"}, Encodings: []string{"json", "msgpack"}, Libs: []string{"gorilla"}, Paths: []string{PathBare},
		Compression: []wire.Compression{wire.CompressionOff, wire.CompressionOn}}
	var rs []Result
	for _, r := range []struct {
		row  string
		wire int64
	}{{"depth20-json", 1204}, {"depth20-msgpack", 830}, {"depth20-json+deflate", 400}, {"depth20-msgpack+deflate", 300}} {
		rs = append(rs, Result{Scenario: r.row, Lib: "gorilla", Path: PathBare, Round: 1, Messages: 1000, PayloadBytes: 1000 * 1000,
			WallNS: 1e9, UserNS: 1e6, WireBytes: r.wire * 1000, Valid: true})
	}
	var b strings.Builder
	Summarize(cfg, rs).printSizes(&b)
	for _, want := range []string{"depth20  ", "json 1204 B, msgpack 830 B (-31 %)", "depth20+deflate", "json 400 B, msgpack 300 B (-25 %)",
		"depth20+deflate vs off", "json -67 %, msgpack -64 %"} { // (400 − 1204) / 1204, (300 − 830) / 830
		if !strings.Contains(b.String(), want) {
			t.Errorf("sizes %q lack %q", b.String(), want)
		}
	}
}
