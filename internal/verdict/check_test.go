package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

func endRow(id string, cells []string, nums []float64) measure.EndRow {
	m := measure.ByID(id)
	return measure.EndRow{ID: id, Name: m.Title, Unit: m.Unit, Better: m.Better, Cells: cells, Nums: nums}
}

// TestChecks: every check row of a two-column table and every threshold,
// each with what decides it.
func TestChecks(t *testing.T) {
	nan := math.NaN()
	tbl := &measure.EndTable{Libs: []string{"gorilla", "gws"}, Rows: []measure.EndRow{
		endRow("messages", []string{"10", "9"}, []float64{10, 9}), // never ranked, no check
		endRow("wire_truth", []string{"✓ 1 MB on 3 slots", "✗ 1 of 3 slots differ"}, []float64{0, 4}),
		endRow("server_truth", []string{"-", "-"}, []float64{nan, nan}),
		endRow("cpu_seconds", []string{"1.98 / 2.00", "1.50 / 2.00"}, []float64{1.98, 1.5}),
		endRow("faults", []string{"0", "2"}, []float64{0, 2}),
		endRow("lost_connected", []string{"0 (0 / 0)", "3 (0 / 3)"}, []float64{0, 3}),
		endRow("dropped_events", []string{"0", "0"}, []float64{0, 0}),
		endRow("seconds_missing", []string{"1 (outage at 6 s: 1.4 s)", "0"}, []float64{1, 0}),
	}}
	ws := []store.Worker{
		{Lib: "gorilla", RusageUser: 1.5, RusageSys: 0.5, SampledCPU: 1.98}, // within 5 %
		{Lib: "gws", RusageUser: 1.5, RusageSys: 0.5, SampledCPU: 1.5},      // 25 % short
	}
	vs := []store.Verdict{
		{Lib: "gorilla", Threshold: "max_lost", Value: 0, Limit: 0, Unit: "ids", Ord: 0},
		{Lib: "gws", Threshold: "max_lost", Value: 3, Limit: 0, Unit: "ids", Broken: true, Ord: 0},
		{Lib: "gorilla", Threshold: "max_latency_p99", Value: nan, Limit: 1, Unit: "s", Ord: 1},
		{Lib: "gws", Threshold: "max_latency_p99", Value: nan, Limit: 1, Unit: "s", Ord: 1},
		{Lib: "gorilla", Threshold: "max_errors", Value: 0, Limit: 0, Unit: "count", Ord: 2},
		{Lib: "gws", Threshold: "max_errors", Value: nan, Limit: 0, Unit: "count", Ord: 2},
	}
	got := Checks(tbl, ws, vs)
	want := []struct {
		name  string
		state State
		text  string // in Failed or Note
	}{
		{"Wire bytes: client = server", Fail, "gws: ✗ 1 of 3 slots differ"},
		{"Received = server sent (per subscription)", Skip, "not checked: gorilla not measured; gws not measured"},
		{"CPU s sampled / rusage", Fail, "gws: sampled 1.50 s, rusage 2.00 s (-25.0 %, over the 0.10 s allowed)"},
		{"Lost while connected (library / source)", Pass, "not checked: gws faults injected"},
		{"Events dropped by the worker", Pass, "every column"},
		{"Seconds missing", Fail, "gorilla: 1 (outage at 6 s: 1.4 s)"},
		{"threshold max_lost", Fail, "gws: 3 ids > limit 0 ids"},
		{"threshold max_latency_p99", Skip, "not measured for any column"},
		{"threshold max_errors", Pass, "skipped for gws (not measured); the others ≤ 0 count"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d checks: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		text := g.Note
		if g.State == Fail {
			text = strings.Join(g.Failed, "; ")
		}
		if g.Name != w.name || g.State != w.state || text != w.text {
			t.Errorf("check %d: %s %s %q\nwant      %s %s %q", i, g.Name, g.State, text, w.name, w.state, w.text)
		}
	}
	if h := Headline(got); h != "✗ 4 checks failed: Wire bytes: client = server (gws), CPU s sampled / rusage (gws), Seconds missing (gorilla), threshold max_lost (gws)" {
		t.Errorf("headline %q", h)
	}
	if c := Correctness(got); !strings.HasPrefix(c, "✗ 4 of 9 checks failed: ") {
		t.Errorf("correctness %q", c)
	}
	passed := []Item{{Name: "a", State: Pass}, {Name: "b", State: Skip}}
	if Headline(passed) != "" || Correctness(passed) != "every check made passed (1); 1 not checked (see Checks)" {
		t.Errorf("no failure: %q, %q", Headline(passed), Correctness(passed))
	}
}
