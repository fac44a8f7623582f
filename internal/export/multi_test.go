package export

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestWriteRuns: two runs in one file per table: every row of each run,
// prefixed by its run and host, the rest of the row as the run's own
// export writes it.
func TestWriteRuns(t *testing.T) {
	a, b := knownDB(t), knownDB(t)
	one := t.TempDir()
	if _, err := Write(a, one, "csv"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	counts, err := WriteRuns([]Run{{DB: a, ID: "run-a", Host: "region=fra"}, {DB: b, ID: "run-b", Host: "region=sgp"}}, dir, "csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range Tables {
		single, multi := readCSV(t, filepath.Join(one, File(table, "csv"))), readCSV(t, filepath.Join(dir, File(table, "csv")))
		if want := append([]string{"run", "host"}, Columns[table]...); !slices.Equal(multi[0], want) {
			t.Errorf("%s header %v, want %v", table, multi[0], want)
		}
		n := len(single) - 1
		if len(multi)-1 != 2*n || counts[table] != int64(2*n) {
			t.Errorf("%s: %d rows (counted %d), want twice the run's %d", table, len(multi)-1, counts[table], n)
			continue
		}
		for i, rec := range multi[1:] {
			run, host := "run-a", "region=fra"
			if i >= n {
				run, host = "run-b", "region=sgp"
			}
			if rec[0] != run || rec[1] != host || !slices.Equal(rec[2:], single[1+i%max(n, 1)]) {
				t.Errorf("%s row %d: %v, want %s %s then %v", table, i, rec, run, host, single[1+i%max(n, 1)])
				break
			}
		}
	}
}
