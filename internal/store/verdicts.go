package store

import (
	"database/sql"
	"fmt"
)

// Verdict is one threshold checked for one library.
type Verdict struct {
	Lib, Threshold string
	Value, Limit   float64 // measured and allowed, in Unit
	Unit           string
	Broken         bool // Value > Limit
	Ord            int
}

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
			if _, err := st.Exec(v.Lib, v.Threshold, v.Value, v.Limit, v.Unit, v.Broken, v.Ord); err != nil {
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
		var v Verdict
		err := rows.Scan(&v.Lib, &v.Threshold, &v.Value, &v.Limit, &v.Unit, &v.Broken, &v.Ord)
		return v, err
	})
}
