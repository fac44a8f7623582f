package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/limit"
	"github.com/wssoak/wssoak/internal/wire"
)

// testNames stand for the firehose's scenarios and the bench's paths, which
// the profile does not link; a sized scenario is "depth-<n>B", n ≥ 100,
// and "book" (seed 003's order book) is known outside the default list.
var testNames = BenchNames{
	Scenarios: []string{"aggTrade", "kline", "depth20", "depth", "tickerArr", "mix"},
	Scenario: func(s string) error {
		if s == "book" {
			return nil
		}
		var n int
		if _, err := fmt.Sscanf(s, "depth-%dB", &n); err != nil || fmt.Sprintf("depth-%dB", n) != s {
			return fmt.Errorf("unknown scenario %q (known: aggTrade, kline, depth20, depth, tickerArr, mix)", s)
		}
		if n < 100 {
			return fmt.Errorf("payload size %d bytes: want 100 to 16777216", n)
		}
		return nil
	},
	Paths: []string{"bare", "full", "decode"},
}

// stripBench clears what a parsed bench profile has and the built-in one has not.
func stripBench(b *Bench) Bench {
	c := *b
	c.Path, c.names = "", BenchNames{}
	return c
}

// isBenchProfile: whether profiles/f is soak bench's (bench*.yaml, and
// seed 003's grid) rather than a soak's.
func isBenchProfile(f string) bool {
	return strings.HasPrefix(filepath.Base(f), "bench") || filepath.Base(f) == "codec-grid.yaml"
}

// TestBenchProfilesDecode: the bench profiles in profiles/ decode, and
// bench.yaml is the built-in default.
func TestBenchProfilesDecode(t *testing.T) {
	files, err := filepath.Glob("../../profiles/*.yaml")
	files = slices.DeleteFunc(files, func(f string) bool { return !isBenchProfile(f) })
	if err != nil || len(files) < 3 {
		t.Fatalf("bench profiles %v (%v): want bench.yaml, bench-full.yaml and codec-grid.yaml", files, err)
	}
	for _, f := range files {
		b, err := LoadBench(f, testNames)
		if err != nil {
			t.Fatal(err)
		}
		if b.Path != f {
			t.Errorf("%s: Path %q", f, b.Path)
		}
		switch filepath.Base(f) {
		case "bench.yaml":
			if got, want := stripBench(b), stripBench(DefaultBench(testNames)); !reflect.DeepEqual(got, want) {
				t.Errorf("bench.yaml differs from DefaultBench:\n got %+v\nwant %+v", got, want)
			}
		case "codec-grid.yaml":
			if !b.EncodeEach || !reflect.DeepEqual(b.Encodings, []string{"json", "msgpack", "packed"}) || len(b.Compression) != 2 ||
				!slices.Contains(b.Scenarios, "book") || !slices.Contains(b.Paths, "decode") {
				t.Errorf("codec-grid.yaml: %+v; want seed 003's grid: the encodings × deflate off, on, each message encoded as sent, the seed's book, decode", b)
			}
		case "bench-full.yaml":
			if b.BytesPerRun != 41_000_000 || len(b.Scenarios) != 6 || len(b.Libs) != len(wire.Libraries) || len(b.Paths) != 3 {
				t.Errorf("bench-full.yaml: %+v; want the whole table with 41MB runs", b)
			}
		}
	}
}

// TestDefaultBench: the built-in profile is the whole table, with the
// firehose's deflate defaults.
func TestDefaultBench(t *testing.T) {
	b := DefaultBench(testNames)
	if !reflect.DeepEqual(b.Scenarios, testNames.Scenarios) || !reflect.DeepEqual(b.Libs, wire.Libraries) || !reflect.DeepEqual(b.Paths, testNames.Paths) {
		t.Errorf("default lists %v %v %v: want every scenario, library and path", b.Scenarios, b.Libs, b.Paths)
	}
	if got, want := b.Deflate.Wire(), (wire.Deflate{}).WithDefaults(); got != want {
		t.Errorf("default deflate %+v, want %+v", got, want)
	}
	// The lists are the profile's own: changing one leaves the names alone.
	b.Scenarios[0] = "x"
	if testNames.Scenarios[0] != "aggTrade" {
		t.Error("DefaultBench shares its scenarios with the names")
	}
}

func TestParseBench(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       func(*Bench)
	}{
		{"one key", "runs: 2\n", func(b *Bench) { b.Runs = 2 }},
		{"lists", "scenarios: [depth, aggTrade]\nlibs: [gws]\npaths: [full]\n", func(b *Bench) {
			b.Scenarios, b.Libs, b.Paths = []string{"depth", "aggTrade"}, []string{"gws"}, []string{"full"}
		}},
		{"sized scenario", "scenarios: [depth-9000B]\n", func(b *Bench) { b.Scenarios = []string{"depth-9000B"} }},
		{"empty encodings and compression", "encodings: []\ncompression: []\n", func(b *Bench) { b.Encodings, b.Compression = nil, nil }},
		{"encodings and compression", "encodings: [json, packed]\ncompression: [off, no_context_takeover]\n", func(b *Bench) {
			b.Encodings, b.Compression = []string{"json", "packed"}, []wire.Compression{wire.CompressionOff, wire.CompressionNoContextTakeover}
		}},
		{"sizes", "bytes_per_run: 8MiB\nrcvbuf: 128KiB\nn: 2000\n", func(b *Bench) { b.BytesPerRun, b.RcvBuf, b.N = 8<<20, 128<<10, 2000 }},
		{"largest seed", "seed: 18446744073709551615\n", func(b *Bench) { b.Seed = 1<<64 - 1 }},
		{"cpus", "cpus: 0-1,3:2\n", func(b *Bench) { b.CPUs = CPUs{Server: []int{0, 1, 3}, Client: []int{2}} }},
		{"no cpus", "cpus: ''\n", func(*Bench) {}},
		{"runtime", "worker_runtime: {gomaxprocs: 2, gogc: -1, gomemlimit: 512MiB}\n", func(b *Bench) {
			b.WorkerRuntime = Runtime{GOMAXPROCS: 2, GOGC: -1, GOMEMLIMIT: 512 << 20}
		}},
		{"deflate", "deflate: {window_bits: 9, level: 9}\n", func(b *Bench) { b.Deflate = BenchDeflate{WindowBits: 9, Level: 9} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBench("b.yaml", []byte(tt.yaml), testNames)
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultBench(testNames)
			tt.want(want)
			if !reflect.DeepEqual(stripBench(got), stripBench(want)) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

// badBench are bench profiles with one problem each; the golden file holds
// their errors.
var badBench = []struct{ name, yaml string }{
	{"empty", ""},
	{"not a mapping", "- runs\n"},
	{"syntax", "runs: 2\nlibs: [gorilla\n"},
	{"unknown key", "runs: 2\nscenaros: [aggTrade]\n"},
	{"unknown key far", "colour: red\n"},
	{"unknown key nested", "deflate:\n  windowbits: 9\n"},
	{"soak profile key", "libraries: [gorilla]\n"},
	{"duplicate key", "runs: 2\nruns: 3\n"},
	{"no value", "libs:\n"},
	{"runs a word", "runs: many\n"},
	{"runs zero", "runs: 0\n"},
	{"runs too many", "runs: 1001\n"},
	{"runs a list", "runs: [1]\n"},
	{"n negative", "n: -1\n"},
	{"n too many", "n: 2000000000\n"},
	{"n huge", "n: 99999999999999999999999\n"},
	{"libs not a list", "libs: gorilla\n"},
	{"libs empty", "libs: []\n"},
	{"unknown library", "libs: [gorilla, nhooyr]\n"},
	{"library twice", "libs:\n  - gorilla\n  - gobwas\n  - gorilla\n"},
	{"library a mapping", "libs: [{gorilla: 1}]\n"},
	{"scenarios empty", "scenarios: []\n"},
	{"unknown scenario", "scenarios: [aggTrade, bookDepth]\n"},
	{"sized scenario too small", "scenarios: [depth-10B]\n"},
	{"scenario twice", "scenarios: [aggTrade, depth, aggTrade]\n"},
	{"too many scenarios", "scenarios: [" + strings.Repeat("depth-100B, ", 1000) + "depth-100B]\n"},
	{"paths empty", "paths: []\n"},
	{"unknown path", "paths: [bare, fast]\n"},
	{"path twice", "paths: [full, full]\n"},
	{"unknown encoding", "encodings: [json, protobuf]\n"},
	{"encoding twice", "encodings: [msgpack, json, msgpack]\n"},
	{"unknown compression", "compression: [off, zstd]\n"},
	{"compression twice", "compression: [on, on]\n"},
	{"compression not a list", "compression: on\n"},
	{"deflate window too small", "deflate:\n  window_bits: 8\n"},
	{"deflate level too high", "deflate: {level: 10}\n"},
	{"deflate not a mapping", "deflate: 15\n"},
	{"bytes per run zero", "bytes_per_run: 0\n"},
	{"bytes per run word", "bytes_per_run: lots\n"},
	{"bytes per run too large", "bytes_per_run: 2000GiB\n"},
	{"rcvbuf negative", "rcvbuf: -1\n"},
	{"rcvbuf too large", "rcvbuf: 2GiB\n"},
	{"rcvbuf empty", "rcvbuf: ''\n"},
	{"seed negative", "seed: -1\n"},
	{"seed huge", "seed: 99999999999999999999999\n"},
	{"seed float", "seed: 1.5\n"},
	{"cpus no colon", "cpus: '0-1'\n"},
	{"cpus word", "cpus: all\n"},
	{"cpus reversed range", "cpus: '3-1:0'\n"},
	{"cpus too high", "cpus: '0:1024'\n"},
	{"cpus twice", "cpus: '0,0:1'\n"},
	{"cpus a list", "cpus: [0, 1]\n"},
	{"gomaxprocs negative", "worker_runtime: {gomaxprocs: -1}\n"},
	{"gogc below off", "worker_runtime: {gogc: -2}\n"},
	{"gomemlimit word", "worker_runtime: {gomemlimit: lots}\n"},
	{"alias of a bad value", "bytes_per_run: &s 8MB\nruns: *s\n"},
	{"tab indent", "deflate:\n\tlevel: 1\n"},
	{"two documents", "runs: 2\n---\nruns: 3\n"},
}

func TestParseBenchErrors(t *testing.T) {
	goldenErrors(t, "testdata/bench_errors.golden", badBench, func(path string, data []byte) (any, error) {
		return ParseBench(path, data, testNames)
	})
}

// The lines the bench documents, independent of the golden file.
func TestParseBenchErrorsExact(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"runs: 2\n\nscenaros: [aggTrade]\n", `b.yaml:3: unknown key "scenaros" in profile; did you mean "scenarios"?`},
		{"libs: [gorilla]\nruns: many\n", `b.yaml:2: runs must be an integer, got "many"`},
		{"libs:\n  - gorilla\n  - gws\n  - gorilla\n", `b.yaml:4: library "gorilla" listed twice (first at line 2)`},
		{"scenarios: [aggTrade, aggTrade]\n", `b.yaml:1: scenario "aggTrade" listed twice (first at line 1)`},
		{"cpus: '0,0:1'\n", `b.yaml:1: cpus "0,0:1": "0,0" names CPU 0 twice`},
	}
	for _, tt := range tests {
		if _, err := ParseBench("b.yaml", []byte(tt.yaml), testNames); err == nil || err.Error() != tt.want {
			t.Errorf("ParseBench(%q):\n got %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
}

// TestLoadBenchBounded: a bench profile is read as run's profile is: at
// most limit.ProfileFile bytes, an endless file stopped at the bound.
func TestLoadBenchBounded(t *testing.T) {
	_, err := LoadBench("/dev/zero", testNames)
	var tl *limit.TooLargeError
	if !errors.As(err, &tl) || err.Error() != "profile /dev/zero: larger than 4 MiB" {
		t.Errorf("LoadBench(/dev/zero) = %v, want the bounded read's error", err)
	}
	_, err = LoadBench(filepath.Join(t.TempDir(), "none.yaml"), testNames)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadBench of a missing file = %v, want fs.ErrNotExist", err)
	}
}

func TestBenchSet(t *testing.T) {
	tests := []struct {
		key, value string
		want       func(*Bench) // nil: an error
		err        string
	}{
		{"libs", "gws, gorilla", func(b *Bench) { b.Libs = []string{"gws", "gorilla"} }, ""},
		{"libs", "gorilla,,gws,", func(b *Bench) { b.Libs = []string{"gorilla", "gws"} }, ""},
		{"scenarios", "depth-9000B", func(b *Bench) { b.Scenarios = []string{"depth-9000B"} }, ""},
		{"runs", "3", func(b *Bench) { b.Runs = 3 }, ""},
		{"seed", "7", func(b *Bench) { b.Seed = 7 }, ""}, // every key, though seed has no flag today
		{"rcvbuf", "128KiB", func(b *Bench) { b.RcvBuf = 128 << 10 }, ""},
		{"cpus", "0:1", func(b *Bench) { b.CPUs = CPUs{Server: []int{0}, Client: []int{1}} }, ""},
		{"compression", "off,on", func(b *Bench) { b.Compression = []wire.Compression{wire.CompressionOff, wire.CompressionOn} }, ""},
		{"libs", "gorilla,gorilla", nil, `flag -libs: library "gorilla" listed twice`},
		{"scenarios", "aggTrade,aggTrade", nil, `flag -scenarios: scenario "aggTrade" listed twice`},
		{"paths", "bare,full,bare", nil, `flag -paths: path "bare" listed twice`},
		{"encodings", "json,json", nil, `flag -encodings: encoding "json" listed twice`},
		{"libs", "", nil, "flag -libs: no value: leave the flag out to keep the profile's libs"},
		{"scenarios", "  ", nil, "flag -scenarios: no value: leave the flag out to keep the profile's scenarios"},
		{"cpus", "", nil, "flag -cpus: no value: leave the flag out to keep the profile's cpus"},
		{"libs", ",", nil, "flag -libs: libs is empty: list at least one of gorilla, gobwas, coder, gws, fasthttp, nbio"},
		{"libs", "gorilla,nhooyr", nil, `flag -libs: unknown library "nhooyr" (known: gorilla, gobwas, coder, gws, fasthttp, nbio)`},
		{"runs", "0", nil, "flag -runs: runs must be at least 1, got 0"},
		{"n", "-5", nil, "flag -n: n must not be negative, got -5"},
		{"rcvbuf", "banana", nil, `flag -rcvbuf: rcvbuf: bad size "banana": want bytes or a number with a unit such as 512KiB, 16MiB, 1MB`},
		{"rcvbuf", "4GiB", nil, "flag -rcvbuf: rcvbuf must be at most 1GiB, got 4GiB"},
		{"cpus", "all", nil, `flag -cpus: cpus "all": want SERVER:CLIENT CPU lists, such as 0:1 or 0-1:2-3`},
		{"cpus", "0:1\n2", nil, `flag -cpus: cpus "0:1\n2": "1\n2" is not a CPU list such as 0, 2-3 or 0,2 (CPUs 0 to 1023)`},
		{"profile", "x", nil, "flag -profile: no such key in a bench profile"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			b := DefaultBench(testNames)
			err := b.Set(tt.key, tt.value)
			if tt.want == nil {
				if err == nil || err.Error() != tt.err {
					t.Errorf("Set(%q, %q) = %v, want %s", tt.key, tt.value, err, tt.err)
				}
				if !reflect.DeepEqual(stripBench(b), stripBench(DefaultBench(testNames))) {
					t.Errorf("a refused Set changed the profile: %+v", b)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultBench(testNames)
			tt.want(want)
			if !reflect.DeepEqual(stripBench(b), stripBench(want)) {
				t.Errorf("got %+v\nwant %+v", b, want)
			}
		})
	}
}

func TestParseCPUs(t *testing.T) {
	tests := []struct {
		in, want string // want: as String writes it, or the error
		cpus     CPUs
	}{
		{"0:1", "0:1", CPUs{Server: []int{0}, Client: []int{1}}},
		{"0-1:2-3", "0-1:2-3", CPUs{Server: []int{0, 1}, Client: []int{2, 3}}},
		{"3,0-1, 5:2", "3,0-1,5:2", CPUs{Server: []int{3, 0, 1, 5}, Client: []int{2}}},
		{"0:0", "0:0", CPUs{Server: []int{0}, Client: []int{0}}}, // one CPU for both: a choice, not a mistake
		{"0", `"0": want SERVER:CLIENT CPU lists, such as 0:1 or 0-1:2-3`, CPUs{}},
		{"0:", `"0:": "" is not a CPU list such as 0, 2-3 or 0,2 (CPUs 0 to 1023)`, CPUs{}},
		{"1-0:2", `"1-0:2": "1-0" is not a CPU list such as 0, 2-3 or 0,2 (CPUs 0 to 1023)`, CPUs{}},
		{"0:1-2,2", `"0:1-2,2": "1-2,2" names CPU 2 twice`, CPUs{}},
		{"0:1024", `"0:1024": "1024" is not a CPU list such as 0, 2-3 or 0,2 (CPUs 0 to 1023)`, CPUs{}},
	}
	for _, tt := range tests {
		c, err := ParseCPUs(tt.in)
		got := c.String()
		if err != nil {
			got = err.Error()
		}
		if got != tt.want || !reflect.DeepEqual(c, tt.cpus) {
			t.Errorf("ParseCPUs(%q) = %+v, %q; want %+v, %q", tt.in, c, got, tt.cpus, tt.want)
		}
	}
}
