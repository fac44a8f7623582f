package export

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

var t0 = time.Unix(1_784_563_200, 0)

// knownDB writes a small run with every kind of row, including a sample
// without its process half, text that needs CSV quoting and a NaN number.
func knownDB(t *testing.T) *store.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// The plan lists the columns: two libraries and a variant of one (gws
	// again, under GOGC 25), whose worker recorded nothing.
	if err := db.CreateRun(store.Run{ID: "20260721-120000-x", Name: "x", Target: "local", ProfileText: "name: x\n",
		Status: "done", GoVersion: "go1.26.8", Started: t0, Planned: 3 * time.Second,
		Settings: map[string]string{"plan": `{"v":1,"columns":[{"name":"gws","lib":"gws"},{"name":"coder","lib":"coder"},` +
			`{"name":"gws-gc25","lib":"gws","settings":{"runtime":{"gogc":25},"calibration_cost":5000}}]}`}}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []store.Worker{{Lib: "gws", Module: "github.com/lxzan/gws", Version: "v1.8.9", Runtime: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off"},
		{Lib: "coder", Module: "github.com/coder/websocket", Version: "v1.8.15", Runtime: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off"}} {
		if err := db.UpsertWorker(w); err != nil {
			t.Fatal(err)
		}
	}
	b := &store.Batch{}
	for sec := int64(1); sec <= 3; sec++ {
		for i, lib := range []string{"gws", "coder"} {
			s := store.Sample{Lib: lib, Sec: sec, TS: t0.Add(time.Duration(sec) * time.Second),
				HasWorker: true, Msgs: 100*sec + int64(i), Bytes: 3000 * sec, MsgsTotal: 100*sec*(sec+1)/2 + int64(i)*sec,
				BytesTotal: 3000 * sec * (sec + 1) / 2, Goroutines: 12, HeapBytes: 4 << 20, ConnsUp: 3,
				ReconnectsTotal: sec - 1, LostTotal: 2, DupTotal: 1, LatP50: 610, LatP99: 1490, LatMax: 2210,
				HasProc: !(lib == "coder" && sec == 2), RSS: 14<<20 + sec*4096, CPUUser: 0.125 * float64(sec),
				CPUSys: 0.031 * float64(sec), CPUPct: 2.57, FDs: 9, Threads: 7}
			if !s.HasProc {
				s.RSS, s.CPUUser, s.CPUSys, s.CPUPct, s.FDs, s.Threads = 0, 0, 0, 0, 0, 0
			}
			b.Samples = append(b.Samples, s)
		}
		b.Host = append(b.Host, store.HostSample{Sec: sec, TS: t0.Add(time.Duration(sec) * time.Second), Load1: 0.5, Load5: 0.25,
			Load15: 0.125, CPUPct: 31.25, StealPct: 0.5, IOWaitPct: 0.01, MemUsed: 3 << 30, MemAvail: 5 << 30})
	}
	b.StreamSamples = []store.StreamSample{
		{Lib: "gws", Slot: 0, Group: "markets", Stream: "btcusdt@trade", Sec: 3, MsgsTotal: 250, BytesTotal: 33750, LostTotal: 2, DupTotal: 1, MaxSilenceMs: 840, LastSeq: 5_000_000_250, StallsTotal: 2, Stalled: true},
		{Lib: "coder", Slot: 0, Group: "markets", Stream: "btcusdt@trade", Sec: 3, MsgsTotal: 252, BytesTotal: 34020, MaxSilenceMs: 790, LastSeq: 5_000_000_252},
	}
	b.Events = []store.Event{
		{Lib: "gws", TS: t0.Add(1500 * time.Millisecond), Sec: 1.5, Kind: "disconnected", Slot: 0, Group: "markets", Code: 1006, Detail: `read: "unexpected EOF", then a reset`},
		{Lib: "gws", TS: t0.Add(1620 * time.Millisecond), Sec: 1.62, Kind: "reconnect", Slot: 0, Group: "markets", DurMs: 120.25, Detail: "line one\nline two"},
		{Lib: "", TS: t0.Add(2 * time.Second), Sec: 2, Kind: "fault", Slot: -1, Detail: " padded "},
	}
	b.Clock = []store.ClockSample{{Sec: 1, TS: t0.Add(time.Second), Synced: false, State: 5, Status: 0x41, EstErrorUs: 16000000, MaxErrorUs: 16000000}}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveSummary([]store.SummaryRow{
		{Metric: "Messages / data", Lib: "gws", Value: "600 / 18.0 kB", Num: 600, Ord: 0},
		{Metric: "Messages / data", Lib: "coder", Value: "603 / 18.0 kB", Num: 603, Ord: 0},
		{Metric: "Reconnect duration (median / max)", Lib: "coder", Value: "-", Num: math.NaN(), Ord: 6},
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro
}

// TestWriteKnownDB: the CSV files of a known database, byte for byte (golden),
// row counts equal the tables', and the CSV parses back to the stored values.
func TestWriteKnownDB(t *testing.T) {
	db := knownDB(t)
	dir := t.TempDir()
	counts, err := Write(db, dir, "csv")
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, table := range Tables {
		data, err := os.ReadFile(filepath.Join(dir, File(table, "csv")))
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("== " + File(table, "csv") + "\n")
		all.Write(data)
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("%s does not parse as CSV: %v", table, err)
		}
		if strings.Join(recs[0], ",") != strings.Join(Columns[table], ",") {
			t.Errorf("%s header %v, want %v", table, recs[0], Columns[table])
		}
		var n int64
		if table == "columns" { // the plan's columns, no table of the database
			n = 3
		} else if n, err = db.Count(table); err != nil {
			t.Fatal(err)
		}
		if int64(len(recs)-1) != n || counts[table] != n {
			t.Errorf("%s: %d CSV rows, Write counted %d, table has %d", table, len(recs)-1, counts[table], n)
		}
	}
	golden(t, "testdata/known.csv.golden", all.String())

	// Round trip: per library, the per-second messages add up to the last
	// cumulative total; CPU seconds come back exactly (stored in ms).
	recs := readCSV(t, filepath.Join(dir, "samples.csv"))
	col := index(Columns["samples"])
	sum, last := map[string]int64{}, map[string]int64{}
	for _, r := range recs[1:] {
		m, _ := strconv.ParseInt(r[col["msgs_per_s"]], 10, 64)
		tot, _ := strconv.ParseInt(r[col["msgs_total"]], 10, 64)
		sum[r[col["lib"]]] += m
		last[r[col["lib"]]] = tot
		if r[col["lib"]] == "coder" && r[col["run_s"]] == "2" {
			if r[col["rss_bytes"]] != "" || r[col["cpu_pct"]] != "" {
				t.Errorf("missing process half exported as %q / %q, want empty cells", r[col["rss_bytes"]], r[col["cpu_pct"]])
			}
		}
		if r[col["run_s"]] == "3" && r[col["lib"]] == "gws" && r[col["cpu_user_s_total"]] != "0.375" {
			t.Errorf("cpu_user_s_total = %q, want 0.375", r[col["cpu_user_s_total"]])
		}
	}
	for lib, s := range sum {
		if s != last[lib] {
			t.Errorf("%s: sum of msgs_per_s %d != last msgs_total %d", lib, s, last[lib])
		}
	}
	ev := readCSV(t, filepath.Join(dir, "events.csv"))
	if got := ev[2][index(Columns["events"])["detail"]]; got != "line one\nline two" {
		t.Errorf("event detail round trip: %q", got)
	}
}

// TestWriteJSONMatchesCSV: every NDJSON line is one object with exactly the
// CSV's columns, and its values are the CSV's cells (null where empty).
func TestWriteJSONMatchesCSV(t *testing.T) {
	db := knownDB(t)
	dir := t.TempDir()
	if _, err := Write(db, dir, "csv"); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(db, dir, "json"); err != nil {
		t.Fatal(err)
	}
	for _, table := range Tables {
		recs := readCSV(t, filepath.Join(dir, File(table, "csv")))
		f, err := os.Open(filepath.Join(dir, File(table, "json")))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		row := 0
		for sc.Scan() {
			row++
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("%s line %d: %v: %s", table, row, err, sc.Text())
			}
			if len(obj) != len(Columns[table]) {
				t.Errorf("%s line %d has %d keys, want %d", table, row, len(obj), len(Columns[table]))
			}
			for i, c := range Columns[table] {
				v, ok := obj[c]
				var s string
				switch x := v.(type) {
				case nil:
				case string:
					s = x
				case json.Number:
					s = x.String()
				default:
					t.Errorf("%s line %d %s: unexpected %T", table, row, c, v)
				}
				if !ok || s != recs[row][i] {
					t.Errorf("%s line %d %s: json %v, csv %q", table, row, c, v, recs[row][i])
				}
			}
		}
		f.Close()
		if row != len(recs)-1 {
			t.Errorf("%s: %d JSON lines, %d CSV rows", table, row, len(recs)-1)
		}
	}
}

func TestWriteBadFormat(t *testing.T) {
	if _, err := Write(knownDB(t), t.TempDir(), "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("format xml: err = %v", err)
	}
}

func TestAppendCSV(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"plain":        "plain",
		"a,b":          `"a,b"`,
		`say "hi"`:     `"say ""hi"""`,
		"two\nlines":   "\"two\nlines\"",
		" lead":        `" lead"`,
		"btc@depth@1s": "btc@depth@1s",
	} {
		if got := string(appendCSV(nil, in)); got != want {
			t.Errorf("appendCSV(%q) = %s, want %s", in, got, want)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

func index(cols []string) map[string]int {
	m := map[string]int{}
	for i, c := range cols {
		m[c] = i
	}
	return m
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

// TestREADMEDefinesEveryColumn: the README's Export section names every column.
func TestREADMEDefinesEveryColumn(t *testing.T) {
	data, err := os.ReadFile("../../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n## Export\n")
	if !ok {
		t.Fatal("README has no Export section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, table := range slices.Concat(Tables, BenchTables) {
		if !strings.Contains(sec, "`"+table+"`") {
			t.Errorf("README's Export section does not name the table %s", table)
		}
		for _, c := range Columns[table] {
			if !strings.Contains(sec, "`"+c+"`") {
				t.Errorf("README's Export section does not define %s.%s", table, c)
			}
		}
	}
}

// BenchmarkWriteDB exports the database named by SOAK_BENCH_DB (e.g. a
// synthetic 24 h run from soak synth) as CSV, reporting rows per second.
func BenchmarkWriteDB(b *testing.B) {
	path := os.Getenv("SOAK_BENCH_DB")
	if path == "" {
		b.Skip("set SOAK_BENCH_DB to a run database")
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	format := cmp.Or(os.Getenv("SOAK_EXPORT_FORMAT"), "csv")
	var rows int64
	for b.Loop() {
		counts, err := Write(db, b.TempDir(), format)
		if err != nil {
			b.Fatal(err)
		}
		rows = 0
		for _, n := range counts {
			rows += n
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestWriteBench: a bench's database exports as bench_results only, a row
// per client run with its measures, in CSV and NDJSON alike.
func TestWriteBench(t *testing.T) {
	db := benchDB(t, "bench-x")
	rs := []store.BenchResult{
		{Scenario: "aggTrade", Path: "bare", Lib: "gws", Version: "v1.4", Round: 0, Valid: true, Msgs: 1000, Bytes: 200_000, WallNS: 5e8,
			UserNS: 3e6, SysNS: 1e6, Syscr: 50, Rchar: 210_000, Mallocs: 2000, Runtime: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off",
			ServerMeasured: true, ServerUserNS: 1.5e6, ServerSysNS: 5e5, EncodeNS: 5e5},
		{Scenario: "aggTrade", Path: "bare", Lib: "gws", Round: 1, Reason: "received 999, sent 1000", Msgs: 999, WallNS: 1e9, Runtime: "x, \"y\""},
	}
	if err := db.WriteBenchResults(rs); err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		rows := exportOnly(t, db, format, "bench_results")
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows", format, len(rows))
		}
		for col, want := range map[string]string{"warmup": "1", "valid": "1", "msgs_per_s": "2000", "cpu_us_per_msg": "4",
			"bytes_per_read": "4200", "allocs_per_msg": "2", "mb_per_s": "0.4", "version": "v1.4", "wall_ns": "500000000",
			"server_user_cpu_ns": "1500000", "server_encode_ns": "500000", "server_cpu_us_per_msg": "2", "both_cpu_us_per_msg": "6",
			"encode_ns_per_msg": "500"} {
			if rows[0][col] != want {
				t.Errorf("%s: row 1 %s = %q, want %q", format, col, rows[0][col], want)
			}
		}
		// The second run's firehose was not measured: its columns are empty, not 0.
		for _, col := range []string{"server_user_cpu_ns", "server_encode_ns", "server_cpu_us_per_msg", "encode_ns_per_msg"} {
			if v := rows[1][col]; v != "" && v != "<nil>" {
				t.Errorf("%s: row 2 %s = %q, want it empty", format, col, v)
			}
		}
		if rows[1]["warmup"] != "0" || rows[1]["valid"] != "0" || rows[1]["reason"] != "received 999, sent 1000" || rows[1]["msgs_per_s"] != "999" {
			t.Errorf("%s: row 2 %v", format, rows[1])
		}
	}
}

// benchDB is a new bench database of run id, without results yet.
func benchDB(t *testing.T, id string) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.CreateRun(store.Run{ID: id, Name: "bench", Status: "done", Started: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetKind(store.KindBench); err != nil {
		t.Fatal(err)
	}
	return db
}

// exportOnly exports a bench's db in format, checks that table alone was
// written (no soak table), and reads its rows back.
func exportOnly(t *testing.T, db *store.DB, format, table string) []map[string]string {
	t.Helper()
	dir := t.TempDir()
	counts, err := Write(db, dir, format)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[table] == 0 {
		t.Errorf("%s: counts %v, want %s only", format, counts, table)
	}
	if _, err := os.Stat(filepath.Join(dir, File("samples", format))); err == nil {
		t.Errorf("%s: a bench exported soak tables", format)
	}
	rows := readRows(t, dir, table, format)
	if int64(len(rows)) != counts[table] {
		t.Errorf("%s: %d rows read, %d written", format, len(rows), counts[table])
	}
	return rows
}

// readRows reads an exported table back, a map of column to cell a row
// (JSON values as text, null as "<nil>"), checking the header or the keys
// against Columns.
func readRows(t *testing.T, dir, table, format string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, File(table, format)))
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	cols := Columns[table]
	if format == "csv" {
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(recs[0], ",") != strings.Join(cols, ",") {
			t.Errorf("header %v", recs[0])
		}
		for _, rec := range recs[1:] {
			m := map[string]string{}
			for i, c := range cols {
				m[c] = rec[i]
			}
			rows = append(rows, m)
		}
		return rows
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var obj map[string]any
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for k, v := range obj {
			m[k] = fmt.Sprint(v)
		}
		if len(obj) != len(cols) {
			t.Errorf("json line has %d keys, want %d", len(obj), len(cols))
		}
		rows = append(rows, m)
	}
	return rows
}

// TestWriteChat: a server bench's database exports as chat_results only, a
// row per load run with its measures, in CSV and NDJSON alike.
func TestWriteChat(t *testing.T) {
	db := benchDB(t, "bench-chat-x")
	rs := []store.ChatResult{
		{Lib: "gws", Strategy: "best", Clients: 4, Round: 0, Valid: true, Rounds: 13, PerRound: 1, Sent: 52, Deliveries: 208, ServerDeliveries: 208,
			WallNS: 2e6, ServerUserNS: 1e6, ServerSysNS: 5e5, ServerMaxRSSKiB: 22000, ServerWrites: 416, ClientUserNS: 8e5,
			ClientSysNS: 2e5, ClientMaxRSSKiB: 9000, ClientReads: 104, P50us: 150.5, P99us: 900, MaxUs: 1200},
		{Lib: "gws", Clients: 4, Round: 1, Reason: "the server dropped 1 client(s)", Drops: 1, Deliveries: 200, ServerDeliveries: 200, WallNS: 1e6},
	}
	if err := db.WriteChatResults(rs); err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		rows := exportOnly(t, db, format, "chat_results")
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows", format, len(rows))
		}
		for col, want := range map[string]string{"warmup": "1", "valid": "1", "strategy": "best", "clients": "4", "deliveries_per_s": "104000",
			"server_cpu_us_per_delivery": "7.21153846153846", // 15 significant digits: 1.5 ms ÷ 208
			"server_cpu_pct":             "75", "client_cpu_pct": "50",
			"server_writes_per_delivery": "2", "client_reads_per_delivery": "0.5", "lat_p50_us": "150.5", "sent": "52"} {
			if rows[0][col] != want {
				t.Errorf("%s: row 1 %s = %q, want %q", format, col, rows[0][col], want)
			}
		}
		if rows[1]["warmup"] != "0" || rows[1]["valid"] != "0" || rows[1]["drops"] != "1" || rows[1]["deliveries_per_s"] != "200000" {
			t.Errorf("%s: row 2 %v", format, rows[1])
		}
	}
}

// TestDrainAndNoLatency: a run of a 3 s window whose workers read on for
// 2 s (the drain): samples.csv's last rows are the drain's, marked so in
// phase (never "window"), with their messages (0: nothing was sent) but
// no latency; a window second without a latency sample has empty latency
// cells too (NDJSON: null), never 0; the host's drain seconds are marked
// alike; a number with float noise (1.5899999999999999) is written at 15
// significant digits.
func TestDrainAndNoLatency(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(store.Run{ID: "d", Name: "d", Target: "local", Status: "done", Started: t0, Planned: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for sec := int64(1); sec <= 5; sec++ {
		s := store.Sample{Lib: "gws", Sec: sec, TS: t0.Add(time.Duration(sec) * time.Second), HasWorker: true, HasProc: true, RSS: 1 << 20}
		if sec <= 3 && sec != 2 { // second 2 had messages without an event time
			s.Msgs, s.MsgsTotal, s.LatP50, s.LatP99, s.LatMax = 10, 10*sec, 500, 900, 1000
		}
		b.Samples = append(b.Samples, s)
		b.Host = append(b.Host, store.HostSample{Sec: sec, TS: s.TS, Load1: 0.5})
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveSummary([]store.SummaryRow{{ID: "cpu_avg", Metric: "CPU avg (% of one core)", Lib: "gws", Value: "1.6 %", Num: 1.5899999999999999}}); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"csv", "ndjson"} {
		dir := t.TempDir()
		if _, err := Write(db, dir, format); err != nil {
			t.Fatal(err)
		}
		empty := ""
		if format != "csv" {
			empty = "<nil>"
		}
		rows := readRows(t, dir, "samples", format)
		if len(rows) != 5 {
			t.Fatalf("%s: %d samples rows, want 5", format, len(rows))
		}
		for i, r := range rows {
			sec := i + 1
			wantPhase := "window"
			if sec > 3 {
				wantPhase = "drain"
			}
			noLat := sec == 2 || sec > 3
			if r["phase"] != wantPhase || noLat != (r["lat_p50_us"] == empty && r["lat_p99_us"] == empty && r["lat_max_us"] == empty) {
				t.Errorf("%s: second %d: phase %q, latency %q/%q/%q; want %s, latency empty %v", format, sec, r["phase"],
					r["lat_p50_us"], r["lat_p99_us"], r["lat_max_us"], wantPhase, noLat)
			}
			if r["time_utc"] != t0.Add(time.Duration(sec)*time.Second).UTC().Format("2006-01-02T15:04:05.000Z") {
				t.Errorf("%s: second %d: time_utc %q", format, sec, r["time_utc"])
			}
		}
		host := readRows(t, dir, "host_samples", format)
		if host[len(host)-1]["phase"] != "drain" || host[2]["phase"] != "window" {
			t.Errorf("%s: host phases %q, %q", format, host[2]["phase"], host[len(host)-1]["phase"])
		}
		sum := readRows(t, dir, "summary", format)
		if len(sum) != 1 || sum[0]["num"] != "1.59" || sum[0]["num_1"] != "1.59" || sum[0]["unit_1"] != "%" {
			t.Errorf("%s: summary %v, want num 1.59 (no float noise), num_1 the same in %%", format, sum)
		}
	}
}
