package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/store"
)

// benchDB writes a bench database: two scenarios (or a sweep's sized ones),
// two libraries on paths bare and full, raw and the ceiling, a warm-up
// round and two counted ones; gobwas's full path on depth has one invalid
// run.
func benchDB(t testing.TB, sweep string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"version gorilla": "github.com/gorilla/websocket@v1.5.3", "version gobwas": "github.com/gobwas/ws@v1.4.0"}
	scenarios := []string{"aggTrade", "depth"}
	if sweep != "" {
		settings["sweep"] = sweep
		scenarios = []string{"sized-300b", "sized-3000b", "sized-30000b"}
	}
	if err := db.CreateRun(store.Run{ID: "bench-20261202-010000", Name: "bench", Target: "firehose", Status: "done",
		Started: fixtureStart, Ended: fixtureStart.Add(90e9), GoVersion: "go1.26", Host: map[string]string{"cpu": "test CPU", "kernel": "6.1"},
		Settings: settings}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetKind(store.KindBench); err != nil {
		t.Fatal(err)
	}
	var rs []store.BenchResult
	for si, sc := range scenarios {
		size := int64(200 * (si + 1))
		if sweep != "" {
			size = []int64{300, 3000, 30000}[si]
		}
		for round := 0; round <= 2; round++ {
			type cell struct{ lib, path string }
			cells := []cell{{"gorilla", "bare"}, {"gobwas", "bare"}, {"gorilla", "full"}, {"gobwas", "full"}, {"raw", "raw"}, {"raw", "ceiling"}}
			for ci, c := range cells {
				// msgs/s from 100k to 600k by cell, ±10 % by round; CPU from 2 µs.
				wall := int64(1e9) * 1000 / int64(100_000*(ci+1)) * int64(10+round) / 10
				r := store.BenchResult{Scenario: sc, Path: c.path, Lib: c.lib, Round: round, Valid: true,
					Msgs: 1000, Bytes: 1000 * size, SentMsgs: 1000, SentBytes: 1000 * size, WallNS: wall,
					UserNS: int64(2000+100*ci+50*round) * 1000, SysNS: 500_000, Syscr: 200, Rchar: 1000*size + 5000,
					MaxRSSKiB: 9000, Mallocs: 3000, Runtime: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off"}
				if sc == "depth" && c == (cell{"gobwas", "full"}) && round == 2 {
					r.Valid, r.Reason = false, "received 999 messages"
				}
				rs = append(rs, r)
			}
		}
	}
	if err := db.WriteBenchResults(rs); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// benchOptions returns the bench page's chart ids and options (formatters
// marked), checking that html draws each.
func benchOptions(t testing.TB, dbPath string, html []byte) ([]string, [][]byte) {
	t.Helper()
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := readBench(db)
	if err != nil {
		t.Fatal(err)
	}
	ids, js, err := benchCharts(d)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range js {
		snippet, err := optionJS(j)
		if err != nil {
			t.Fatal(err)
		}
		if want := "soak.draw(\"" + ids[i] + "\", " + string(snippet) + ");\n"; !bytes.Contains(html, []byte(want)) {
			t.Errorf("page lacks the option snippet of chart %s", ids[i])
		}
	}
	return ids, js
}

// TestBenchPage: a bench database renders the bench page: the table (the
// invalid run counted apart, the ceiling a row), a bar chart of msgs/s and
// one of CPU µs/msg per scenario with a bar series and a whisker series per
// library, and with a sweep its line chart; the options match
// testdata/bench-charts.golden (rewrite with -update after checking).
func TestBenchPage(t *testing.T) {
	for _, tc := range []struct {
		name, sweep string
		charts      []string
	}{
		{"scenarios", "", []string{"s0-bench_msg_rate", "s0-bench_cpu_per_msg", "s1-bench_msg_rate", "s1-bench_cpu_per_msg"}},
		{"sweep", "300..30000", []string{"s0-bench_msg_rate", "s0-bench_cpu_per_msg", "s1-bench_msg_rate", "s1-bench_cpu_per_msg",
			"s2-bench_msg_rate", "s2-bench_cpu_per_msg", "sweep"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := benchDB(t, tc.sweep)
			_, html := renderFile(t, path)
			page := string(html)
			for _, want := range []string{"soak bench: bench-20261202-010000", "<td>aggTrade</td><td>bare</td><td>87k 83k–91k (2.575 µs)</td><td>174k 167k–182k (2.675 µs)</td><td></td>",
				"<td>ceiling</td><td></td><td></td><td>523k 500k–545k (3.075 µs)</td>", "gorilla github.com/gorilla/websocket@v1.5.3", "cpu: test CPU"} {
				if tc.sweep == "" && !strings.Contains(page, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			if tc.sweep == "" && !strings.Contains(page, "364k 364k–364k (2.850 µs) [1 invalid]") {
				t.Error("page does not count depth's invalid run")
			}
			if strings.Contains(page, `id="soak-data"`) || strings.Contains(page, "Connection groups") {
				t.Error("the bench page carries the soak page's parts")
			}
			ids, js := benchOptions(t, path, html)
			if strings.Join(ids, " ") != strings.Join(tc.charts, " ") {
				t.Errorf("charts %v, want %v", ids, tc.charts)
			}
			var all bytes.Buffer
			for i, j := range js {
				var o struct {
					Series []struct {
						Name, Type string
						Data       []json.RawMessage
					}
				}
				if err := json.Unmarshal(j, &o); err != nil {
					t.Fatal(err)
				}
				var kinds []string
				for _, s := range o.Series {
					kinds = append(kinds, s.Name+":"+s.Type)
				}
				want := "gorilla:bar gorilla:custom gobwas:bar gobwas:custom raw:bar raw:custom"
				if ids[i] == "sweep" {
					want = "gorilla bare:line gobwas bare:line gorilla full:line gobwas full:line raw raw:line raw ceiling:line"
				}
				if got := strings.Join(kinds, " "); got != want {
					t.Errorf("chart %s series %s, want %s", ids[i], got, want)
				}
				var one bytes.Buffer
				if err := json.Indent(&one, j, "", " "); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&all, "chart %s\n%s\n", ids[i], oneLineRows(one.Bytes()))
			}
			checkGolden(t, "bench-charts-"+tc.name+".golden", all.Bytes())
		})
	}
}
