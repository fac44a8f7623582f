package bench

import (
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
// library read (the measure bench_wire_per_msg), per compression setting.
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
	newLayout(cfg, Aggregate(rs), true).printSizes(&b)
	for _, want := range []string{"depth20  ", "json 1204 B, msgpack 830 B (-31 %)", "depth20+deflate", "json 400 B, msgpack 300 B (-25 %)",
		"depth20+deflate vs off", "json -67 %, msgpack -64 %"} { // (400 − 1204) / 1204, (300 − 830) / 830
		if !strings.Contains(b.String(), want) {
			t.Errorf("sizes %q lack %q", b.String(), want)
		}
	}
}
