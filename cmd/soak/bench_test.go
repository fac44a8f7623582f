package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// benchDir returns the one bench directory under out.
func benchDir(t *testing.T, out string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, "bench-*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("bench directories under %s: %v (%v), want one", out, m, err)
	}
	return m[0]
}

// parseGobench reads Go benchmark lines with benchfmt and returns the
// results' full names.
func parseGobench(t *testing.T, text string) []string {
	t.Helper()
	r := benchfmt.NewReader(strings.NewReader(text), "bench.txt")
	var names []string
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			if _, ok := rec.Value("msgs/s"); !ok {
				t.Errorf("%s: no msgs/s value", rec.Name.Full())
			}
			if _, ok := rec.Value("cpu-µs/msg"); !ok {
				t.Errorf("%s: no cpu-µs/msg value", rec.Name.Full())
			}
			names = append(names, string(rec.Name.Full()))
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

func TestBench(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runSoak(t, "bench", "-scenarios", "aggTrade,depth", "-libs", "gorilla,gobwas", "-runs", "2", "-n", "300", "-out", out)
	if err != nil {
		t.Fatalf("soak bench: %v\n%s", err, stderr)
	}
	head := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "scenario ") {
			head = l
			break
		}
	}
	for _, col := range []string{"gorilla", "gobwas", "raw", "verdict"} {
		if !strings.Contains(head, col) {
			t.Errorf("table header %q lacks column %s:\n%s", head, col, stdout)
		}
	}
	for _, sc := range []string{"aggTrade", "depth"} {
		for _, p := range bench.LibPaths {
			if !strings.Contains(stdout, "\n"+sc+strings.Repeat(" ", 10-len(sc))+p+" ") {
				t.Errorf("table lacks the row %s %s:\n%s", sc, p, stdout)
			}
		}
	}
	for _, want := range []string{"firehose ceiling", "full / bare", "host: ", "client runtime: GOMAXPROCS="} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	// the CPU stolen by the hypervisor over the bench, from /proc/stat before and after
	// (the header is folded at 120 columns: a fold may fall between any two words)
	if !regexp.MustCompile(`steal [0-9]+\.[0-9] %\s+of\s+all\s+CPUs\s+during\s+the\s+bench`).MatchString(stdout) {
		t.Errorf("the header does not say the steal during the bench:\n%s", stdout)
	}
	dir := benchDir(t, out)
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Results []bench.Result `json:"results"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	// 2 scenarios × (3 paths × 2 libraries + raw + ceiling) × (2 rounds + the warm-up)
	if len(rec.Results) != 2*8*3 {
		t.Errorf("%d results, want %d", len(rec.Results), 2*8*3)
	}
	paths := map[string]int{}
	for _, r := range rec.Results {
		paths[r.Path]++
		if !r.Valid || r.Messages != 300 || r.Messages != r.SentMessages || r.PayloadBytes != r.SentPayload {
			t.Errorf("%s %s/%s round %d: valid %v (%s), received %d msgs %d bytes, sent %d %d",
				r.Scenario, r.Lib, r.Path, r.Round, r.Valid, r.Invalid, r.Messages, r.PayloadBytes, r.SentMessages, r.SentPayload)
		}
	}
	for _, p := range []string{"bare", "full", "decode", "raw", "ceiling"} {
		if paths[p] == 0 {
			t.Errorf("no run of path %s", p)
		}
	}
	// soak.db: a run of kind bench holding the same results.
	db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if k, err := db.Kind(); err != nil || k != store.KindBench {
		t.Errorf("soak.db kind %q, %v; want bench", k, err)
	}
	if run, err := db.Run(); err != nil || run.ID != filepath.Base(dir) || run.Settings["version gorilla"] == "" || len(run.Host) == 0 {
		t.Errorf("soak.db run %+v, %v: want the bench's id, host and versions", run, err)
	}
	rows, err := db.BenchResults()
	if err != nil || len(rows) != len(rec.Results) {
		t.Fatalf("soak.db: %d bench results, %v; want %d", len(rows), err, len(rec.Results))
	}
	for i, w := range rows {
		if r := rec.Results[i]; bench.FromRow(w).MsgsPerSec() != r.MsgsPerSec() || w.Scenario != r.Scenario || w.Lib != r.Lib ||
			w.Path != r.Path || w.Round != r.Round || w.Runtime != r.Runtime.String() {
			t.Errorf("soak.db result %d %+v, results.json %+v", i, w, r)
		}
	}
	// soak report renders the bench page.
	if out, stderr, err := runSoak(t, "report", dir); err != nil || !strings.Contains(out, "report.html") {
		t.Fatalf("soak report %s: %v\n%s%s", dir, err, out, stderr)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || !strings.Contains(string(page), "soak bench: "+filepath.Base(dir)) ||
		!strings.Contains(string(page), `soak.draw("s1-bench_cpu_per_msg"`) {
		t.Errorf("report.html is not the bench page with its charts (%v)", err)
	}
	// soak export writes bench_results; soak compare puts two benches side
	// by side (the same twice: no difference) and refuses a bench against a soak.
	if out, stderr, err := runSoak(t, "export", dir); err != nil || !strings.Contains(out, "bench_results.csv\t48 rows") {
		t.Errorf("soak export %s: %v\n%s%s", dir, err, out, stderr)
	}
	if out, stderr, err := runSoak(t, "compare", dir, dir); err != nil || !regexp.MustCompile(`\naggTrade +bare +gorilla `).MatchString(out) ||
		!strings.Contains(out, "+0.0 %") {
		t.Errorf("soak compare of a bench with itself: %v\n%s%s", err, out, stderr)
	}
	soakDir := writeKindDB(t, t.TempDir(), "20261202-010000", store.KindSoak)
	if _, _, err := runSoak(t, "compare", dir, soakDir); err == nil || !strings.Contains(err.Error(), "is a bench and") {
		t.Errorf("soak compare of a bench and a soak: %v, want a usage error", err)
	}
	gb, err := os.ReadFile(filepath.Join(dir, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The counted runs: 2 scenarios × 8 cells × 2 rounds.
	if names := parseGobench(t, string(gb)); len(names) != 2*8*2 {
		t.Errorf("bench.txt: %d benchmark lines, want %d:\n%s", len(names), 2*8*2, gb)
	}
}

// TestBenchEncodings: -encodings json,msgpack,packed gives a row per scenario
// and encoding with its wire bytes per message (each library's frame bytes), every run to the truth, and
// the sizes compared with json's; packed depth20 is less than half json's.
func TestBenchEncodings(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runSoak(t, "bench", "-scenarios", "depth20", "-encodings", "json,msgpack,packed", "-libs", "gorilla,gws",
		"-paths", "full,decode", "-runs", "1", "-n", "200", "-out", out)
	if err != nil {
		t.Fatalf("soak bench: %v\n%s", err, stderr)
	}
	if !regexp.MustCompile(`(?m)^scenario +path +gorilla +gws +raw +verdict$`).MatchString(stdout) {
		t.Errorf("no table header:\n%s", stdout)
	}
	wire := map[string]float64{}
	for _, e := range []string{"json", "msgpack", "packed"} {
		// The wire bytes list: a row, gorilla's frame bytes per message (payload's).
		m := regexp.MustCompile(`(?m)^depth20-` + e + ` +([0-9.]+) \(`).FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("no row depth20-%s with its wire bytes:\n%s", e, stdout)
		}
		wire[e], _ = strconv.ParseFloat(m[1], 64)
	}
	if !(wire["packed"] < wire["msgpack"] && 2*wire["packed"] < wire["json"]) {
		t.Errorf("wire bytes per message %v: want packed < msgpack and packed under half of json", wire)
	}
	if !regexp.MustCompile(`depth20 +json [0-9]+ B, msgpack [0-9]+ B \(-[0-9]+ %\), packed [0-9]+ B \(-[0-9]+ %\)`).MatchString(stdout) {
		t.Errorf("no comparison of the sizes:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(benchDir(t, out), "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Results []bench.Result `json:"results"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	// 3 encodings × (2 paths × 2 libraries + raw + ceiling) × (1 round + the warm-up)
	if len(rec.Results) != 3*6*2 {
		t.Errorf("%d results, want %d", len(rec.Results), 3*6*2)
	}
	for _, r := range rec.Results {
		if !r.Valid || r.Messages != 200 || r.Scenario != "depth20-"+r.Encoding || r.SentWire == 0 {
			t.Errorf("%s %s/%s round %d: valid %v (%s), %d msgs, wire %d", r.Scenario, r.Lib, r.Path, r.Round, r.Valid, r.Invalid, r.Messages, r.SentWire)
		}
	}
}

// TestBenchEncodingsCompression: -encodings and -compression compose: a row
// per scenario, compression setting and encoding (scenario-encoding, then
// +deflate), every run to the truth (frame bytes included), deflate
// negotiated beside the subprotocol, fewer frame bytes with it, and raw and
// the ceiling only on plain frames, per encoding.
func TestBenchEncodingsCompression(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runSoak(t, "bench", "-scenarios", "depth20", "-encodings", "json,packed", "-compression", "off,on",
		"-libs", "gorilla,gws", "-paths", "full", "-runs", "1", "-n", "200", "-out", out)
	if err != nil {
		t.Fatalf("soak bench: %v\n%s", err, stderr)
	}
	if strings.Contains(stdout, "INVALID") {
		t.Fatalf("an invalid run:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(benchDir(t, out), "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Results []bench.Result }
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	// (2 encodings × (2 libraries + raw + ceiling) off, 2 × 2 libraries on) × (1 round + the warm-up)
	if len(rec.Results) != (2*4+2*2)*2 {
		t.Errorf("%d results, want %d", len(rec.Results), (2*4+2*2)*2)
	}
	wire := map[string]int64{}
	for _, r := range rec.Results {
		deflated := strings.HasSuffix(r.Scenario, "+deflate")
		if want := "depth20-" + r.Encoding; strings.TrimSuffix(r.Scenario, "+deflate") != want {
			t.Errorf("row %s for encoding %s, want %s[+deflate]", r.Scenario, r.Encoding, want)
		}
		if !r.Valid || r.Messages != 200 {
			t.Errorf("%s %s/%s round %d: valid %v (%s), %d msgs", r.Scenario, r.Lib, r.Path, r.Round, r.Valid, r.Invalid, r.Messages)
		}
		if r.Lib == bench.RawLib {
			if deflated {
				t.Errorf("%s: a raw %s run under deflate", r.Scenario, r.Path)
			}
			continue
		}
		if deflated != strings.Contains(r.Extensions, "permessage-deflate") {
			t.Errorf("%s %s negotiated %q", r.Scenario, r.Lib, r.Extensions)
		}
		wire[r.Scenario+"/"+r.Lib] = r.WireBytes
	}
	// packed's floats hardly compress a message at a time: fewer bytes only
	// where the window is kept (gws; gorilla can only do without).
	for _, c := range []struct{ enc, lib string }{{"json", "gorilla"}, {"json", "gws"}, {"packed", "gws"}} {
		if plain, z := wire["depth20-"+c.enc+"/"+c.lib], wire["depth20-"+c.enc+"+deflate/"+c.lib]; z == 0 || z >= plain {
			t.Errorf("%s %s: %d frame bytes with deflate, %d without", c.enc, c.lib, z, plain)
		}
	}
	for _, want := range []string{"depth20-packed+deflate ", "depth20+deflate            json ", "depth20+deflate vs off     json -"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	dir := benchDir(t, out)
	if o, e, err := runSoak(t, "report", dir); err != nil {
		t.Fatalf("soak report: %v\n%s%s", err, o, e)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), `soak.draw("wire"`) || !strings.Contains(string(page), "depth20-packed+deflate") {
		t.Errorf("the bench page has no wire bytes chart of the composed rows (%v)", err)
	}
}

func TestBenchGobench(t *testing.T) {
	stdout, stderr, err := runSoak(t, "bench", "-scenarios", "kline", "-libs", "coder", "-paths", "bare", "-runs", "1", "-n", "100", "-format", "gobench", "-out", t.TempDir())
	if err != nil {
		t.Fatalf("soak bench: %v\n%s", err, stderr)
	}
	names := parseGobench(t, stdout)
	want := []string{"Soak/scenario=kline/path=bare/lib=coder", "Soak/scenario=kline/path=raw/lib=raw", "Soak/scenario=kline/path=ceiling/lib=raw"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("benchmarks %q, want %q", names, want)
	}
}

// TestBenchSweep: a sweep of two sizes runs every client to the truth
// (received == sent) and prints one row per size.
func TestBenchSweep(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runSoak(t, "bench", "-sweep", "2KB..4KB", "-libs", "gorilla", "-runs", "1", "-n", "40", "-out", out, "-wide") // the full cells
	if err != nil {
		t.Fatalf("soak bench: %v\n%s", err, stderr)
	}
	var rows []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "size ") && !strings.Contains(l, "gorilla") {
			t.Errorf("sweep header %q lacks the gorilla column", l)
		}
		if strings.HasPrefix(l, "2.0 kB ") || strings.HasPrefix(l, "4.0 kB ") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "2.0 kB ") || !strings.HasPrefix(rows[1], "4.0 kB ") {
		t.Errorf("rows %q, want one for 2.0 kB and one for 4.0 kB:\n%s", rows, stdout)
	}
	for _, r := range rows {
		if !strings.Contains(r, " bare ") || !strings.Contains(r, "MB/s") || !strings.Contains(r, "r/m") || strings.Contains(r, "INVALID") {
			t.Errorf("row %q: want the bare path, MB/s and reads/msg, no invalid cell", r)
		}
	}
	b, err := os.ReadFile(filepath.Join(benchDir(t, out), "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Results []bench.Result `json:"results"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	// 2 sizes × (gorilla bare + raw + ceiling) × (1 round + the warm-up)
	if len(rec.Results) != 2*3*2 {
		t.Errorf("%d results, want %d", len(rec.Results), 2*3*2)
	}
	scen := map[string]bool{}
	for _, r := range rec.Results {
		scen[r.Scenario] = true
		if !r.Valid || r.Messages != 40 || r.Messages != r.SentMessages || r.PayloadBytes != r.SentPayload {
			t.Errorf("%s %s/%s round %d: valid %v (%s), received %d msgs %d bytes, sent %d %d",
				r.Scenario, r.Lib, r.Path, r.Round, r.Valid, r.Invalid, r.Messages, r.PayloadBytes, r.SentMessages, r.SentPayload)
		}
	}
	if !scen["depth-2000B"] || !scen["depth-4000B"] || len(scen) != 2 {
		t.Errorf("scenarios run %v, want depth-2000B and depth-4000B", scen)
	}
}

func TestBenchBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Arguments that make a bench cheap: a refusal that does not happen
	// shows as a short bench that exits 0, not a long one. (Clipped: each
	// append below makes its own copy; the last of a flag given twice counts.)
	cheap := slices.Clip([]string{"-runs", "1", "-n", "10", "-paths", "bare", "-scenarios", "aggTrade", "-libs", "gorilla"})
	tests := []struct {
		name string
		args []string
		flag string
		want string // in the error line, when given
	}{
		{"unknown scenario", []string{"-scenarios", "aggTrade,bookDepth"}, "-scenarios", ""},
		{"unknown library", []string{"-libs", "gorilla,nhooyr"}, "-libs", ""},
		{"unknown path", []string{"-paths", "fast"}, "-paths", ""},
		{"no runs", []string{"-runs", "0"}, "-runs", ""},
		{"rcvbuf word", []string{"-rcvbuf", "banana"}, "-rcvbuf", ""},
		{"cpus word", []string{"-cpus", "all"}, "-cpus", ""},
		{"format", []string{"-format", "csv"}, "-format", ""},
		{"out not a directory", []string{"-out", filepath.Join(file, "sub")}, "-out", ""},
		{"profile missing", []string{"-profile", filepath.Join(t.TempDir(), "none.yaml")}, "-profile", ""},
		{"sweep reversed", []string{"-sweep", "900KB..9KB"}, "-sweep", ""},
		{"sweep word", []string{"-sweep", "banana"}, "-sweep", ""},
		{"sweep one size", []string{"-sweep", "9KB"}, "-sweep", ""},
		{"sweep too small", []string{"-sweep", "10B..9KB"}, "-sweep", ""},
		{"sweep too large", []string{"-sweep", "9KB..17MiB"}, "-sweep", ""},
		{"sweep and scenarios", []string{"-sweep", "9KB..900KB", "-scenarios", "depth"}, "-sweep", ""},
		{"unknown encoding", []string{"-encodings", "json,protobuf"}, "-encodings", ""},
		{"encoding twice", []string{"-encodings", "msgpack,json,msgpack"}, "-encodings", ""},
		{"sweep and encodings", []string{"-sweep", "9KB..900KB", "-encodings", "msgpack"}, "-sweep", ""},
		{"compression unknown", []string{"-compression", "off,zstd"}, "-compression", ""},
		{"compression twice", []string{"-compression", "on,on"}, "-compression", ""},
		{"sweep and compression", []string{"-sweep", "9KB..900KB", "-compression", "on"}, "-sweep", ""},
		// A name twice would be twin rows, their spread pooled and a verdict
		// of a library against itself.
		{"library twice", append(cheap, "-libs", "gorilla,gorilla"), "-libs", `library "gorilla" listed twice`},
		{"scenario twice", append(cheap, "-scenarios", "aggTrade,aggTrade"), "-scenarios", `scenario "aggTrade" listed twice`},
		{"path twice", append(cheap, "-paths", "bare,bare"), "-paths", `path "bare" listed twice`},
		{"cpu twice", append(cheap, "-cpus", "0,0:1"), "-cpus", "names CPU 0 twice"},
		// An empty value is refused, not the profile's list used instead.
		{"libs empty", append(cheap, "-libs", ""), "-libs", "no value"},
		{"scenarios empty", append(cheap, "-scenarios", " "), "-scenarios", "no value"},
		{"paths only commas", append(cheap, "-paths", ",,"), "-paths", "paths is empty"},
		{"encodings empty", append(cheap, "-encodings", ""), "-encodings", "no value"},
		{"compression empty", append(cheap, "-compression", ""), "-compression", "no value"},
		{"rcvbuf empty", append(cheap, "-rcvbuf", ""), "-rcvbuf", "no value"},
		{"cpus empty", append(cheap, "-cpus", ""), "-cpus", "no value"},
		{"profile empty", append(cheap, "-profile", ""), "-profile", "no value"},
		{"runs too many", append(cheap, "-runs", "1001"), "-runs", "at most 1000"},
		{"n negative", append(cheap, "-n", "-1"), "-n", "must not be negative"},
		{"rcvbuf too large", append(cheap, "-rcvbuf", "2GiB"), "-rcvbuf", "at most 1GiB"},
		{"profile endless", append(cheap, "-profile", "/dev/zero"), "-profile", "profile /dev/zero: larger than 4 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench", "-out", t.TempDir()}, tt.args...)
			_, _, err := runSoak(t, args...)
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("soak %v: error %v, want a usage error", args, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "flag "+tt.flag+":") || strings.Contains(msg, "\n") || !strings.Contains(msg, tt.want) {
				t.Errorf("soak %v: error %q, want one line naming flag %s and %q", args, msg, tt.flag, tt.want)
			}
			var errb strings.Builder
			if code := exitCode(err, &errb); code != 2 || strings.Count(errb.String(), "\n") != 1 {
				t.Errorf("exit code %d, stderr %q: want 2 and one line", code, errb.String())
			}
		})
	}
}

// TestBenchCompression: each scenario runs under each compression setting,
// every library's run passes the truth check (messages, payload and frame
// bytes equal the firehose's), and the table gives the wire bytes per
// message, smaller with deflate, and what was negotiated.
func TestBenchCompression(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runSoak(t, "bench", "-scenarios", "depth20", "-libs", "gorilla,gws", "-paths", "bare", "-runs", "1",
		"-n", "500", "-compression", "off,on", "-out", out)
	if err != nil {
		t.Fatalf("soak bench: %v\n%s", err, stderr)
	}
	if strings.Contains(stdout, "INVALID") {
		t.Fatalf("an invalid run:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(benchDir(t, out), "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Results []bench.Result }
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	wire := map[string]int64{}
	for _, r := range rec.Results {
		if r.Lib == bench.RawLib {
			continue
		}
		if !r.Valid || r.WireBytes == 0 {
			t.Errorf("%s %s round %d: valid %v (%s), %d frame bytes", r.Scenario, r.Lib, r.Round, r.Valid, r.Invalid, r.WireBytes)
		}
		if deflated := r.Scenario == "depth20+deflate"; deflated != strings.Contains(r.Extensions, "permessage-deflate") {
			t.Errorf("%s %s negotiated %q", r.Scenario, r.Lib, r.Extensions)
		}
		wire[r.Scenario+"/"+r.Lib] = r.WireBytes
	}
	for _, lib := range []string{"gorilla", "gws"} {
		if plain, z := wire["depth20/"+lib], wire["depth20+deflate/"+lib]; z == 0 || z*2 > plain {
			t.Errorf("%s: %d frame bytes with deflate, %d without", lib, z, plain)
		}
	}
	for _, want := range []string{"depth20+deflate ", "wire bytes per message", "negotiated (the server's Sec-WebSocket-Extensions answer)",
		"depth20+deflate gorilla: permessage-deflate;server_no_context_takeover"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	// The stored results keep the frame bytes: the bench page draws them.
	dir := benchDir(t, out)
	if o, e, err := runSoak(t, "report", dir); err != nil {
		t.Fatalf("soak report: %v\n%s%s", err, o, e)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), `soak.draw("wire"`) {
		t.Errorf("the bench page has no wire bytes chart (%v)", err)
	}
	db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.BenchResults()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range rows {
		if r := rec.Results[i]; w.WireBytes != r.WireBytes || w.Extensions != r.Extensions {
			t.Errorf("soak.db result %d: %d frame bytes %q, results.json %d %q", i, w.WireBytes, w.Extensions, r.WireBytes, r.Extensions)
		}
	}
}

// TestBenchProfiles reads profiles/bench*.yaml: each is valid, and bench.yaml
// is the built-in default.
func TestBenchProfiles(t *testing.T) {
	files, err := filepath.Glob("../../profiles/bench*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("bench profiles: %v (%v), want bench.yaml and bench-full.yaml", files, err)
	}
	for _, f := range files {
		p, err := profile.LoadBench(f, bench.ProfileNames())
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cfg, _ := bench.ConfigFromProfile(p)
		if len(cfg.Scenarios) != 6 || len(cfg.Libs) != len(wire.Libraries) || len(cfg.Paths) != 3 || cfg.Runs != 5 {
			t.Errorf("%s: %d scenarios, %d libraries, %d paths, %d runs; want the whole table, 5 runs", f, len(cfg.Scenarios), len(cfg.Libs), len(cfg.Paths), cfg.Runs)
		}
		if filepath.Base(f) == "bench.yaml" {
			want, _ := bench.ConfigFromProfile(profile.DefaultBench(bench.ProfileNames()))
			if fmt.Sprintf("%+v", cfg) != fmt.Sprintf("%+v", want) {
				t.Errorf("profiles/bench.yaml differs from the built-in default:\n got %+v\nwant %+v", cfg, want)
			}
		}
	}
}

// TestBenchProfileErrors: a bench profile's problem is one line naming the
// file, the line and the key, and exit code 2; nothing is run.
func TestBenchProfileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "runs: 2\nscenaros: [aggTrade]\n", `:2: unknown key "scenaros" in profile; did you mean "scenarios"?`},
		{"wrong type", "libs: [gorilla]\nruns: many\n", `:2: runs must be an integer, got "many"`},
		{"list not a list", "libs: gorilla\n", `:1: libs must be a list, got "gorilla"`},
		{"library twice", "libs:\n  - gorilla\n  - gobwas\n  - gorilla\n", `:4: library "gorilla" listed twice (first at line 2)`},
		{"scenario twice", "scenarios: [aggTrade, depth, aggTrade]\n", `:1: scenario "aggTrade" listed twice (first at line 1)`},
		{"unknown scenario", "scenarios: [aggTrade, bookDepth]\n", `:1: unknown scenario "bookDepth" (known: aggTrade, kline, depth20, depth, tickerArr, mix)`},
		{"unknown path", "paths: [bare, fast]\n", `:1: unknown path "fast" (known: bare, full, decode)`},
		{"bad cpus", "cpus: \"0-1\"\n", `:1: cpus "0-1": want SERVER:CLIENT CPU lists, such as 0:1 or 0-1:2-3`},
		{"deflate out of range", "deflate:\n  window_bits: 8\n", `:2: deflate.window_bits must be at least 9, got 8`},
		{"bytes per run zero", "bytes_per_run: 0\n", `:1: bytes_per_run must be greater than zero`},
		{"gomemlimit word", "worker_runtime: {gomemlimit: lots}\n", `:1: worker_runtime.gomemlimit: bad size "lots": want bytes or a number with a unit such as 512KiB, 16MiB, 1MB`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			_, _, err := runSoak(t, "bench", "-profile", path, "-out", out)
			var errb strings.Builder
			code := exitCode(err, &errb)
			if want := "soak: " + path + tt.want + "\n"; code != 2 || errb.String() != want {
				t.Errorf("exit code %d, stderr %q; want 2, %q", code, errb.String(), want)
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 {
				t.Errorf("a refused profile left bench directories: %v", entries)
			}
		})
	}
}
