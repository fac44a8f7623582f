package compare

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
)

// secondsRun writes a 2-minute run of gorilla and gws whose CPU % at each
// second is cpu(lib, sec), and loads it.
func secondsRun(t *testing.T, name string, cpu func(lib string, sec int64) float64) Side {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: name, Name: "local", Target: "ws://127.0.0.1:9443", Status: "done", Started: start,
		Planned: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for _, lib := range []string{"gorilla", "gws"} {
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "m", Version: "v", Pid: 1}); err != nil {
			t.Fatal(err)
		}
		for sec := int64(1); sec <= 120; sec++ {
			b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
				HasWorker: true, Msgs: 10, MsgsTotal: 10 * sec, HeapBytes: 8e6, HasProc: true, RSS: 60e6, CPUPct: cpu(lib, sec)})
		}
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return load(t, path, "runs/"+name)
}

// noise is 10 % plus a draw of 1 point a second, the same for a seed.
func noise(seed uint64) func(string, int64) float64 {
	draws := map[string][]float64{}
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, lib := range []string{"gorilla", "gws"} {
		for range 121 {
			draws[lib] = append(draws[lib], 10+rng.NormFloat64())
		}
	}
	return func(lib string, sec int64) float64 { return draws[lib][sec] }
}

// TestCompareRanked: B's gws burns a point of CPU more than A's, its
// gorilla the same seconds as A's: gws's CPU is called +1 point, gorilla's
// is =, labelled within-run noise; identical seconds make no other call.
func TestCompareRanked(t *testing.T) {
	base := noise(1)
	a := secondsRun(t, "a", base)
	b := secondsRun(t, "b", func(lib string, sec int64) float64 {
		if lib == "gws" {
			return base(lib, sec) + 1
		}
		return base(lib, sec)
	})
	var buf bytes.Buffer
	Write(&buf, a, b, Options{})
	out := buf.String()
	if !strings.Contains(out, "within-run noise only") {
		t.Errorf("the ranked block does not say it rests on the noise within a run:\n%s", out)
	}
	var cpu string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "mean of per-second CPU %") {
			cpu = line
		}
	}
	f := strings.Fields(strings.TrimPrefix(cpu, "mean of per-second CPU %"))
	// gorilla: "= (p 1.00)"; gws: "+1.00 points of one core (p 0.000)"
	if len(f) < 6 || f[0] != "=" || !strings.HasPrefix(f[3], "+1.0") {
		t.Errorf("CPU row %q: want gorilla = and gws about +1 point", cpu)
	}
	for _, id := range []string{"mean of per-second Go heap", "RSS over the window's second half"} {
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, id) && strings.Count(line, "= (p 1.00)") != 2 {
				t.Errorf("identical columns called different: %q", line)
			}
		}
	}
}

// TestCompareRuns: with three runs a side the runs are the unit, and the
// test cannot reach 5 % (its least p, all of B above all of A, is 2/20):
// every cell =, said so; with four a side, a point of CPU between the
// sides puts every B run above every A run: p = 2/70 = 0.029, called.
func TestCompareRuns(t *testing.T) {
	side := func(n int, seed0 uint64, plus float64) []Side {
		var out []Side
		for i := range n {
			base := noise(seed0 + uint64(i))
			out = append(out, secondsRun(t, "r", func(lib string, sec int64) float64 { return base(lib, sec) + plus }))
		}
		return out
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{3, "= (p 0.10)"}, {4, "points of one core (p 0.029)"}} {
		as, bs := side(tc.n, 10, 0), side(tc.n, 20, 1)
		var buf bytes.Buffer
		WriteRanked(&buf, as, bs)
		out := buf.String()
		if !strings.Contains(out, "the runs are the unit") {
			t.Errorf("%d runs a side: not tested as runs:\n%s", tc.n, out)
		}
		var cpu string
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, "mean of per-second CPU %") {
				cpu = line
			}
		}
		if strings.Count(cpu, tc.want) != 2 {
			t.Errorf("%d runs a side: CPU row %q, want %q for both columns", tc.n, cpu, tc.want)
		}
		if note := strings.Contains(out, "fewer than 4 values a side"); note != (tc.n < 4) {
			t.Errorf("%d runs a side: note %v:\n%s", tc.n, note, out)
		}
	}
}
