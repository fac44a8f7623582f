package store

import (
	"database/sql"
	"fmt"
	"math"
)

// schemaVerdictSkip lets a verdict's value be NULL: a measure that was not
// measured (no process sample in the window, no latency recorded, …) is a
// skipped check, not a value of 0 that passes.
const schemaVerdictSkip = `
CREATE TABLE verdicts_new (
	lib       TEXT NOT NULL,
	threshold TEXT NOT NULL,
	value     REAL,             -- measured, in unit; NULL when not measured (the check was skipped)
	lim       REAL NOT NULL,
	unit      TEXT NOT NULL,
	broken    INTEGER NOT NULL, -- 1 when value > lim
	ord       INTEGER NOT NULL,
	PRIMARY KEY (lib, threshold)
) WITHOUT ROWID;
INSERT INTO verdicts_new SELECT lib, threshold, value, lim, unit, broken, ord FROM verdicts;
DROP TABLE verdicts;
ALTER TABLE verdicts_new RENAME TO verdicts;
`

// Verdict is one threshold checked for one library.
type Verdict struct {
	Lib, Threshold string
	Value, Limit   float64 // measured (NaN: not measured, the check was skipped) and allowed, in Unit
	Unit           string
	Broken         bool // Value > Limit
	Ord            int
}

// Skipped reports whether the measure was not measured, so the threshold
// was not checked (neither passed nor broken).
func (v Verdict) Skipped() bool { return math.IsNaN(v.Value) }

// SaveVerdicts replaces all verdicts with vs.
func (s *DB) SaveVerdicts(vs []Verdict) error {
	return s.tx("save verdicts", func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DELETE FROM verdicts`); err != nil {
			return err
		}
		st, err := tx.Prepare(`INSERT INTO verdicts (lib, threshold, value, lim, unit, broken, ord) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, v := range vs {
			var value any = v.Value
			if v.Skipped() {
				value = nil
			}
			if _, err := st.Exec(v.Lib, v.Threshold, value, v.Limit, v.Unit, v.Broken, v.Ord); err != nil {
				return fmt.Errorf("%s/%s: %w", v.Lib, v.Threshold, err)
			}
		}
		return nil
	})
}

// Verdicts returns the stored verdicts ordered by Ord, then library.
func (s *DB) Verdicts() ([]Verdict, error) {
	rows, err := s.db.Query(`SELECT lib, threshold, value, lim, unit, broken, ord FROM verdicts ORDER BY ord, lib`)
	if err != nil {
		return nil, fmt.Errorf("read verdicts: %w", err)
	}
	return collect(rows, "read verdicts", func(rows *sql.Rows) (Verdict, error) {
		var (
			v     Verdict
			value sql.NullFloat64
		)
		err := rows.Scan(&v.Lib, &v.Threshold, &value, &v.Limit, &v.Unit, &v.Broken, &v.Ord)
		v.Value = math.NaN()
		if value.Valid {
			v.Value = value.Float64
		}
		return v, err
	})
}
