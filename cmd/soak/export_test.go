package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/export"
	"github.com/wssoak/wssoak/internal/runner/outcome"
)

const exportProfile = `name: exp
duration: 3s
warmup: 1s
libraries: [gorilla, gobwas]
symbols: [btcusdt, ethusdt]
thresholds:
  max_lost: 0
  max_errors: 0
  max_latency_p99: 10s
replay:
  speed: 5
`

// TestExportRealRun: a real short run passes its thresholds (exit 0, verdict
// rows stored), then soak export writes every table of its database with
// the database's row counts, and the per-second messages add up to the
// totals of the end table.
func TestExportRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "exp.yaml", exportProfile)
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "thresholds: all 6 checks passed") {
		t.Errorf("stdout does not report the thresholds:\n%s", stdout)
	}
	db := openRun(t, out)
	vs, err := db.Verdicts()
	if err != nil || len(vs) != 6 {
		t.Fatalf("verdicts: %d rows, %v; want 6", len(vs), err)
	}
	for _, v := range vs {
		if v.Broken {
			t.Errorf("verdict broken: %+v", v)
		}
	}

	// No RUN argument: the latest run under -out, files beside its database.
	stdout, stderr, err = runSoak(t, "export", "-out", out)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	runDir := filepath.Dir(dbPath(t, out))
	for _, table := range export.Tables {
		path := filepath.Join(runDir, table+".csv")
		if !strings.Contains(stdout, path) {
			t.Errorf("export output does not name %s:\n%s", path, stdout)
		}
		recs := readCSVFile(t, path)
		n, err := db.Count(table)
		if table == "columns" { // the plan's columns: a row per worker here
			n, err = db.Count("workers")
		}
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(recs)-1) != n || n == 0 {
			t.Errorf("%s: %d CSV rows, database %d (want equal, not 0)", table, len(recs)-1, n)
		}
	}

	// Sum of msgs_per_s == last msgs_total == the table's message count.
	recs := readCSVFile(t, filepath.Join(runDir, "samples.csv"))
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	sum, last := map[string]int64{}, map[string]int64{}
	for _, r := range recs[1:] {
		if r[col["msgs_per_s"]] == "" {
			continue
		}
		m, _ := strconv.ParseInt(r[col["msgs_per_s"]], 10, 64)
		tot, _ := strconv.ParseInt(r[col["msgs_total"]], 10, 64)
		sum[r[col["lib"]]] += m
		last[r[col["lib"]]] = max(last[r[col["lib"]]], tot)
	}
	summary := readCSVFile(t, filepath.Join(runDir, "summary.csv"))
	checked := 0
	scol := map[string]int{}
	for i, c := range summary[0] {
		scol[c] = i
	}
	for _, r := range summary[1:] {
		if r[scol["id"]] != "messages" || r[scol["metric"]] != "Messages / data" {
			continue
		}
		num, _ := strconv.ParseFloat(r[scol["num"]], 64)
		if lib := r[scol["lib"]]; sum[lib] != last[lib] || float64(last[lib]) != num || num == 0 {
			t.Errorf("%s: sum msgs_per_s %d, last msgs_total %d, summary %v", lib, sum[lib], last[lib], num)
		}
		checked++
	}
	if checked != 2 {
		t.Errorf("summary.csv has %d message rows, want 2", checked)
	}

	// A run compared with itself: every difference is zero.
	cmp, stderr, err := runSoak(t, "compare", runDir, dbPath(t, out))
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	}
	// Both values of a cell compared, and a warning that the run is one.
	if len(regexp.MustCompile(`(?m)^Messages / data .* \+0 messages / \+0\.0 MB +\+0\.0 / \+0\.0 %$`).FindAllString(cmp, -1)) != 2 ||
		!strings.Contains(cmp, "gorilla") || !strings.Contains(cmp, "gobwas") || !strings.Contains(cmp, "warning: A and B are the same run") {
		t.Errorf("compare of a run with itself:\n%s", cmp)
	}

	// JSON into another directory, by run directory: every line parses.
	jdir := filepath.Join(dir, "json")
	if _, stderr, err := runSoak(t, "export", runDir, "-format", "json", "-dir", jdir); err != nil {
		t.Fatalf("export json: %v\n%s", err, stderr)
	}
	f, err := os.Open(filepath.Join(jdir, "samples.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("samples.ndjson line %d: %v", lines+1, err)
		}
	}
	if lines != len(recs)-1 {
		t.Errorf("samples.ndjson has %d lines, samples.csv %d rows", lines, len(recs)-1)
	}
}

// TestThresholdBroken: a run whose profile allows 1µs of p99 latency breaks
// it; soak run prints which library broke what, stores the verdicts and exits 3.
func TestThresholdBroken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "thr.yaml", `name: thr
duration: 2s
warmup: 1s
libraries: [gws]
symbols: [btcusdt]
thresholds:
  max_lost: 0
  max_latency_p99: 1us
replay:
  speed: 5
`)
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	var te outcome.ThresholdError
	if !errors.As(err, &te) || exitCode(err, io.Discard) != outcome.ExitThreshold {
		t.Fatalf("run: err %v (exit %d), want a threshold error and exit %d\nstdout:\n%s\nstderr:\n%s",
			err, exitCode(err, io.Discard), outcome.ExitThreshold, stdout, stderr)
	}
	if !strings.Contains(stdout, "threshold broken: gws max_latency_p99: ") || !strings.Contains(stdout, "> limit 1µs") {
		t.Errorf("stdout does not say which threshold broke:\n%s", stdout)
	}
	// The threshold that held is a ✓ of the Checks block, broken nowhere.
	if strings.Contains(stdout, "threshold broken: gws max_lost") || strings.Contains(stdout, "max_lost (gws)") ||
		!strings.Contains(stdout, "✓ threshold max_lost") {
		t.Errorf("a threshold that held is reported as broken, or not as held:\n%s", stdout)
	}
	vs, err := openRun(t, out).Verdicts()
	if err != nil || len(vs) != 2 {
		t.Fatalf("verdicts %+v, %v; want 2", vs, err)
	}
	if vs[0].Threshold != "max_lost" || vs[0].Broken || vs[1].Threshold != "max_latency_p99" || !vs[1].Broken ||
		vs[1].Value <= 1e-6 || vs[1].Limit != 1e-6 || vs[1].Unit != "s" {
		t.Errorf("verdicts %+v", vs)
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "-out", dir}, "no run found under " + dir},
		{[]string{"export", filepath.Join(dir, "nope")}, "nope: no such file"},
		{[]string{"export", dir}, "no soak.db in this directory"},
		{[]string{"export", "-format", "xml", dir}, `flag -format: unknown format "xml"`},
		{[]string{"export", "a", "b"}, "run a: stat a: no such file"}, // several runs, the first missing
		{[]string{"compare", dir}, "want two runs (RUN_A RUN_B), got 1"},
		{[]string{"compare", dir, dir}, "no soak.db in this directory"},
	} {
		_, _, err := runSoak(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || exitCode(err, io.Discard) != 2 {
			t.Errorf("%v: err %v, want usage error containing %q", tt.args, err, tt.want)
		}
	}
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}
