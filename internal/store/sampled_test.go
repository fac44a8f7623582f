package store

import (
	"database/sql"
	"math"
	"net/url"
	"path/filepath"
	"testing"
)

// TestNotSampled: a worker of which no /proc sample was taken reads back as
// NaN, one whose samples summed to 0 ticks as 0; a database from before
// schemaNotSampled (where 0 meant "no sample") reads its 0 as NaN, whether
// opened read-only as it is or migrated by a writer.
func TestNotSampled(t *testing.T) {
	db, _ := open(t)
	for _, w := range []Worker{{Lib: "gorilla", SampledCPU: math.NaN()}, {Lib: "gws", SampledCPU: 0}, {Lib: "coder", SampledCPU: 0.42}} {
		if err := db.UpsertWorker(w); err != nil {
			t.Fatal(err)
		}
	}
	check := func(db *DB, want map[string]float64) {
		t.Helper()
		ws, err := db.Workers()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if x := want[w.Lib]; !(w.SampledCPU == x || math.IsNaN(x) && math.IsNaN(w.SampledCPU)) {
				t.Errorf("%s: sampled CPU %v, want %v", w.Lib, w.SampledCPU, x)
			}
		}
		if len(ws) != len(want) {
			t.Errorf("%d workers, want %d", len(ws), len(want))
		}
	}
	check(db, map[string]float64{"gorilla": math.NaN(), "gws": 0, "coder": 0.42})

	// A database of version 6 that stored 0 for "not sampled".
	path := filepath.Join(t.TempDir(), "soak.db")
	raw, err := sql.Open("sqlite3", dsn(path, url.Values{"_journal_mode": {"WAL"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:notSampledVersion-1] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`PRAGMA user_version = 6;
		INSERT INTO workers (lib, module, version, pid, exit_code, rusage_user_s, rusage_sys_s, sampled_cpu_s, maxrss, lat_count, lat_p50_us, lat_p99_us, lat_max_us)
		VALUES ('gws', '', '', 1, 0, 0.5, 0, 0, 0, 0, 0, 0, 0), ('coder', '', '', 2, 0, 0.5, 0, 0.42, 0, 0, 0, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	old := map[string]float64{"gws": math.NaN(), "coder": 0.42}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	check(ro, old)
	ro.Close()
	rw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	check(rw, old)
}
