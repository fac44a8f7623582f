package store

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBenchRoundTrip: a bench database says it is one and gives its results
// back as written, in order; a database of the version before the bench
// tables reads as a soak without results.
func TestBenchRoundTrip(t *testing.T) {
	db, path := open(t)
	if err := db.CreateRun(Run{ID: "bench-x", Name: "bench", Status: "done", Settings: map[string]string{"gws": "m@v1"}}); err != nil {
		t.Fatal(err)
	}
	if k, err := db.Kind(); err != nil || k != KindSoak {
		t.Errorf("kind before SetKind %q, %v; want soak", k, err)
	}
	if err := db.SetKind(KindBench); err != nil {
		t.Fatal(err)
	}
	want := []BenchResult{
		{Scenario: "aggTrade", Path: "full", Lib: "gws", Version: "v1", Round: 0, Valid: true, Msgs: 300, Bytes: 60000,
			SentMsgs: 300, SentBytes: 60000, WallNS: 1e6, UserNS: 5e5, SysNS: 2e5, Syscr: 10, Rchar: 61000, MaxRSSKiB: 9000,
			Mallocs: 1 << 40, RcvBuf: 131072, Runtime: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off"},
		{Scenario: "aggTrade", Path: "bare", Lib: "coder", Round: 1, Reason: "received 1 messages", Err: "boom", Lost: 2, Dup: 1},
	}
	if err := db.WriteBenchResults(want); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if k, err := ro.Kind(); err != nil || k != KindBench {
		t.Errorf("kind %q, %v; want bench", k, err)
	}
	got, err := ro.BenchResults()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("bench results %+v, %v\nwant %+v", got, err, want)
	}

	// A database of the version before schemaBench.
	old := filepath.Join(t.TempDir(), "soak.db")
	raw, err := sql.Open("sqlite3", dsn(old, url.Values{"_journal_mode": {"DELETE"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:benchVersion-1] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf(`PRAGMA user_version = %d;
		INSERT INTO runs (id, name, target, profile_text, planned_s, status, host_json, go_version, settings_json)
		VALUES ('r', 'n', 't', '', 1, 'done', '{}', 'go', '{}')`, benchVersion-1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	ro2, err := OpenReadOnly(old)
	if err != nil {
		t.Fatal(err)
	}
	defer ro2.Close()
	if k, err := ro2.Kind(); err != nil || k != KindSoak {
		t.Errorf("old database: kind %q, %v; want soak", k, err)
	}
	if rs, err := ro2.BenchResults(); err != nil || rs != nil {
		t.Errorf("old database: bench results %v, %v; want none", rs, err)
	}
	// Migrated, it is still a soak.
	w, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if k, err := w.Kind(); err != nil || k != KindSoak {
		t.Errorf("migrated old database: kind %q, %v; want soak", k, err)
	}
}
