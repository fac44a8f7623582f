package store

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSummaryID: a summary row keeps its measure id; a database from before
// schemaSummaryID (no id column) opened read-only reads its rows with id "",
// and a writer migrates it to an id column of "".
func TestSummaryID(t *testing.T) {
	db, _ := open(t)
	rows := []SummaryRow{{ID: "lost", Metric: "Lost / duplicate (sequence ids)", Lib: "gws", Value: "7 / 1", Num: 7}}
	if err := db.SaveSummary(rows); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Summary(); err != nil || len(got) != 1 || got[0] != rows[0] {
		t.Errorf("Summary() = %+v, %v; want %+v", got, err, rows)
	}

	path := filepath.Join(t.TempDir(), "soak.db")
	raw, err := sql.Open("sqlite3", dsn(path, url.Values{"_journal_mode": {"WAL"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:summaryIDVersion-1] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`PRAGMA user_version = ` + strconv.Itoa(summaryIDVersion-1) + `;
		INSERT INTO summary (metric, lib, value, num, ord) VALUES ('Faults seen', 'gws', '2', 2, 5)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	want := SummaryRow{Metric: "Faults seen", Lib: "gws", Value: "2", Num: 2, Ord: 5}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ro.Summary(); err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("read-only Summary() = %+v, %v; want %+v", got, err, want)
	}
	ro.Close()
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, err := w.Summary(); err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("migrated Summary() = %+v, %v; want %+v", got, err, want)
	}
}
