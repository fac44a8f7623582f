package measure

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
)

// TestEndTableRoundTrip: the end table of a two-library run has its
// libraries in column order and only the measures that are not hidden, in
// catalogue order; the rows it stores (SummaryRows) read back, in any
// order, as the same table — which is what a finished run's report shows.
func TestEndTableRoundTrip(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	run := store.Run{ID: "rt", Name: "rt", Target: "local", Started: start, Planned: 5 * time.Second}
	if err := db.CreateRun(run); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for i, lib := range []string{"gws", "gorilla"} { // out of column order on purpose
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "m", Version: "v", Pid: i + 1, SampledCPU: math.NaN()}); err != nil {
			t.Fatal(err)
		}
		for sec := int64(1); sec <= 5; sec++ {
			b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
				HasWorker: true, Msgs: 10 * int64(i+1), MsgsTotal: 10 * int64(i+1) * sec, HasProc: true, RSS: sec * 1e6, CPUPct: 2})
		}
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	tbl, err := Summarize(db)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tbl.Libs, []string{"gorilla", "gws"}) || tbl.RunID != "rt" || tbl.Seconds != 5 {
		t.Fatalf("table of run %q, %d s, libraries %v; want rt, 5 s, gorilla,gws", tbl.RunID, tbl.Seconds, tbl.Libs)
	}
	var want []string
	for _, m := range TableOf(SideClient) {
		if !m.WhenMeasured { // a run without a blackhole: none of its rows
			want = append(want, m.ID)
		}
	}
	var got []string
	for _, r := range tbl.Rows {
		got = append(got, r.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want the client soak's measures that are not hidden %v", got, want)
	}
	if r := tbl.Rows[0]; r.ID != "messages" || r.Nums[0] != 100 || r.Nums[1] != 50 {
		t.Errorf("first row %+v, want messages gorilla 100, gws 50", r)
	}

	rows := tbl.SummaryRows()
	if len(rows) != len(tbl.Rows)*len(tbl.Libs) {
		t.Fatalf("%d stored rows, want %d", len(rows), len(tbl.Rows)*len(tbl.Libs))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	back := EndTableFromRows(run, rows)
	if back.RunID != tbl.RunID || back.Seconds != tbl.Seconds || !slices.Equal(back.Libs, tbl.Libs) || len(back.Rows) != len(tbl.Rows) {
		t.Fatalf("read back %s %d s %v with %d rows, want %s %d s %v with %d rows",
			back.RunID, back.Seconds, back.Libs, len(back.Rows), tbl.RunID, tbl.Seconds, tbl.Libs, len(tbl.Rows))
	}
	// Shuffled, the rows come back in the order of their first stored cell;
	// each must be its measure's row with the same cells.
	for _, r := range back.Rows {
		i := slices.IndexFunc(tbl.Rows, func(w EndRow) bool { return w.ID == r.ID })
		if i < 0 {
			t.Errorf("read back a row %q of no measure of the table", r.ID)
			continue
		}
		w := tbl.Rows[i]
		same := slices.EqualFunc(r.Nums, w.Nums, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })
		if r.Name != w.Name || r.Unit != w.Unit || r.Better != w.Better || !slices.Equal(r.Cells, w.Cells) || !same {
			t.Errorf("row %s read back as %+v, want %+v", r.ID, r, w)
		}
	}
}
