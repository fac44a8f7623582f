package compare

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/report/synth"
	"github.com/wssoak/wssoak/internal/store"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// knownRun writes a database holding only a run record and an end table.
func knownRun(t *testing.T, id string, rows []store.SummaryRow) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(store.Run{ID: id, Name: "local", Target: "ws://127.0.0.1:9443", Status: "done",
		Started: time.Unix(1_800_000_000, 0), Planned: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if rows != nil {
		if err := db.SaveSummary(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func load(t *testing.T, path, name string) Side {
	t.Helper()
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := Load(db, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func row(ord int, metric, lib, value string, num float64) store.SummaryRow {
	return store.SummaryRow{Metric: metric, Lib: lib, Value: value, Num: num, Ord: ord}
}

// TestWriteGolden: two known tables; B has a library A lacks, A a metric B
// lacks, a NaN number and a zero in A (no Δ %).
func TestWriteGolden(t *testing.T) {
	a := knownRun(t, "20261130-100000-local", []store.SummaryRow{
		row(0, "Messages / data", "gorilla", "165.6 k / 34.3 MB", 165_600),
		row(0, "Messages / data", "gws", "165.6 k / 34.3 MB", 165_600),
		row(2, "RSS start → end (peak)", "gorilla", "13.1 → 14.2 MB (14.9)", 14.2e6),
		row(2, "RSS start → end (peak)", "gws", "13.0 → 17.0 MB (17.5)", 17.0e6),
		row(3, "CPU avg (% of one core)", "gorilla", "2.9 %", 2.9),
		row(3, "CPU avg (% of one core)", "gws", "3.1 %", 3.1),
		row(6, "Reconnect duration (median / max)", "gorilla", "-", math.NaN()),
		row(6, "Reconnect duration (median / max)", "gws", "6 ms / 180 ms", 180),
		row(8, "Lost / duplicate (sequence ids)", "gorilla", "0 / 0", 0),
		row(8, "Lost / duplicate (sequence ids)", "gws", "0 / 0", 0),
		row(9, "Only in A", "gws", "x", 1),
	})
	b := knownRun(t, "20261201-100000-local", []store.SummaryRow{
		row(0, "Messages / data", "gorilla", "170.0 k / 35.2 MB", 170_012),
		row(0, "Messages / data", "gws", "160.0 k / 33.1 MB", 160_000),
		row(0, "Messages / data", "coder", "170.0 k / 35.2 MB", 170_012),
		row(2, "RSS start → end (peak)", "gorilla", "13.0 → 15.0 MB (15.2)", 15.0e6),
		row(2, "RSS start → end (peak)", "gws", "13.0 → 16.5 MB (17.0)", 16.5e6),
		row(3, "CPU avg (% of one core)", "gorilla", "3.2 %", 3.2),
		row(3, "CPU avg (% of one core)", "gws", "2.8 %", 2.8),
		row(6, "Reconnect duration (median / max)", "gorilla", "5 ms / 90 ms", 90),
		row(6, "Reconnect duration (median / max)", "gws", "7 ms / 250 ms", 250),
		row(8, "Lost / duplicate (sequence ids)", "gorilla", "3 / 0", 3),
		row(8, "Lost / duplicate (sequence ids)", "gws", "0 / 0", 0),
	})
	var buf bytes.Buffer
	Write(&buf, load(t, a, "runs/a"), load(t, b, "runs/b"), Options{})
	golden(t, "testdata/compare.golden", buf.String())
	for _, want := range []string{"+4,412 messages", "+2.7 %", "-5,600 messages", "-3.4 %", "+0.30 pp", "+70.0 ms", "-0.5 MB"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("comparison lacks %q", want)
		}
	}
}

// A run without a stored table (still going, or crashed) is summarised from its rows.
func TestLoadComputesMissingTable(t *testing.T) {
	path := knownRun(t, "r", nil)
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1}); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(&store.Batch{Samples: []store.Sample{{Lib: "gws", Sec: 1, TS: time.Unix(1_800_000_001, 0),
		HasWorker: true, Msgs: 1234, MsgsTotal: 1234}}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := load(t, path, "r")
	found := false
	for _, r := range s.Rows {
		if r.Metric == "Messages / data" && r.Lib == "gws" && r.Num == 1234 {
			found = true
		}
	}
	if !found {
		t.Errorf("computed table lacks gws's 1234 messages: %+v", s.Rows)
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update if intended):\n%s", path, got)
	}
}

// sampledRun writes a run without a stored table whose gws worker sent
// frames for seconds 1–3; with sampled, the controller also sampled its
// process (RSS 12 MB, 2 % CPU), else it never did (a worker that was
// stopped before its first sample).
func sampledRun(t *testing.T, id string, sampled bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: id, Name: "local", Target: "local", Status: "done", Started: start, Planned: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	w := store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1, RusageUser: 1.3, SampledCPU: math.NaN()}
	if sampled {
		w.SampledCPU = 1.3
	}
	if err := db.UpsertWorker(w); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for sec := int64(1); sec <= 3; sec++ {
		b.Samples = append(b.Samples, store.Sample{Lib: "gws", Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
			HasWorker: true, Msgs: 10, MsgsTotal: 10 * sec, HasProc: sampled, RSS: 12e6, CPUPct: 2})
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNotMeasuredHasNoDifference: B's worker was never sampled, so its RSS,
// CPU average and sampled CPU are "-" (NULL): compare shows no difference for
// them, not B − A against 0; the messages, measured in both, still differ by 0.
func TestNotMeasuredHasNoDifference(t *testing.T) {
	a := load(t, sampledRun(t, "a", true), "A")
	b := load(t, sampledRun(t, "b", false), "B")
	var out bytes.Buffer
	Write(&out, a, b, Options{Wide: true}) // the rows' full names
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		for _, m := range []string{"RSS start → end (peak)", "CPU avg (% of one core)", "CPU s sampled / rusage", "Messages / data"} {
			if strings.HasPrefix(l, m) {
				lines[m] = strings.Join(strings.Fields(strings.TrimPrefix(l, m)), " ")
			}
		}
	}
	for m, want := range map[string]string{
		"RSS start → end (peak)":  "12.0 → 12.0 MB (12.0) - - -",
		"CPU avg (% of one core)": "2.0 % - - -",
		// B's rusage was measured: its value is compared, the sampled one not.
		"CPU s sampled / rusage": "1.30 / 1.30 (+0.0 %) - / 1.30 - / +0.00 s - / +0.0 %",
		"Messages / data":        "30 / 0 B 30 / 0 B +0 messages / +0.0 MB +0.0 % / -",
	} {
		if lines[m] != want {
			t.Errorf("%s: %q, want %q\n%s", m, lines[m], want, out.String())
		}
	}
}

// TestRowsMatchedByID: rows of the same measure are one line whatever their
// names (the groups in the reconnects row differ between the runs; B's table
// has ids, A's was stored before them and is matched by name), with the
// measure's unit.
func TestRowsMatchedByID(t *testing.T) {
	a := knownRun(t, "a", []store.SummaryRow{
		row(6, "Reconnects (arr / markets)", "gws", "1 / 2", 3),
	})
	bRows := []store.SummaryRow{row(6, "Reconnects (depth)", "gws", "5", 5)}
	bRows[0].ID = "reconnects"
	b := knownRun(t, "b", bRows)
	var buf bytes.Buffer
	Write(&buf, load(t, a, "a"), load(t, b, "b"), Options{Wide: true}) // the rows' full names
	out := buf.String()
	if !strings.Contains(out, "Reconnects (arr / markets)  1 / 2  5  +2 reconnects  +66.7 %") {
		t.Errorf("rows not matched by id:\n%s", out)
	}
	if strings.Contains(out, "Reconnects (depth)") {
		t.Errorf("B's row shown apart from A's:\n%s", out)
	}
}

// synthRun writes a synthetic run of libs (in that order) lasting d.
func synthRun(t *testing.T, libs []string, d time.Duration, seed uint64) Side {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	if err := synth.Write(path, synth.Config{Duration: d, Libs: libs, Symbols: 2, Reconnects: 2, Faults: 1, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	return load(t, path, filepath.Base(filepath.Dir(path)))
}

// TestWriteAsUsersExpect: the columns in the usual order (the libraries
// as wire.Libraries has them, then the variants) whatever order the runs
// recorded them in; every value of a cell that shows several compared;
// a warning for a run compared with itself (and no other), and for runs
// whose windows and Go versions differ; the ranked rows tested; every line
// within 120 columns, seven columns too.
func TestWriteAsUsersExpect(t *testing.T) {
	libs := []string{"gorilla-gc25", "gws", "fasthttp", "gorilla", "coder", "gobwas", "gorilla-gc400"}
	a := synthRun(t, libs, 2*time.Minute, 1)
	b := synthRun(t, libs, 2*time.Minute, 2)
	b.Run.ID, b.Run.GoVersion = "20261102-000000-synth", "go1.27"
	var buf bytes.Buffer
	Write(&buf, a, b, Options{})
	out := buf.String()
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "A" && f[2] == "B" {
			order = append(order, f[0])
		}
	}
	if want := []string{"gorilla", "gobwas", "coder", "gws", "fasthttp", "gorilla-gc25", "gorilla-gc400"}; strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("columns %v, want %v", order, want)
	}
	if !strings.Contains(out, "warning: the Go versions differ (A go1.26, B go1.27)") || strings.Contains(out, "windows differ") {
		t.Errorf("want the Go versions' warning alone:\n%s", out)
	}
	// Messages / data: both values' differences and percentages.
	if !regexp.MustCompile(`(?m)^Messages / data +[\d.,]+( k)? / [\d.]+ [kM]B +[\d.,]+( k)? / [\d.]+ [kM]B +[-+][\d,]+ messages / [-+][\d.]+ MB +[-+][\d.]+ / [-+][\d.]+ %$`).MatchString(out) {
		t.Errorf("the messages rows do not compare both values:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^CPU avg \(% of one core\) .*  (=|p 0\.\d+)$`).MatchString(out) {
		t.Errorf("the CPU rows are not tested:\n%s", out)
	}
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}

	c := synthRun(t, libs, 25*time.Second, 3)
	c.Run.ID = "20261103-000000-synth"
	buf.Reset()
	Write(&buf, a, c, Options{})
	if !strings.Contains(buf.String(), "warning: the windows differ (A 2m0s, B 25s)") {
		t.Errorf("no warning of the windows:\n%s", buf.String())
	}
	buf.Reset()
	Write(&buf, a, a, Options{})
	if w := strings.Count(buf.String(), "warning:"); w != 1 || !strings.Contains(buf.String(), "warning: A and B are the same run") {
		t.Errorf("a run with itself: %d warnings:\n%s", w, buf.String())
	}
}
