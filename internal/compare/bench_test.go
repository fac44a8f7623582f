package compare

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/store"
)

// benchDB writes a bench whose gws bare runs take wall ns each (1000
// messages, 2000 µs CPU), with a coder bare cell when withCoder.
func benchDB(t *testing.T, wall int64, withCoder bool) *store.DB {
	t.Helper()
	db := newBench(t, "bench-", nil)
	var rs []store.BenchResult
	for round := range 3 {
		rs = append(rs, store.BenchResult{Scenario: "aggTrade", Path: "bare", Lib: "gws", Round: round, Valid: true, Msgs: 1000,
			WallNS: wall + int64(round)*1000, UserNS: 2e6})
		if withCoder {
			rs = append(rs, store.BenchResult{Scenario: "aggTrade", Path: "bare", Lib: "coder", Round: round, Valid: round == 0, Msgs: 1000, WallNS: wall})
		}
	}
	if err := db.WriteBenchResults(rs); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestWriteBench: the cells of two benches side by side with the relative
// difference of the median msgs/s and CPU µs/msg; a cell without counted
// runs (all invalid) or only in one bench shows "-".
func TestWriteBench(t *testing.T) {
	a, err := LoadBench(benchDB(t, 10_000_000, true), "out/a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadBench(benchDB(t, 5_000_000, false), "out/b")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteBench(&buf, a, b)
	out := buf.String()
	lines := strings.Split(out, "\n")
	fields := func(prefix string) []string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line %q in:\n%s", prefix, out)
		return nil
	}
	if h := fields("scenario"); strings.Join(h, " ") != "scenario path lib A msgs/s B msgs/s Δ % A CPU µs/msg B CPU µs/msg Δ %" {
		t.Errorf("header %q", h)
	}
	// gws: 1000 msgs in 10.0015 ms (median of rounds 1, 2) against 5.0015 ms.
	if f := fields("aggTrade  bare  gws"); strings.Join(f[3:], " ") != "99,985 199,940 +100.0 % 2.000 2.000 +0.0 %" {
		t.Errorf("gws row %q", f)
	}
	if f := fields("aggTrade  bare  coder"); strings.Join(f[3:], " ") != "- - - - - -" {
		t.Errorf("coder row %q: want no counted run on either side", f)
	}
	if !strings.HasPrefix(out, "A: out/a  (bench ") || !strings.Contains(out, "\nB: out/b  (bench ") {
		t.Errorf("header lines:\n%s", out)
	}
}

// newBench opens a new bench database, its run id prefix followed by its
// directory's name, with settings; it is closed when the test ends.
func newBench(t *testing.T, prefix string, settings map[string]string) *store.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.CreateRun(store.Run{ID: prefix + filepath.Base(filepath.Dir(path)), Status: "done", Settings: settings}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetKind(store.KindBench); err != nil {
		t.Fatal(err)
	}
	return db
}
