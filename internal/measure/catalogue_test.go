package measure

import (
	"math"
	"regexp"
	"slices"
	"testing"

	"github.com/wssoak/wssoak/internal/profile"
)

// TestCatalogueComplete: every measure has an id, a title, a unit and a
// direction; ids, titles and Prometheus names are unique; a measure has a
// way to be computed or a live series; table measures are computed.
func TestCatalogueComplete(t *testing.T) {
	ids, titles, proms := map[string]bool{}, map[string]bool{}, map[string]bool{}
	idRe := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	promRe := regexp.MustCompile(`^soak_[a-z0-9_]+$`)
	for i, m := range Catalogue {
		switch {
		case m.ID == "" || !idRe.MatchString(m.ID):
			t.Errorf("measure %d (%q): id %q, want lower_snake_case", i, m.Title, m.ID)
		case m.Title == "":
			t.Errorf("%s: no title", m.ID)
		case m.Unit == "":
			t.Errorf("%s: no unit", m.ID)
		case m.Better != Higher && m.Better != Lower && m.Better != NoRank:
			t.Errorf("%s: direction %q, want higher, lower or none", m.ID, m.Better)
		case m.Value == nil && m.Prom == "":
			t.Errorf("%s: neither computed nor a live series", m.ID)
		case m.Value == nil && !m.Hidden:
			t.Errorf("%s: a row of the end table that is not computed", m.ID)
		case m.Prom != "" && !promRe.MatchString(m.Prom):
			t.Errorf("%s: Prometheus name %q", m.ID, m.Prom)
		}
		if ids[m.ID] {
			t.Errorf("id %q repeats", m.ID)
		}
		if titles[m.Title] {
			t.Errorf("title %q repeats", m.Title)
		}
		if m.Prom != "" && proms[m.Prom] {
			t.Errorf("Prometheus name %q repeats", m.Prom)
		}
		ids[m.ID], titles[m.Title], proms[m.Prom] = true, true, true
		if got := ByID(m.ID); got != m {
			t.Errorf("ByID(%q) = %v", m.ID, got)
		}
		if (!m.Hidden || m.Retired) && ByTitle(m.Title) != m {
			t.Errorf("ByTitle(%q) = %v", m.Title, ByTitle(m.Title))
		}
	}
	// Every run's rows; the findings of what only some runs do are shown
	// when measured (the blackhole's three). A server-side soak's table
	// has its own rows, and none of those only a client's reading market
	// streams measures.
	for side, want := range map[string]int{SideClient: 27, SideServer: 16} {
		always := slices.DeleteFunc(TableOf(side), func(m *Measure) bool { return m.WhenMeasured })
		if n := len(always); n != want {
			t.Errorf("%d rows in every %s end table, want %d", n, side, want)
		}
	}
	for _, m := range Catalogue {
		if m.Side != "" && m.Side != SideClient && m.Side != SideServer {
			t.Errorf("%s: side %q", m.ID, m.Side)
		}
	}
}

// TestRankKinds: every measure says what it is to the ranking; a ranked
// one names its statistic, what it compares, a practical floor above 0, a
// dimension, an honest name and a direction. Counts every column must
// share and structural values are never ranked, the integrity rows are
// checks (issue 21: no ★ on messages, msgs/s or wire bytes).
func TestRankKinds(t *testing.T) {
	for _, m := range Catalogue {
		r := m.Rank
		switch r.Kind {
		case Ranked:
			if r.Stat == "" || r.Of == "" || !(r.Floor > 0) || !slices.Contains(Dimensions, r.Dim) || r.Name == "" ||
				(m.Better != Higher && m.Better != Lower) || m.Hidden {
				t.Errorf("%s: ranked, but %+v (better %q, hidden %v)", m.ID, r, m.Better, m.Hidden)
			}
		case Never, Check:
			if r != (RankRule{Kind: r.Kind}) {
				t.Errorf("%s: %s, with a statistic %+v", m.ID, r.Kind, r)
			}
		default:
			t.Errorf("%s: rank kind %q, want ranked, never or check", m.ID, r.Kind)
		}
	}
	for _, id := range []string{"messages", "msg_rate", "wire_bytes", "bytes", "lost", "dup", "goroutines", "silence", "rss", "latency"} {
		if ByID(id).Rank.Kind != Never {
			t.Errorf("%s is %s, want never ranked", id, ByID(id).Rank.Kind)
		}
	}
	for _, id := range []string{"wire_truth", "server_truth", "cpu_seconds", "seconds_missing", "dropped_events", "lost_connected"} {
		if ByID(id).Rank.Kind != Check {
			t.Errorf("%s is %s, want a check", id, ByID(id).Rank.Kind)
		}
	}
	for _, d := range Dimensions[:4] { // correctness is the checks'
		n := 0
		for _, m := range Catalogue {
			if m.Rank.Dim == d {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no ranked measure for %s", d)
		}
	}
}

// TestThresholdsMapToMeasures: every key the profile accepts under
// "thresholds:" is the Threshold of exactly one measure, and every measure's
// Threshold is a key the profile accepts.
func TestThresholdsMapToMeasures(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range profile.ThresholdKeys {
		keys[k.Key] = true
		n := 0
		for _, m := range Catalogue {
			if m.Threshold == k.Key {
				n++
			}
		}
		if n != 1 {
			t.Errorf("threshold %s: %d measures, want 1", k.Key, n)
		}
		if m := ByThreshold(k.Key); m == nil || m.Value == nil {
			t.Errorf("threshold %s: no computed measure", k.Key)
		}
	}
	for _, m := range Catalogue {
		if m.Threshold != "" && !keys[m.Threshold] {
			t.Errorf("%s: threshold %q is not a key of the profile", m.ID, m.Threshold)
		}
	}
}

func TestByTitleOfStoredRows(t *testing.T) {
	for name, want := range map[string]string{
		"Messages / data":                    "messages",
		"Wire bytes / ratio":                 "wire_bytes",
		"Negotiated":                         "negotiated",
		"Reconnects (arr / markets / depth)": "reconnects",
		"Reconnects":                         "reconnects",
		"Reconnect duration (median / max)":  "reconnect_duration",
		"Lost charged to library / source":   "lost_charged",
		"RSS start → end (peak)":             "rss",
		"Something new":                      "",
		"RSS growth":                         "", // hidden: never a stored row
	} {
		got := ""
		if m := ByTitle(name); m != nil {
			got = m.ID
		}
		if got != want {
			t.Errorf("ByTitle(%q) = %q, want %q", name, got, want)
		}
	}
	if m := Find("", "Faults seen"); m == nil || m.ID != "faults" {
		t.Errorf("Find by name: %v", m)
	}
	if m := Find("lost", "a renamed row"); m == nil || m.ID != "lost" {
		t.Errorf("Find by id: %v", m)
	}
}

func TestP99(t *testing.T) {
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = float64(200 - i) // 1..200, unsorted
	}
	if got := p99(xs); got != 198 { // nearest rank: ceil(0.99 × 200) = 198th
		t.Errorf("p99 = %v, want 198", got)
	}
	if got := p99([]float64{3}); got != 3 {
		t.Errorf("p99 of one = %v", got)
	}
	if got := p99(nil); got != 0 {
		t.Errorf("p99 of none = %v", got)
	}
}

// TestBenchCatalogue: every bench measure (client and server side) has an
// id of its own (none shared with the soak's), a title, a unit, a
// direction, one formula and a column of its own in export.
func TestBenchCatalogue(t *testing.T) {
	seen := map[string]bool{}
	columns := map[string]bool{}
	for _, m := range append(slices.Clone(Bench), Chat...) {
		switch {
		case m.ID == "" || m.Title == "" || m.Unit == "" || (m.Run == nil) == (m.Chat == nil):
			t.Errorf("bench measure %+v incomplete", m)
		case m.Better != Higher && m.Better != Lower && m.Better != NoRank:
			t.Errorf("%s: direction %q", m.ID, m.Better)
		case seen[m.ID] || ByID(m.ID) != nil:
			t.Errorf("id %q repeats", m.ID)
		}
		seen[m.ID] = true
		if m.Column != "" && columns[m.Column] {
			t.Errorf("%s: column %q repeats", m.ID, m.Column)
		}
		columns[m.Column] = true
		if BenchByID(m.ID) != m {
			t.Errorf("BenchByID(%q)", m.ID)
		}
	}
	r := BenchRun{Messages: 1000, PayloadBytes: 200000, WallNS: 5e8, UserNS: 3e6, SysNS: 1e6, Syscr: 50, Rchar: 210000, Mallocs: 2000, MaxRSSKiB: 8000}
	for id, want := range map[string]float64{"bench_msg_rate": 2000, "bench_mb_rate": 0.4, "bench_cpu_per_msg": 4,
		"bench_reads_per_msg": 0.05, "bench_bytes_per_read": 4200, "bench_allocs_per_msg": 2, "bench_peak_rss": 8000,
		"bench_payload_per_msg": 200, "bench_wall_per_msg": 500_000} {
		if got := BenchValue(id, r); got != want {
			t.Errorf("%s = %v, want %v", id, got, want)
		}
	}
	if got := BenchValue("bench_cpu_per_msg", BenchRun{}); got != 0 {
		t.Errorf("a run without messages: CPU µs/msg %v, want 0", got)
	}
	if got := BenchValue("bench_wire_per_msg", r); !math.IsNaN(got) {
		t.Errorf("a run without frame bytes counted: wire bytes/msg %v, want not measured", got)
	}
}

func TestExtensionsName(t *testing.T) {
	for in, want := range map[string]string{
		"": "none",
		"permessage-deflate;client_no_context_takeover":                                  "deflate",
		"permessage-deflate;server_no_context_takeover;client_no_context_takeover":       "deflate no-takeover",
		"permessage-deflate;client_no_context_takeover;server_max_window_bits=10":        "deflate window 10",
		"permessage-deflate; server_no_context_takeover; server_max_window_bits=12; x=1": "deflate no-takeover window 12",
		"x-webkit-deflate-frame":      "x-webkit-deflate-frame",
		"subprotocol soak.msgpack.v1": "subprotocol soak.msgpack.v1",
		"permessage-deflate;server_no_context_takeover;client_no_context_takeover; subprotocol soak.packed.v1": "deflate no-takeover, subprotocol soak.packed.v1",
	} {
		if got := extensionsName(in); got != want {
			t.Errorf("extensionsName(%q) = %q, want %q", in, got, want)
		}
	}
}
