package profile

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/wire"
)

// checkBench fails t unless b holds what a bench may run: every list of
// known names without a repeat, the required ones not empty, every number
// within its bounds.
func checkBench(t *testing.T, b *Bench) {
	t.Helper()
	names := func(key string, list, known []string, accept func(string) error, mayBeEmpty bool) {
		if len(list) == 0 && !mayBeEmpty {
			t.Fatalf("%s empty", key)
		}
		for i, s := range list {
			if !slices.Contains(known, s) && (accept == nil || accept(s) != nil) {
				t.Fatalf("%s: unknown %q", key, s)
			}
			if slices.Contains(list[:i], s) {
				t.Fatalf("%s: %q twice", key, s)
			}
		}
	}
	names("scenarios", b.Scenarios, testNames.Scenarios, testNames.Scenario, false)
	names("libs", b.Libs, wire.Libraries, nil, false)
	names("paths", b.Paths, testNames.Paths, nil, false)
	names("encodings", b.Encodings, codec.Names(), nil, true)
	var cs []string
	for _, c := range b.Compression {
		cs = append(cs, c.String())
	}
	names("compression", cs, wire.CompressionNames(), nil, true)
	if err := b.Deflate.Wire().Validate(); err != nil {
		t.Fatalf("deflate: %v", err)
	}
	switch {
	case b.Runs < 1 || b.Runs > 1000, b.N < 0 || b.N > 1e9, b.BytesPerRun < 1 || b.BytesPerRun > 1<<40, b.RcvBuf < 0 || b.RcvBuf > 1<<30:
		t.Fatalf("a number out of bounds: %+v", b)
	case b.WorkerRuntime.GOMAXPROCS < 0 || b.WorkerRuntime.GOGC < -1 || b.WorkerRuntime.GOMEMLIMIT < 0:
		t.Fatalf("worker_runtime out of bounds: %+v", b.WorkerRuntime)
	}
	if (b.CPUs.Server == nil) != (b.CPUs.Client == nil) {
		t.Fatalf("cpus %+v: one side pinned", b.CPUs)
	}
	for _, l := range [][]int{b.CPUs.Server, b.CPUs.Client} {
		for i, c := range l {
			if c < 0 || c > MaxCPU || slices.Contains(l[:i], c) {
				t.Fatalf("cpus %+v", b.CPUs)
			}
		}
	}
	if b.CPUs.Pinned() {
		if again, err := ParseCPUs(b.CPUs.String()); err != nil || !reflect.DeepEqual(again, b.CPUs) {
			t.Fatalf("cpus %+v written %q reads back as %+v, %v", b.CPUs, b.CPUs.String(), again, err)
		}
	}
}

// lineCount is the number of lines of data as YAML counts them: a line
// ends at \n, \r\n or a lone \r (and, as libyaml reads, NEL, LS or PS).
func lineCount(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	n := 1
	for _, br := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		n += strings.Count(s, br)
	}
	return n
}

// FuzzParseBench: the bench profile decoder never panics; it either gives
// one *Error line naming a line of the file, or a profile a bench may run.
func FuzzParseBench(f *testing.F) {
	for _, name := range []string{"bench.yaml", "bench-full.yaml"} {
		data, err := os.ReadFile("../../profiles/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, b := range badBench {
		f.Add([]byte(b.yaml))
	}
	f.Add([]byte("scenarios: &s [depth-9000B, aggTrade]\npaths: *s\n"))
	f.Add([]byte("cpus: '0-3,7:4-6'\nseed: 0x10\nn: 1_000\n"))
	f.Add([]byte("rcvbuf: \"-1\\nKiB\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBench("f.yaml", data, testNames)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > lineCount(data) || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q: want one *Error line naming a line of the file", err)
			}
			return
		}
		checkBench(t, b)
	})
}

// FuzzBenchSet: a flag laid over a key never panics; it either gives one
// line naming the flag and leaves the profile as it was, or a profile a
// bench may run.
func FuzzBenchSet(f *testing.F) {
	keys := []string{"scenarios", "libs", "paths", "encodings", "compression", "runs", "n", "rcvbuf", "cpus", "seed", "bytes_per_run", "deflate", "nokey"}
	for i, v := range []string{"aggTrade,aggTrade", "gorilla, gws", "bare,,full", "", "on,off", "1001", "-1", "2GiB", "0-1:2", "18446744073709551616", "8MB", "15", "x"} {
		f.Add(uint8(i), v)
	}
	f.Add(uint8(8), "0,0:1")
	f.Add(uint8(0), "depth-9000B,[a]")
	f.Add(uint8(5), "{a: 1}")
	f.Add(uint8(7), "-1\nKiB")
	f.Fuzz(func(t *testing.T, k uint8, value string) {
		key := keys[int(k)%len(keys)]
		b := DefaultBench(testNames)
		err := b.Set(key, value)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line != 0 || !strings.HasPrefix(err.Error(), "flag -"+key+": ") || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("Set(%q, %q) = %q: want one line naming the flag", key, value, err)
			}
			if !reflect.DeepEqual(stripBench(b), stripBench(DefaultBench(testNames))) {
				t.Fatalf("a refused Set(%q, %q) changed the profile: %+v", key, value, b)
			}
			return
		}
		if strings.TrimSpace(value) == "" {
			t.Fatalf("Set(%q, %q) took an empty value", key, value)
		}
		checkBench(t, b)
	})
}
