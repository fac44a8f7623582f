package store

import (
	"database/sql"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestMigrateVerdictsAndClock: a database written before skipped verdicts
// and clock samples (user_version 4) keeps its verdicts when it is opened;
// then a verdict with no value (not measured) and clock readings go in and
// come back as written.
func TestMigrateVerdictsAndClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "soak.db")
	raw, err := sql.Open("sqlite3", dsn(path, url.Values{"_journal_mode": {"WAL"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:4] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`PRAGMA user_version = 4;
		INSERT INTO verdicts (lib, threshold, value, lim, unit, broken, ord) VALUES ('gws', 'max_lost', 7, 0, 'messages', 1, 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vs, err := db.Verdicts()
	if err != nil || len(vs) != 1 || vs[0].Value != 7 || !vs[0].Broken || vs[0].Skipped() {
		t.Fatalf("verdicts after the migration: %+v, %v", vs, err)
	}
	vs = append(vs, Verdict{Lib: "gws", Threshold: "max_rss_growth", Value: math.NaN(), Limit: 50e6, Unit: "bytes", Ord: 1})
	if err := db.SaveVerdicts(vs); err != nil {
		t.Fatal(err)
	}
	got, err := db.Verdicts()
	if err != nil || len(got) != 2 || !got[1].Skipped() || got[1].Broken || got[1].Limit != 50e6 {
		t.Fatalf("a skipped verdict read back as %+v, %v", got, err)
	}

	start := time.Unix(1_800_000_000, 0)
	cs := []ClockSample{
		{Sec: 1, TS: start.Add(time.Second), Synced: true, State: 0, Status: 0x2001, EstErrorUs: 1200, MaxErrorUs: 35000},
		{Sec: 61, TS: start.Add(61 * time.Second), Synced: false, State: 5, Status: 0x40, EstErrorUs: 16_000_000, MaxErrorUs: 16_000_000},
	}
	if err := db.Write(&Batch{Clock: cs}); err != nil {
		t.Fatal(err)
	}
	back, err := db.ClockSamples()
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		back[i].TS = back[i].TS.In(cs[i].TS.Location())
	}
	if !reflect.DeepEqual(back, cs) {
		t.Errorf("clock samples %+v, want %+v", back, cs)
	}
}
