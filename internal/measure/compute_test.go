package measure

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestCompute: a run without a plan, one library: the hidden measures are
// computed next to the table's, the live-only ones are not, the reconnects
// row shows the total when there are no groups, and a subscription that was
// never silent reads 0.0 s.
func TestCompute(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "c", Name: "c", Target: "local", Started: start, Planned: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1, SampledCPU: math.NaN()}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{StreamSamples: []store.StreamSample{{Lib: "gws", Group: "g", Stream: "btcusdt@trade", Sec: 3, MsgsTotal: 40, BytesTotal: 400,
		LostTotal: 2, LostAcrossTotal: 2, DupTotal: 1}}}
	for sec := int64(1); sec <= 4; sec++ {
		b.Samples = append(b.Samples, store.Sample{Lib: "gws", Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
			HasWorker: true, Msgs: 10, MsgsTotal: 10 * sec, BytesTotal: 100 * sec, HasProc: true, RSS: sec * 1e6, CPUPct: 2})
	}
	ev := func(kind wire.EventKind, code int, dur float64) store.Event {
		return store.Event{Lib: "gws", TS: start.Add(time.Second), Sec: 1, Kind: kind, Group: "g", Code: code, DurMs: dur}
	}
	b.Events = []store.Event{ev("disconnected", 1006, 0), ev("reconnect", 0, 300), ev("disconnected", 1000, 0), ev("stall", 0, 0)}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	r, err := Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	gws := Dims{Lib: "gws"}
	for id, want := range map[string]Cell{
		"messages":      {Text: "40 / 400 B", Num: 40},
		"bytes":         {Text: "400 B", Num: 400},
		"reconnects":    {Text: "2", Num: 2},
		"silence":       {Text: "0.0 s", Num: 0},
		"lost":          {Text: "2 / 1", Num: 2},
		"dup":           {Text: "1", Num: 1},
		"errors":        {Text: "1", Num: 1},
		"stalls":        {Text: "1", Num: 1},
		"errors_stalls": {Text: "1 / 1", Num: 2},
		"reconnect_p99": {Text: "0.300 s", Num: 0.3},
		// the run has not ended: the worker's split, not yet charged
		"lost_across":    {Text: "2 (not charged yet)", Num: 2},
		"lost_connected": {Text: "0 (0 / 0)", Num: 0},
		"dropped_events": {Text: "0", Num: 0},
		"rss_growth":     {Text: "+2.0 MB", Num: 2e6}, // seconds 1..3: the drain is outside the window
	} {
		got, ok := r.Get(id, gws)
		if !ok || got.Text != want.Text || got.Num != want.Num {
			t.Errorf("%s = %+v, %v; want %+v", id, got, ok, want)
		}
	}
	// Every measured cell of a row of several values has one per part.
	for _, row := range r.Rows {
		for i, c := range row.Cells {
			if c.Text != NotMeasured && len(c.Vals) != len(row.Parts) {
				t.Errorf("%s %s: values %v, parts %v", row.Measure.ID, r.Cols[i].Lib, c.Vals, row.Parts)
			}
		}
	}
	// Each value of a cell that shows several, in its title's order.
	for id, want := range map[string][]float64{
		"messages":      {40, 400},
		"lost":          {2, 1},
		"errors_stalls": {1, 1},
		"lost_across":   {2, math.NaN(), math.NaN()},
	} {
		got, _ := r.Get(id, gws)
		row := r.Row(id)
		if len(got.Vals) != len(want) || len(row.Parts) != len(want) {
			t.Errorf("%s: values %v of parts %v, want %v", id, got.Vals, row.Parts, want)
			continue
		}
		for i := range want {
			if got.Vals[i] != want[i] && !(math.IsNaN(got.Vals[i]) && math.IsNaN(want[i])) {
				t.Errorf("%s: values %v, want %v", id, got.Vals, want)
			}
		}
	}
	if c, ok := r.Get("cpu_seconds", gws); !ok || c.Text != "- / -" || !math.IsNaN(c.Num) {
		t.Errorf("cpu_seconds = %+v, want not measured", c)
	}
	if row := r.Row("reconnects"); row == nil || row.Title != "Reconnects" {
		t.Errorf("reconnects row %+v, want the title without groups", row)
	}
	for _, id := range []string{"goroutines", "conns_up", "worker_up"} {
		if r.Row(id) != nil {
			t.Errorf("%s computed from the database: it is live only", id)
		}
	}
	if _, ok := r.Get("messages", Dims{Lib: "coder"}); ok {
		t.Error("a value for a library that did not run")
	}
}

// TestNotMeasuredWithoutMessages: not measured is not 0. gws ran the
// window, dialled and connected, but no subscription received a message:
// its lost and duplicate ids (no sequence was checked) are not measured,
// while its messages (0), rate (0), silence (the window) and reconnects (0)
// are. gws's final totals came before any time was watched (a worker
// stopped in the warm-up): its silence is not measured either. coder's
// worker died before its hello: none of the counts of its connections is
// measured.
func TestNotMeasuredWithoutMessages(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "n", Name: "n", Target: "local", Started: start, Planned: 3 * time.Second,
		Settings: map[string]string{"plan": `{"slots":[{"group":"g"}]}`}}); err != nil {
		t.Fatal(err)
	}
	for _, lib := range []string{"gorilla", "coder", "gws"} {
		w := store.Worker{Lib: lib, Module: "m", Version: "v", Pid: 1, SampledCPU: math.NaN()}
		if lib == "coder" { // recorded at its exit: no hello came
			w.Module, w.Version, w.ExitCode = "", "", 2
		}
		if err := db.UpsertWorker(w); err != nil {
			t.Fatal(err)
		}
	}
	b := &store.Batch{StreamSamples: []store.StreamSample{
		{Lib: "gorilla", Slot: 0, Group: "g", Stream: "btcusdt@trade", Sec: 3, MaxSilenceMs: 3000},
		{Lib: "gws", Slot: 0, Group: "g", Stream: "btcusdt@trade", Sec: 0},
	}}
	for _, lib := range []string{"gorilla", "gws"} {
		for sec := int64(1); sec <= 3; sec++ {
			b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: sec, TS: start.Add(time.Duration(sec) * time.Second), HasWorker: true})
		}
		b.Events = append(b.Events, store.Event{Lib: lib, TS: start, Kind: wire.EventConnected, Group: "g"})
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveTruth(nil, []store.SlotDials{{Lib: "gorilla", Group: "g", Dials: 1}, {Lib: "gws", Group: "g", Dials: 1}}); err != nil {
		t.Fatal(err)
	}
	r, err := Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	nm := Cell{Text: NotMeasured, Num: math.NaN()}
	for _, c := range []struct {
		lib, id string
		want    Cell
	}{
		{"gorilla", "messages", Cell{Text: "0 / 0 B", Num: 0}},
		{"gorilla", "msg_rate", Cell{Text: "0 / 0", Num: 0}},
		{"gorilla", "silence", Cell{Text: "3.0 s (btcusdt@trade)", Num: 3}},
		{"gorilla", "reconnects", Cell{Text: "0", Num: 0}},
		{"gorilla", "errors_stalls", Cell{Text: "0 / 0", Num: 0}},
		{"gorilla", "stalled_at_end", Cell{Text: "0", Num: 0}},
		{"gorilla", "lost", nm},
		{"gorilla", "dup", nm},
		{"gorilla", "lost_across", nm},
		{"gorilla", "lost_connected", nm},
		{"gws", "silence", nm},
		{"gws", "lost", nm},
		{"coder", "messages", nm},
		{"coder", "msg_rate", nm},
		{"coder", "silence", nm},
		{"coder", "lost", nm},
		{"coder", "reconnects", nm},
		{"coder", "errors_stalls", nm},
		{"coder", "errors", nm},
		{"coder", "stalls", nm},
		{"coder", "unrepairable", nm},
		{"coder", "stalled_at_end", nm},
		{"coder", "dials", nm},
	} {
		got, ok := r.Get(c.id, Dims{Lib: c.lib})
		same := got.Text == c.want.Text && (got.Num == c.want.Num || math.IsNaN(got.Num) && math.IsNaN(c.want.Num))
		if !ok || !same {
			t.Errorf("%s %s = %+v, want %+v", c.lib, c.id, got, c.want)
		}
	}
}

// TestSecondsMissingAtEnd: the seconds of the window a run lived through
// without a row are missing, recorded or not: a run whose rows stop at 6 of
// 14 s because its last batches never reached the disk counts 8 missing
// when done, when its end could not be recorded (running after its window,
// or owned by no process), and up to its end instant when failed; an
// interrupted run, or one still written inside its window, counts up to
// its last second recorded.
func TestSecondsMissingAtEnd(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		status string
		ended  time.Duration // after start; 0: none recorded
		now    time.Duration // after start
		owned  bool
		want   string
	}{
		{"done", 16 * time.Second, time.Hour, false, "8"},
		{"failed: write batch: 10 batches not written", 10 * time.Second, time.Hour, false, "4"},
		{"interrupted", 7 * time.Second, time.Hour, false, "0"},
		{"running", 0, 16 * time.Second, true, "8 (the run did not record its end)"},  // soak run's own table: its writes failed
		{"running", 0, 10 * time.Second, false, "4 (the run did not record its end)"}, // its controller died at 6 s
		{"running", 0, 10 * time.Second, true, "0"},                                   // still written, in its window
	} {
		dir := t.TempDir()
		db, err := store.Open(filepath.Join(dir, "soak.db"))
		if err != nil {
			t.Fatal(err)
		}
		run := store.Run{ID: "m", Name: "m", Target: "local", Started: start, Planned: 14 * time.Second, Status: tc.status}
		if tc.ended > 0 {
			run.Ended = start.Add(tc.ended)
		}
		if err := db.CreateRun(run); err != nil {
			t.Fatal(err)
		}
		if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", SampledCPU: math.NaN()}); err != nil {
			t.Fatal(err)
		}
		b := &store.Batch{}
		for sec := int64(1); sec <= 6; sec++ {
			b.Samples = append(b.Samples, store.Sample{Lib: "gws", Sec: sec, TS: start.Add(time.Duration(sec) * time.Second), HasWorker: true,
				Msgs: 10, MsgsTotal: 10 * sec})
		}
		if err := db.Write(b); err != nil {
			t.Fatal(err)
		}
		var lock *rundir.Lock
		if tc.owned {
			if lock, err = rundir.TakeLock(dir); err != nil {
				t.Fatal(err)
			}
		}
		r, err := computeAt(db, start.Add(tc.now))
		lock.Release()
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if c, _ := r.Get("seconds_missing", Dims{Lib: "gws"}); c.Text != tc.want {
			t.Errorf("%s, now %v, owned %v: seconds missing %q, want %q", tc.status, tc.now, tc.owned, c.Text, tc.want)
		}
	}
}

// TestServerSideRows: a server-side soak's table has the rows of a server
// and none of a market client's: deliveries, the end account's check,
// clients dropped by cause, write syscalls per delivery over the window,
// broadcast latency and its per-second mean; a chat server's heap is not
// measured (no row, no series), not 0.
func TestServerSideRows(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "s", Name: "s", Target: "local chat servers", Status: "done", Started: start, Planned: 4 * time.Second,
		Settings: map[string]string{"side": SideServer}}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "chat server", Started: start, Ended: start.Add(5 * time.Second),
		LatCount: 400, LatP50: 1000, LatP99: 8000, LatMax: 9000}); err != nil { // the load client's account of the window
		t.Fatal(err)
	}
	b := &store.Batch{}
	for sec := int64(1); sec <= 4; sec++ {
		b.Samples = append(b.Samples, store.Sample{Lib: "gws", Sec: sec, TS: start.Add(time.Duration(sec) * time.Second), HasWorker: true,
			Msgs: 100, MsgsTotal: 100 * sec, Bytes: 800, BytesTotal: 800 * sec, LatP50: 1000, LatP99: 2000 * sec, LatMax: 9000,
			HasDrops: true, Writes: 50, HasProc: true, RSS: 20e6, CPUPct: 3})
	}
	b.Events = []store.Event{
		{Lib: "gws", TS: start.Add(2 * time.Second), Sec: 2, Kind: wire.EventDropped, Fault: wire.FaultSlowReader, Code: 1, Slot: -1},
		{Lib: "gws", TS: start.Add(3 * time.Second), Sec: 3, Kind: wire.EventDropped, Fault: wire.FaultHalfOpen, Code: 2, Slot: -1},
		{Lib: "gws", TS: start.Add(5 * time.Second), Sec: 5, Kind: wire.EventTruth, Slot: -1,
			Detail: "exact: clients read 400 deliveries, the server wrote 400 (less 0 to the 3 clients it dropped)"},
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	r, err := Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	tbl := r.EndTable()
	var ids []string
	for _, row := range tbl.Rows {
		ids = append(ids, row.ID)
	}
	var want []string
	for _, m := range TableOf(SideServer) {
		if !m.WhenMeasured {
			want = append(want, m.ID)
		}
	}
	if !slices.Equal(ids, want) || tbl.Side != SideServer {
		t.Errorf("rows %v (side %q), want the server's %v", ids, tbl.Side, want)
	}
	gws := Dims{Lib: "gws"}
	for id, w := range map[string]string{
		"deliveries":          "400 / 3.2 kB",
		"chat_truth":          "✓ exact: clients read 400 deliveries, the server wrote 400",
		"drops":               "1 / 2",
		"writes_per_delivery": "0.50",
		"broadcast_latency":   "1.00 / 8.00",
		"latency_mean_p99":    "5.00",
	} {
		if c, ok := r.Get(id, gws); !ok || c.Text != w {
			t.Errorf("%s = %q (%v), want %q", id, c.Text, ok, w)
		}
	}
	for _, id := range []string{"heap", "messages", "lost", "dials", "wire_truth"} {
		if r.Row(id) != nil {
			t.Errorf("%s: a market client's row in a server-side soak", id)
		}
	}
	if heap := r.Series[0].Heap; len(finiteOf(heap)) != 0 {
		t.Errorf("a chat server's heap series %v, want none measured", heap)
	}
	if c, _ := r.Get("drops", gws); !slices.Equal(c.Vals, []float64{1, 2}) {
		t.Errorf("drops by cause %v, want slow readers 1, half-open 2", c.Vals)
	}
}
