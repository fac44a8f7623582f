package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// checkGolden compares got with testdata/name (rewritten with -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking the diff):\n%s", path, got)
	}
}

// jitter is a fixed spread of ±11 % around 1 that differs by i: the
// fixtures' rounds vary as a machine's do, the same on every machine.
func jitter(i int) float64 { return 1 + float64((i*7919)%23-11)/100 }

var goldenHeader = []string{"soak bench bench-test: a fixed set of results", "host: test"}

// clientFixture is a bench's results: per row of cfg, each library on each
// path and the raw reader and the ceiling, a warm-up and rounds counted
// rounds. Per library a base rate and CPU; full and decode cost more; the
// runs of invalid (row/path/lib → rounds) break the truth check.
func clientFixture(cfg Config, rounds int, invalid map[string][]int, ceilingX float64) []Result {
	base := map[string]float64{"gorilla": 400_000, "gobwas": 520_000, "coder": 300_000, "gws": 610_000, "fasthttp": 450_000, "nbio": 480_000, RawLib: 900_000}
	pathCost := map[string]float64{PathBare: 1, PathFull: 1.35, PathDecode: 3.1, PathRaw: 0.8, PathCeiling: 0.5}
	var out []Result
	i := 0
	add := func(row, enc, path, lib string, round int, size float64) {
		i++
		cost := pathCost[path]
		if lib == "gws" && path == PathFull {
			cost = 1.02 // full hardly costs more than bare: the harness cost is not significant
		}
		rate := base[lib] / cost * jitter(i) * 2000 / (size + 1000)
		if path == PathCeiling {
			rate = base[RawLib] * ceilingX * jitter(i) * 2000 / (size + 1000)
		}
		const msgs = 20_000
		wall := int64(msgs / rate * 1e9)
		cpuNS := int64(float64(wall) * 0.92 * jitter(i+3))
		r := Result{Scenario: row, Encoding: enc, Lib: lib, Path: path, Round: round, Messages: msgs,
			PayloadBytes: int64(msgs * size), WallNS: wall, UserNS: cpuNS * 4 / 5, SysNS: cpuNS / 5,
			Syscr: int64(msgs * (0.05 + size/60_000) * jitter(i+5)), MaxRSSKiB: int64(9000 + 300*float64(len(lib))*jitter(i)),
			Mallocs: uint64(msgs * pathCost[path] * 0.8), SentMessages: msgs, SentPayload: int64(msgs * size), Valid: true}
		r.Rchar = r.Syscr * int64(size*20)
		if lib != RawLib {
			r.WireBytes = int64(msgs * (size + 4))
		}
		for _, bad := range invalid[row+"/"+path+"/"+lib] {
			if bad == round {
				r.Valid, r.Invalid = false, "received 19999 messages, the firehose sent 20000"
			}
		}
		out = append(out, r)
	}
	for si, sc := range cfg.Scenarios {
		size := float64(180 + 900*si) // payload bytes a message
		one := Config{Scenarios: []string{sc}, Encodings: cfg.Encodings, Compression: cfg.Compression}
		for _, row := range one.Rows() {
			for round := 0; round <= rounds; round++ {
				for _, lib := range Order(cfg.Libs, round) {
					for _, p := range cfg.Paths {
						add(row, "", p, lib, round, size)
					}
				}
				add(row, "", PathRaw, RawLib, round, size)
				add(row, "", PathCeiling, RawLib, round, size)
			}
		}
	}
	return out
}

// TestTableGolden: the bench's table of a fixed set of results: cells with
// their spread and CPU, a cell with an invalid run and one with only
// invalid runs, the verdicts, server-limited rows, the ceiling, the harness
// cost, the wire bytes and why.
func TestTableGolden(t *testing.T) {
	cfg := Config{Scenarios: []string{"aggTrade", "depth20"}, Libs: []string{"gorilla", "gobwas", "gws"}, Paths: LibPaths, Runs: 5}
	rs := clientFixture(cfg, 5, map[string][]int{"depth20/full/gobwas": {2}, "aggTrade/decode/gws": {1, 2, 3, 4, 5}}, 1.4)
	var b bytes.Buffer
	PrintTable(&b, cfg, Aggregate(rs), goldenHeader, true)
	checkGolden(t, "table.golden", b.Bytes())
}

// TestTableEncodingsGolden: rows composed of scenario, encoding and
// compression: the comparison of the encodings' sizes, what deflate did to
// each, and what each library negotiated (gorilla without context
// takeover where it was asked for, starred).
func TestTableEncodingsGolden(t *testing.T) {
	cfg := Config{Scenarios: []string{"depth20"}, Encodings: []string{"json", "msgpack", "packed"}, Libs: []string{"gorilla", "gws"},
		Paths:       []string{PathFull},
		Compression: []wire.Compression{wire.CompressionOff, wire.CompressionOn, wire.CompressionNoContextTakeover}, Runs: 3}
	rs := clientFixture(cfg, 3, nil, 8)
	shrink := map[string]float64{"json": 1, "msgpack": 0.7, "packed": 0.4}
	for i := range rs {
		r := &rs[i]
		for _, m := range cfg.compressions() {
			for _, e := range cfg.Encodings {
				if r.Scenario != RowLabel("depth20", e, m) {
					continue
				}
				r.Encoding = e
				if r.WireBytes == 0 {
					continue
				}
				w := float64(r.WireBytes) * shrink[e]
				switch {
				case m == wire.CompressionOn && r.Lib == "gorilla":
					w *= 0.5
					r.Extensions = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
				case m == wire.CompressionOn:
					w *= 0.3
					r.Extensions = "permessage-deflate"
				case m == wire.CompressionNoContextTakeover:
					w *= 0.5
					r.Extensions = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
				}
				r.WireBytes = int64(w)
			}
		}
	}
	var b bytes.Buffer
	PrintTable(&b, cfg, Aggregate(rs), goldenHeader, true)
	checkGolden(t, "table-encodings.golden", b.Bytes())
}

// TestSweepGolden: a message-size sweep's table.
func TestSweepGolden(t *testing.T) {
	sizes, err := SweepSizes(2000, 2_000_000)
	if err != nil {
		t.Fatal(err)
	}
	scs, err := SweepScenarios(sizes)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Scenarios: scs, Libs: []string{"gorilla", "gws"}, Paths: []string{PathBare}, Runs: 3}
	rs := clientFixture(cfg, 3, map[string][]int{scs[1] + "/bare/gws": {1}, scs[2] + "/bare/gorilla": {1, 2, 3}}, 3)
	var b bytes.Buffer
	PrintSweep(&b, cfg, Aggregate(rs), goldenHeader, true)
	checkGolden(t, "sweep.golden", b.Bytes())
}

// TestGobenchGolden: the benchstat lines of the counted valid runs.
func TestGobenchGolden(t *testing.T) {
	cfg := Config{Scenarios: []string{"aggTrade"}, Libs: []string{"gorilla", "gws"}, Paths: []string{PathBare, PathFull}, Runs: 2}
	rs := clientFixture(cfg, 2, map[string][]int{"aggTrade/full/gws": {1}}, 2)
	var b bytes.Buffer
	host := map[string]string{"cpu_model": "Test CPU @ 2.0GHz", "kernel": "6.1.0 test", "clocksource": "tsc"}
	versions := map[string]string{"gws": "github.com/lxzan/gws@v1.8.9", "gorilla": "github.com/gorilla/websocket@v1.5.3"}
	if err := WriteGobench(&b, host, versions, Aggregate(rs)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "gobench.golden", b.Bytes())
}

// chatFixture is a server bench's results: per room size and library a
// warm-up and rounds counted runs; the runs of invalid (lib/N → rounds)
// broke the check.
func chatFixture(cfg ChatConfig, rounds int, invalid map[string][]int) []ChatResult {
	cost := map[string]float64{"gorilla": 1.4, "gobwas": 1.1, "gws": 0.9, "coder": 2.2, "fasthttp": 1.3, "nbio": 1.2}
	// The share of a core each side used: the server the limit of most,
	// gobwas waiting on both sides, gws's load client the limit.
	busyShare := map[string]float64{"gorilla": 0.95, "gobwas": 0.6, "gws": 0.9, "coder": 0.97, "fasthttp": 0.93, "nbio": 0.92}
	clientShare := map[string]float64{"gorilla": 0.8, "gobwas": 0.7, "gws": 0.99, "coder": 0.8, "fasthttp": 0.8, "nbio": 0.85}
	var out []ChatResult
	i := 0
	for _, n := range cfg.Clients {
		for round := 0; round <= rounds; round++ {
			for _, col := range Order(cfg.columns(), round) {
				lib := col.lib
				i++
				per := int64(n * n)
				deliveries := per * int64(cfg.RoundsFor(n))
				serverCPU := cost[lib] * float64(n) / 4 * jitter(i) // µs per delivery
				writes := deliveries
				if col.strategy == "" { // a bench before strategies: fewer writes than deliveries
					writes = deliveries / int64(1+n/8)
				}
				if col.strategy == chat.StrategyBest { // batching (gobwas's) writes less, framing once costs less
					serverCPU *= 0.8
					if lib == "gobwas" {
						serverCPU, writes = serverCPU/4, deliveries/int64(1+n/8)
					}
				}
				wall := int64(float64(deliveries) * serverCPU * 1e3 / busyShare[lib] * jitter(i+1))
				client := int64(float64(wall) * clientShare[lib])
				r := ChatResult{Lib: lib, Strategy: col.strategy, N: n, Round: round,
					Client: chat.LoadResult{N: n, Rounds: cfg.RoundsFor(n), PerRound: 1, Sent: int64(n * cfg.RoundsFor(n)), Deliveries: deliveries,
						WallNS: wall, UserNS: client * 3 / 4, SysNS: client / 4, MaxRSSKiB: 12_000,
						P50us: 40 * float64(n) * jitter(i+2), P99us: 230 * float64(n) * jitter(i+3), MaxUs: 900 * float64(n),
						Reads: deliveries / 3},
					ServerDeliveries: deliveries, ServerUserNS: int64(float64(deliveries)*serverCPU*1e3) * 2 / 3,
					ServerSysNS: int64(float64(deliveries)*serverCPU*1e3) / 3, ServerMaxRSSKiB: int64(20_000 + 512*n),
					ServerWrites: writes, Valid: true}
				for _, bad := range invalid[col.String()+"/"+strconv.Itoa(n)] {
					if bad == round {
						r.Valid, r.Invalid = false, "clients received 10 deliveries, the server wrote 11"
					}
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// TestChatTableGolden: the server bench's table of a fixed set of results:
// a row per room size and library, an invalid run counted apart, a cell of
// invalid runs only, the limit, and the verdict per N.
func TestChatTableGolden(t *testing.T) {
	cfg := ChatConfig{Libs: []string{"gorilla", "gobwas", "gws", "coder"}, Clients: []int{4, 16, 64}, Runs: 5, Deliveries: 20_000, PerRound: 1}
	rs := chatFixture(cfg, 5, map[string][]int{"gws/16": {3}, "coder/64": {1, 2, 3, 4, 5}})
	var b bytes.Buffer
	PrintChat(&b, cfg, AggregateChat(rs), goldenHeader, true)
	checkGolden(t, "chat-table.golden", b.Bytes())
}

// TestChatStrategiesGolden: with write strategies, a row per room size,
// strategy and library (coder plain only), the verdict of plain against
// plain and best against best, and what each library's best is or why it
// has none.
func TestChatStrategiesGolden(t *testing.T) {
	cfg := ChatConfig{Libs: []string{"gorilla", "gobwas", "gws", "coder"}, Strategies: chat.Strategies, Clients: []int{4, 64}, Runs: 5, Deliveries: 20_000, PerRound: 1}
	rs := chatFixture(cfg, 5, map[string][]int{"gws/best/64": {3}})
	var b bytes.Buffer
	PrintChat(&b, cfg, AggregateChat(rs), goldenHeader, true)
	checkGolden(t, "chat-strategies.golden", b.Bytes())
}

// mainTable reads testdata/main-<name>: the results.json and table.txt of
// a real bench run by the soak of commit 86da855 (before the one
// aggregation), and returns the table this code prints from those results
// under the same header, and the table that soak printed.
func mainTable(t *testing.T, name string) (got, want []byte) {
	t.Helper()
	dir := filepath.Join("testdata", "main-"+name)
	want, err := os.ReadFile(filepath.Join(dir, "table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(want, []byte("\n\n"))
	header := strings.Split(string(head), "\n")
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if name == "chat" {
		var rec struct {
			Config  ChatConfig
			Results []ChatResult
		}
		if err := json.Unmarshal(js, &rec); err != nil {
			t.Fatal(err)
		}
		PrintChat(&b, rec.Config, AggregateChat(rec.Results), header, true)
		return b.Bytes(), want
	}
	var rec struct {
		Config  Config
		Results []Result
	}
	if err := json.Unmarshal(js, &rec); err != nil {
		t.Fatal(err)
	}
	if name == "sweep" {
		PrintSweep(&b, rec.Config, Aggregate(rec.Results), header, true)
	} else {
		PrintTable(&b, rec.Config, Aggregate(rec.Results), header, true)
	}
	return b.Bytes(), want
}

// TestMainTables: the tables of four real benches (client scenarios,
// encodings × deflate, a size sweep, the chat servers) print exactly as
// the soak that ran them printed them.
func TestMainTables(t *testing.T) {
	for _, name := range []string{"client", "enc", "sweep", "chat"} {
		t.Run(name, func(t *testing.T) {
			got, want := mainTable(t, name)
			if !bytes.Equal(got, want) {
				t.Errorf("table of testdata/main-%s differs from the one printed then:\n%s\nwant:\n%s", name, got, want)
			}
		})
	}
}

// TestFittedTables: the client bench's table of the libraries (wire.Libraries) and the
// server bench's, as soak bench prints them on a terminal, against
// testdata/table-fitted.golden and chat-table-fitted.golden: every line
// within 120 columns (in runes), the client table's cells without their
// min–max, the verdicts short, the tables that are still too wide in parts.
func TestFittedTables(t *testing.T) {
	cfg := Config{Scenarios: []string{"aggTrade", "depth20"}, Libs: slices.Clone(wire.Libraries), Paths: LibPaths, Runs: 5}
	rs := clientFixture(cfg, 5, map[string][]int{"depth20/full/gobwas": {2}, "aggTrade/decode/gws": {1, 2, 3, 4, 5}}, 1.4)
	ccfg := ChatConfig{Libs: slices.Clone(wire.Libraries), Clients: []int{16, 64}, Runs: 5, Deliveries: 20_000, PerRound: 1}
	crs := chatFixture(ccfg, 5, map[string][]int{"gws/16": {3}})
	for _, tc := range []struct {
		golden string
		print  func(w io.Writer)
	}{
		{"table-fitted.golden", func(w io.Writer) { PrintTable(w, cfg, Aggregate(rs), goldenHeader, false) }},
		{"chat-table-fitted.golden", func(w io.Writer) { PrintChat(w, ccfg, AggregateChat(crs), goldenHeader, false) }},
	} {
		var b bytes.Buffer
		tc.print(&b)
		for i, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("%s: line %d is %d columns: %q", tc.golden, i+1, n, l)
			}
		}
		checkGolden(t, tc.golden, b.Bytes())
	}
}

// TestGridGolden: seed 003's grid, printed when the firehose encoded each
// message as it sent it: a row per scenario, library, encoding and deflate
// setting with the server's CPU per message beside the client's and their
// sum with its spread, the wire bytes, the encode time and the decode time
// (the decode path's CPU less the full path's); a run the firehose did not
// measure leaves its server cells out ("-").
func TestGridGolden(t *testing.T) {
	cfg := Config{Scenarios: []string{"depth20", "book"}, Encodings: []string{"json", "msgpack", "packed"}, Libs: []string{"gorilla", "gws"},
		Paths: []string{PathFull, PathDecode}, Compression: []wire.Compression{wire.CompressionOff, wire.CompressionOn}, Runs: 3, EncodeEach: true}
	rs := clientFixture(cfg, 3, nil, 8)
	size := map[string]float64{"json": 1, "msgpack": 1.03, "packed": 0.47}
	encodeNS := map[string]int64{"json": 2400, "msgpack": 900, "packed": 700}
	for i := range rs {
		r := &rs[i]
		for _, m := range cfg.compressions() {
			for _, e := range cfg.Encodings {
				for _, sc := range cfg.Scenarios {
					if r.Scenario != RowLabel(sc, e, m) {
						continue
					}
					r.Encoding = e
					if r.Lib == RawLib {
						continue
					}
					w, enc := float64(r.WireBytes)*size[e], encodeNS[e]
					if m.Enabled() {
						w, enc = w*0.35, enc+5000
						r.Extensions = "permessage-deflate"
					}
					r.WireBytes = int64(w)
					// The firehose's CPU: its encoding and a write's share, less
					// for the seed's book; one cell's connections unmeasured (as
					// a bench recorded before the firehose's stats had them).
					per := float64(enc) + 600*jitter(i+7)
					if sc == "book" {
						per *= 0.8
					}
					r.ServerMeasured = !(r.Lib == "gws" && sc == "book" && e == "packed" && !m.Enabled())
					if r.ServerMeasured {
						r.ServerUserNS, r.ServerSysNS = int64(per*float64(r.Messages))*3/4, int64(per*float64(r.Messages))/4
						r.EncodeNS = enc * r.Messages
					}
				}
			}
		}
	}
	for _, wide := range []bool{true, false} {
		var b bytes.Buffer
		PrintTable(&b, cfg, Aggregate(rs), goldenHeader, wide)
		out := b.String()
		if !strings.Contains(out, "encodings × deflate") {
			t.Fatalf("no grid in:\n%s", out)
		}
		name := "table-grid.golden"
		if !wide {
			name = "table-grid-fitted.golden"
			for i, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); n > 120 {
					t.Errorf("%s: line %d is %d columns: %q", name, i+1, n, l)
				}
			}
		}
		checkGolden(t, name, b.Bytes())
	}
}
