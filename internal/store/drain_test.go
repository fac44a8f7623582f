package store

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestDrainAndNoLatency: in a run of a 3 s window, the rows of seconds 4
// and 5 (the drain) are stored flagged and read back so, the window's not;
// a second without a latency sample stores NULL latency and reads NoLat,
// one with a sample its latency; the buckets the charts draw leave the
// drain out. A database from before schemaDrain (latency 0, no drain
// column) reads the same, read-only, and once migrated.
func TestDrainAndNoLatency(t *testing.T) {
	row := func(sec int64, p99 int64) Sample {
		x := full("gws", sec)
		x.LatP50, x.LatP99, x.LatMax = p99/2, p99, p99
		return x
	}
	check := func(t *testing.T, db *DB) {
		t.Helper()
		got, err := db.Samples("")
		if err != nil || len(got) != 5 {
			t.Fatalf("Samples: %d rows, %v", len(got), err)
		}
		for _, x := range got {
			if want := x.Sec > 3; x.Drain != want {
				t.Errorf("second %d: Drain %v, want %v", x.Sec, x.Drain, want)
			}
			if want := x.Sec == 2 || x.Sec == 5; x.NoLat != want {
				t.Errorf("second %d: NoLat %v, want %v", x.Sec, x.NoLat, want)
			}
		}
		if got[0].LatP99 != 900 {
			t.Errorf("second 1: p99 %d µs, want 900", got[0].LatP99)
		}
		bs, err := db.SampleBuckets(2)
		if err != nil || len(bs) != 2 || bs[len(bs)-1].To != 3 {
			t.Fatalf("buckets of 2 s: %+v, %v; want seconds 1 to 3 only", bs, err)
		}
	}

	db, _ := open(t)
	if err := db.CreateRun(Run{ID: "r", Name: "r", Target: "local", Status: "running", Planned: 3 * time.Second, Started: at(0)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(&Batch{Samples: []Sample{row(1, 900), row(2, 0), row(3, 700), row(4, 800), row(5, 0)}}); err != nil {
		t.Fatal(err)
	}
	var drains, nulls int
	if err := db.db.QueryRow(`SELECT count(drain), count(*) - count(lat_p50_us) FROM samples`).Scan(&drains, &nulls); err != nil || drains != 2 || nulls != 2 {
		t.Errorf("stored: %d drain rows, %d NULL latencies, %v; want 2 and 2", drains, nulls, err)
	}
	check(t, db)
	db.Close()

	// The same rows in a database before schemaDrain.
	old := filepath.Join(t.TempDir(), "soak.db")
	raw, err := sql.Open("sqlite3", dsn(old, url.Values{"_journal_mode": {"WAL"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:drainVersion-1] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`PRAGMA user_version = ` + strconv.Itoa(drainVersion-1) + `;
		INSERT INTO runs (id, name, target, profile_text, started_ns, planned_s, status, host_json, go_version, settings_json)
			VALUES ('r', 'r', 'local', '', 1, 3, 'done', '{}', 'go', '{}')`); err != nil {
		t.Fatal(err)
	}
	for _, x := range []Sample{row(1, 900), row(2, 0), row(3, 700), row(4, 800), row(5, 0)} {
		if _, err := raw.Exec(`INSERT INTO samples (sec, lib, ts_ns, msgs, bytes, msgs_total, bytes_total, goroutines, heap_bytes, conns_up,
			reconnects_total, lost_total, dup_total, lat_p50_us, lat_p99_us, lat_max_us, rss, cpu_user_ms, cpu_sys_ms, cpu_pct100, fds, threads)
			VALUES (?, 'gws', ?, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, ?, ?, ?, 1, 1, 1, 1, 1, 1)`, x.Sec, x.TS.UnixNano(), x.LatP50, x.LatP99, x.LatMax); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	ro, err := OpenReadOnly(old)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("read-only before schemaDrain", func(t *testing.T) { check(t, ro) })
	ro.Close()
	w, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	t.Run("migrated", func(t *testing.T) { check(t, w) })
}
