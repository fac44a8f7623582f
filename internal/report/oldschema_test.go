package report

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

// downgrade turns the fixture into what the soak before the clock readings
// recorded: no clock_samples table, schema version 4 (version 5 only let a
// verdict's value be NULL, which a reader does not see).
func downgrade(t *testing.T, path string, version int) {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{"DROP TABLE clock_samples", "PRAGMA user_version = " + string(rune('0'+version))} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestOlderSchemaRendersReadOnly: a run recorded by an earlier soak (schema
// version 4) is read as it is — report, table, and the clock "not recorded"
// — without migrating it; a version older than that is refused by name.
func TestOlderSchemaRendersReadOnly(t *testing.T) {
	path := fixtureDB(t)
	downgrade(t, path, 4)
	_, html := renderFile(t, path)
	if !strings.Contains(string(html), "soak-data") {
		t.Fatal("no report data in the page")
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := db.ClockSamples()
	if err != nil || len(cs) != 0 {
		t.Errorf("clock samples of a version 4 database: %v, %v; want none", cs, err)
	}
	if _, err := measure.Summarize(db); err != nil {
		t.Errorf("summarize: %v", err)
	}
	db.Close()
	var v int
	raw, _ := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err := raw.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 4 {
		t.Errorf("user_version %d, %v after reading: want 4 (not migrated)", v, err)
	}
	raw.Close()

	old := fixtureDB(t)
	downgrade(t, old, 3)
	if _, err := store.OpenReadOnly(old); err == nil || !strings.Contains(err.Error(), "schema version 3: this soak reads versions 4 to") {
		t.Errorf("version 3: %v; want it refused by name", err)
	}
}
