package report

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/verdict"
	"github.com/wssoak/wssoak/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// knownRun writes a run whose every figure is known: two libraries, ten
// seconds, gws with a disconnect, a reconnect, a loss and a stall.
func knownRun(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	start := time.Unix(1_800_000_000, 0)
	plan := `{"slots":[{"group":"arr"},{"group":"markets"},{"group":"markets"},{"group":"depth"}]}`
	if err := db.CreateRun(store.Run{ID: "r1", Name: "known", Target: "ws://127.0.0.1:1", Started: start,
		Planned: 10 * time.Second, Settings: map[string]string{"plan": plan}}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for _, lib := range []string{"gws", "gorilla"} { // out of column order on purpose
		w := store.Worker{Lib: lib, Module: "m/" + lib, Version: "v1", Pid: 1, Started: start,
			RusageUser: 1.5, RusageSys: 0.5, SampledCPU: 1.98, LatCount: 100, LatP50: 1500, LatP99: 12000, LatMax: 20000}
		if lib == "gws" {
			w.DroppedEvents = 2 // its channel to the frame writer was full twice
		}
		if err := db.UpsertWorker(w); err != nil {
			t.Fatal(err)
		}
		var total int64
		for sec := int64(1); sec <= 11; sec++ { // second 11 is the drain, outside the window
			msgs := int64(1000)
			if sec == 4 {
				msgs = 5000 // the peak second
			}
			if lib == "gws" && sec == 6 {
				msgs = 0 // the outage
			}
			total += msgs
			if lib == "gorilla" && sec == 7 {
				continue // lost: the controller was down (the outage event below)
			}
			b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
				HasWorker: true, Msgs: msgs, Bytes: msgs * 200, MsgsTotal: total, BytesTotal: total * 200,
				HasProc: true, RSS: int64(10e6 + sec*1e6), CPUPct: float64(sec)})
		}
		b.StreamSamples = append(b.StreamSamples,
			store.StreamSample{Lib: lib, Slot: 1, Group: "markets", Stream: "btcusdt@trade", Sec: 10, MsgsTotal: 900, MaxSilenceMs: 400},
			store.StreamSample{Lib: lib, Slot: 3, Group: "depth", Stream: "btcusdt@depth@100ms", Sec: 10, MsgsTotal: 100, MaxSilenceMs: 900})
	}
	b.StreamSamples = append(b.StreamSamples,
		// ids 10–12 lost by both libraries while connected (the source), 40–43
		// by gws alone at its reconnect (charged to the library)
		store.StreamSample{Lib: "gws", Slot: 2, Group: "markets", Stream: "ethusdt@trade", Sec: 10, MsgsTotal: 800, LostTotal: 7, LostAcrossTotal: 4, DupTotal: 1, MaxSilenceMs: 2500},
		store.StreamSample{Lib: "gorilla", Slot: 2, Group: "markets", Stream: "ethusdt@trade", Sec: 10, MsgsTotal: 804, LostTotal: 3, MaxSilenceMs: 300},
		// a retired stream: never a message, stalled since second 3 and still at the end
		store.StreamSample{Lib: "gws", Slot: 0, Group: "arr", Stream: "!ticker@arr", Sec: 10, MaxSilenceMs: 10000, StallsTotal: 1, Stalled: true})
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	b.Events = append(b.Events,
		store.Event{Lib: "gws", TS: at(5.5), Sec: 5.5, Kind: "disconnected", Slot: 2, Group: "markets", Code: 1006, Detail: "eof"},
		store.Event{Lib: "gws", TS: at(7.5), Sec: 7.5, Kind: "reconnect", Slot: 2, Group: "markets", DurMs: 2000},
		store.Event{Lib: "gws", TS: at(6.0), Sec: 6.0, Kind: "disconnected", Slot: 3, Group: "depth", Code: 1001, Detail: "server close"},
		store.Event{Lib: "gws", TS: at(6.2), Sec: 6.2, Kind: "reconnect", Slot: 3, Group: "depth", DurMs: 200},
		store.Event{Lib: "gws", TS: at(6.9), Sec: 6.9, Kind: "reconnect", Slot: 3, Group: "depth", DurMs: 350},
		store.Event{Lib: "gws", TS: at(8.0), Sec: 8.0, Kind: "stall", Slot: 2, Group: "markets", Stream: "ethusdt@trade"},
		store.Event{Lib: "gws", TS: at(3.0), Sec: 3.0, Kind: "stall", Slot: 0, Group: "arr", Stream: "!ticker@arr"},
		store.Event{Lib: "gorilla", TS: at(10.5), Sec: 10.5, Kind: "closed", Slot: 1, Group: "markets", Code: 1000},
		store.Event{TS: at(6), Sec: 6, Kind: "outage", Slot: -1, DurMs: 1400},
		store.Event{Lib: "gws", TS: at(5.4), Sec: 5.4, Kind: wire.EventFault, Fault: wire.FaultReset, Slot: -1, Detail: "reset"},
		store.Event{Lib: "gorilla", TS: at(5.4), Sec: 5.4, Kind: wire.EventFault, Fault: wire.FaultReset, Slot: -1, Detail: "reset"},
		store.Event{Lib: "gws", TS: at(9.0), Sec: 9.0, Kind: wire.EventFault, Fault: wire.FaultDrop, Slot: -1, Detail: "drop n=3"},
		store.Event{Lib: "gws", TS: at(9.5), Sec: 9.5, Kind: "unrepairable", Slot: 2, Group: "markets"},
		store.Event{Lib: "gws", TS: at(9.8), Sec: 9.8, Kind: "unrepairable", Slot: 2, Group: "markets"},
	)
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	charges := []store.LostCharge{
		{Lib: "gws", Slot: 2, Group: "markets", Stream: "ethusdt@trade", Lost: 7, Library: 4, Source: 3, Gaps: [][2]int64{{10, 12}, {40, 43}},
			LostAcross: 4, LibraryAcross: 4},
		{Lib: "gorilla", Slot: 2, Group: "markets", Stream: "ethusdt@trade", Lost: 3, Source: 3, Gaps: [][2]int64{{10, 12}}},
	}
	for i := range charges {
		charges[i].SetConnected()
	}
	if err := db.SaveTruth(charges, []store.SlotDials{
		{Lib: "gws", Slot: 2, Group: "markets", Dials: 5, DialFails: 3, Statuses: map[string]int64{"429": 1, "503": 2}, Unrepairable: true},
		{Lib: "gws", Slot: 3, Group: "depth", Dials: 2},
		{Lib: "gorilla", Slot: 2, Group: "markets", Dials: 1},
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSummarizeKnownRun(t *testing.T) {
	tbl, err := measure.Summarize(knownRun(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tbl.Libs, ",") != "gorilla,gws" {
		t.Fatalf("columns %v, want gorilla,gws", tbl.Libs)
	}
	want := map[string][2]float64{ // row -> primary number per library
		"Messages / data":                           {15000, 14000},
		"Avg / peak msgs/s":                         {11000.0 / 7, 12000.0 / 9}, // seconds 2..10 whose previous second is recorded (gorilla: not 7, 8)
		"RSS start → end (peak)":                    {20e6, 20e6},
		"CPU avg (% of one core)":                   {47.0 / 8, 6}, // seconds 2..10 (gorilla without 7)
		"CPU s sampled / rusage":                    {1.98, 1.98},
		"Reconnects (arr / markets / depth)":        {0, 2},
		"Reconnect duration (median / max)":         {math.NaN(), 2000}, // no reconnect: no number
		"Max seconds without data":                  {0.9, 10},
		"Lost / duplicate (sequence ids)":           {3, 7},
		"Lost across reconnects (library / source)": {0, 4},
		"Lost while connected (library / source)":   {3, 3},
		"Events dropped by the worker":              {0, 2},
		"Latency p50 / p99 (ms)":                    {12, 12},
		"Errors / stalls":                           {0, 3}, // the 1001 close is no error; one error, two stalls
		"Faults seen":                               {1, 2},
		"Dials / failed (status × n)":               {0, 3},
		"Unrepairable slots":                        {0, 1}, // two events, one slot
		"Stalled subscriptions at end":              {0, 1},
		"Seconds missing":                           {1, 0},
		"Wire bytes / ratio":                        {math.NaN(), math.NaN()}, // a run recorded before wire bytes
		"Negotiated":                                {math.NaN(), math.NaN()}, // no connected event in it
		"Wire bytes: client = server":               {math.NaN(), math.NaN()}, // no server counts in it
		"Received = server sent (per subscription)": {math.NaN(), math.NaN()}, // nor any other
		// seconds 6..10, the window's second half (gorilla without 7): 16, 18, 19, 20 MB and 16..20 MB
		"RSS steady level (median of the window's second half)": {18.5e6, 18e6},
		"RSS growth (MB/h after the first minute)":              {math.NaN(), math.NaN()}, // a 10 s window has no second minute
		"Go heap (mean, MB)":                                    {0, 0},                   // recorded as 0 in every second
		"Latency: mean of per-second p99 (ms)":                  {math.NaN(), math.NaN()}, // no second recorded a p99
	}
	for _, r := range tbl.Rows {
		w, ok := want[r.Name]
		if !ok {
			t.Errorf("unexpected row %q", r.Name)
			continue
		}
		delete(want, r.Name)
		for i := range w {
			if d := r.Nums[i] - w[i]; d > 1e-9 || d < -1e-9 || math.IsNaN(r.Nums[i]) != math.IsNaN(w[i]) {
				t.Errorf("%s %s: %v, want %v", r.Name, tbl.Libs[i], r.Nums[i], w[i])
			}
		}
	}
	for name := range want {
		t.Errorf("missing row %q", name)
	}
	var buf bytes.Buffer
	WriteText(&buf, tbl)
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantText, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(wantText) {
		t.Errorf("table text differs from %s (run with -update after checking):\n%s", golden, buf.String())
	}
}

// TestAvgRateOverOneSecondCounts: a worker that receives exactly 1,000
// messages every second, whose first frame also holds 2,000 messages of the
// warm-up and which was stopped for seconds 6–8 (no frame; its frame for
// second 9 counts the messages of seconds 6–9). The average and the peak
// are over the seconds whose count covers exactly one second: 1,000 and
// 1,000, not inflated by the first second or the frame after the gap.
func TestAvgRateOverOneSecondCounts(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "r", Name: "r", Target: "local", Started: start, Planned: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	total := int64(2000) // received during the warm-up
	last := int64(0)     // the total of the worker's previous frame
	for sec := int64(1); sec <= 10; sec++ {
		total += 1000
		if sec >= 6 && sec <= 8 {
			continue // stopped: no frame
		}
		b.Samples = append(b.Samples, store.Sample{Lib: "gws", Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
			HasWorker: true, Msgs: total - last, MsgsTotal: total})
		last = total
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	tbl, err := measure.Summarize(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tbl.Rows {
		if r.Name == "Avg / peak msgs/s" {
			if r.Nums[0] != 1000 || r.Cells[0] != "1,000 / 1,000" {
				t.Errorf("avg / peak %q (%v), want 1,000 / 1,000", r.Cells[0], r.Nums[0])
			}
			return
		}
	}
	t.Fatal("no avg row")
}

// TestSummarizeNotMeasured: gws's worker never sent a frame and was never
// sampled (the run was interrupted during the warm-up; its rusage is known):
// every value that was not measured is "-" with no number, stored as NULL,
// never 0; gorilla's are measured.
func TestSummarizeNotMeasured(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "r", Name: "r", Target: "local", Started: start, Planned: 10 * time.Second, Status: "interrupted"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []store.Worker{
		{Lib: "gorilla", Module: "m", Version: "v", Pid: 1, RusageUser: 0.5, SampledCPU: 0.5, LatCount: 10, LatP50: 500, LatP99: 900},
		{Lib: "gws", Module: "m", Version: "v", Pid: 2, RusageUser: 0.04, RusageSys: 0.01, SampledCPU: math.NaN()},
	} {
		if err := db.UpsertWorker(w); err != nil {
			t.Fatal(err)
		}
	}
	b := &store.Batch{}
	for sec := int64(1); sec <= 3; sec++ {
		b.Samples = append(b.Samples, store.Sample{Lib: "gorilla", Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
			HasWorker: true, Msgs: 10, MsgsTotal: 10 * sec, HasProc: true, RSS: 12e6, CPUPct: 2})
	}
	b.StreamSamples = []store.StreamSample{{Lib: "gorilla", Group: "g", Stream: "btcusdt@trade", Sec: 3, MsgsTotal: 30, MaxSilenceMs: 200}}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	tbl, err := measure.Summarize(db)
	if err != nil {
		t.Fatal(err)
	}
	gwsCells := map[string]string{
		"Messages / data":                           "-",
		"Avg / peak msgs/s":                         "-",
		"RSS start → end (peak)":                    "-",
		"CPU avg (% of one core)":                   "-",
		"CPU s sampled / rusage":                    "- / 0.05",
		"Reconnect duration (median / max)":         "-",
		"Max seconds without data":                  "-",
		"Lost / duplicate (sequence ids)":           "-",
		"Lost across reconnects (library / source)": "-",
		"Lost while connected (library / source)":   "-",
		"Latency p50 / p99 (ms)":                    "-",
		"Dials / failed (status × n)":               "-",
	}
	for _, r := range tbl.Rows {
		want, ok := gwsCells[r.Name]
		if !ok {
			continue
		}
		delete(gwsCells, r.Name)
		if r.Cells[1] != want || !math.IsNaN(r.Nums[1]) {
			t.Errorf("%s: gws %q (%v), want %q and no number", r.Name, r.Cells[1], r.Nums[1], want)
		}
		if r.Name == "RSS start → end (peak)" && (r.Cells[0] != "12.0 → 12.0 MB (12.0)" || r.Nums[0] != 12e6) {
			t.Errorf("gorilla's RSS %q (%v), want measured", r.Cells[0], r.Nums[0])
		}
	}
	for name := range gwsCells {
		t.Errorf("no row %q", name)
	}
	if err := db.SaveSummary(tbl.SummaryRows()); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Summary()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Lib == "gws" && r.Metric == "RSS start → end (peak)" && !math.IsNaN(r.Num) {
			t.Errorf("gws RSS stored as %v, want NULL", r.Num)
		}
	}
}

// TestDialsCellAccept: failed dials are shown by HTTP status, and a 101 the
// library refused (a wrong Sec-WebSocket-Accept) as accept — also when an
// older database stored it under "101", which is no refusal.
func TestDialsCellAccept(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(store.Run{ID: "r", Name: "r", Target: "local", Started: time.Unix(1_800_000_000, 0), Planned: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gorilla", Module: "m", Version: "v", Pid: 1}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveTruth(nil, []store.SlotDials{
		{Lib: "gorilla", Slot: 0, Group: "g", Dials: 7, DialFails: 6, Statuses: map[string]int64{"accept": 3, "429": 1}},
		{Lib: "gorilla", Slot: 1, Group: "g", Dials: 2, DialFails: 2, Statuses: map[string]int64{"101": 2}},
	}); err != nil {
		t.Fatal(err)
	}
	tbl, err := measure.Summarize(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tbl.Rows {
		if r.Name == "Dials / failed (status × n)" {
			if want := "9 / 8 (429×1, accept×5)"; r.Cells[0] != want || r.Nums[0] != 8 {
				t.Errorf("dials cell %q (%v), want %q (8)", r.Cells[0], r.Nums[0], want)
			}
			return
		}
	}
	t.Fatal("no dials row")
}

// TestFindingsKnownRun: what soak run prints at the end of the known run —
// the failed checks named first, the table with its call column, the
// checks and the summary — against testdata/findings.golden, and the same
// against gorilla as the baseline (findings-baseline.golden).
func TestFindingsKnownRun(t *testing.T) {
	db := knownRun(t)
	res, err := measure.Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := db.Workers()
	if err != nil {
		t.Fatal(err)
	}
	tbl := res.EndTable()
	vs := []store.Verdict{{Lib: "gorilla", Threshold: "max_lost", Value: 3, Limit: 5, Unit: "ids"},
		{Lib: "gws", Threshold: "max_lost", Value: 7, Limit: 5, Unit: "ids", Broken: true}}
	f := Findings{Table: tbl, Ranking: ranking.Compute(res), Checks: verdict.Checks(tbl, ws, vs)}
	for _, tc := range []struct{ baseline, golden string }{{"", "findings.golden"}, {"gorilla", "findings-baseline.golden"}} {
		f.Baseline = tc.baseline
		var buf bytes.Buffer
		WriteFindings(&buf, f, TextOptions{Wide: true})
		out := buf.String()
		if !strings.HasPrefix(out, "✗ 3 checks failed: Events dropped by the worker (gws), Seconds missing (gorilla), threshold max_lost (gws)\n") {
			t.Errorf("%s: the first line does not name every failed check:\n%s", tc.golden, out)
		}
		checkGolden(t, tc.golden, buf.Bytes())
	}
}
