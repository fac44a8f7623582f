package store

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
)

// schemaRanking: a latency digest per worker process per minute, and the
// ranking computed when the run ended.
//
// latency_digests holds sampler.Digest's encoded form (2 significant
// digits, merged by adding counts): one per worker process per minute, from
// the worker's hist frame at every 60th second of the run and at its stop;
// sec is the last second it covers. A worker restarted mid-minute starts a
// digest of its own, so the rows of a library add up to everything its
// processes measured, whichever of them it was.
//
// ranking holds what internal/ranking computed from the run: per ranked
// measure, each column's level (b = ”) and each pair of columns' paired
// difference a − b with its 95 % interval, so that a report, a -baseline
// and the summary are made from it without reading the samples again.
const schemaRanking = `
CREATE TABLE latency_digests (
	sec    INTEGER NOT NULL,
	lib    TEXT NOT NULL CHECK (lib <> ''),
	digest BLOB NOT NULL,
	PRIMARY KEY (sec, lib)
) WITHOUT ROWID;

CREATE TABLE ranking (
	stat TEXT NOT NULL,    -- the ranked measure's catalogue id
	a    TEXT NOT NULL,    -- a column (a library)
	b    TEXT NOT NULL,    -- the column a is compared with; '' for a's own level
	n    INTEGER NOT NULL, -- batches, or faults, the figures rest on
	est  REAL,             -- a − b, or a's level; NULL: not measured
	lo   REAL,             -- the 95 % interval of est
	hi   REAL,
	p    REAL,             -- two-sided p-value of "no difference"
	sd   REAL,             -- the spread of the paired differences
	span REAL,             -- seconds per batch; 0 for pairs by fault
	note TEXT NOT NULL,    -- why the difference cannot be called; '' when it can
	PRIMARY KEY (stat, a, b)
) WITHOUT ROWID;
`

// rankingVersion is the first version with latency_digests and ranking
// (by position).
var rankingVersion = slices.Index(migrations, schemaRanking) + 1

// LatencyDigest is one worker process's latency over up to a minute, in
// sampler.Digest's encoded form; Sec is the last second it covers.
type LatencyDigest struct {
	Lib    string
	Sec    int64
	Digest []byte
}

// writeDigests stores the digests of a batch (a digest written again for
// the same library and second replaces the first).
func writeDigests(tx *sql.Tx, ds []LatencyDigest) error {
	for _, d := range ds {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO latency_digests (sec, lib, digest) VALUES (?, ?, ?)`, d.Sec, d.Lib, d.Digest); err != nil {
			return fmt.Errorf("latency digest %s/%d: %w", d.Lib, d.Sec, err)
		}
	}
	return nil
}

// EachLatencyDigest calls fn for every stored digest, ordered by second,
// then library (the key's order); none in a database before schemaRanking.
func (s *DB) EachLatencyDigest(fn func(*LatencyDigest) error) error {
	if s.readOnly && s.version < rankingVersion {
		return nil
	}
	rows, err := s.db.Query(`SELECT lib, sec, digest FROM latency_digests ORDER BY sec, lib`)
	if err != nil {
		return fmt.Errorf("read latency digests: %w", err)
	}
	return each(rows, "read latency digests", func(rows *sql.Rows, d *LatencyDigest) error {
		return rows.Scan(&d.Lib, &d.Sec, &d.Digest)
	}, fn)
}

// RankRow is one row of the ranking: a column's level of a ranked measure
// (B ""), or the paired difference A − B with its interval. NaN is a
// figure not measured.
type RankRow struct {
	Stat, A, B  string
	N           int
	Est, Lo, Hi float64
	P, SD, Span float64
	Note        string
}

// SaveRanking replaces the stored ranking with rs.
func (s *DB) SaveRanking(rs []RankRow) error {
	return s.tx("save ranking", func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DELETE FROM ranking`); err != nil {
			return err
		}
		st, err := tx.Prepare(`INSERT INTO ranking (stat, a, b, n, est, lo, hi, p, sd, span, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rs {
			if _, err := st.Exec(r.Stat, r.A, r.B, r.N, nullNaN(r.Est), nullNaN(r.Lo), nullNaN(r.Hi), nullNaN(r.P),
				nullNaN(r.SD), nullNaN(r.Span), r.Note); err != nil {
				return fmt.Errorf("%s %s/%s: %w", r.Stat, r.A, r.B, err)
			}
		}
		return nil
	})
}

// Ranking returns the stored ranking ordered by measure, then columns; none
// for a run that stored none (still going, or recorded before schemaRanking).
func (s *DB) Ranking() ([]RankRow, error) {
	if s.readOnly && s.version < rankingVersion {
		return nil, nil
	}
	rows, err := s.db.Query(`SELECT stat, a, b, n, est, lo, hi, p, sd, span, note FROM ranking ORDER BY stat, a, b`)
	if err != nil {
		return nil, fmt.Errorf("read ranking: %w", err)
	}
	return collect(rows, "read ranking", func(rows *sql.Rows) (RankRow, error) {
		var (
			r                        RankRow
			est, lo, hi, p, sd, span sql.NullFloat64
		)
		err := rows.Scan(&r.Stat, &r.A, &r.B, &r.N, &est, &lo, &hi, &p, &sd, &span, &r.Note)
		r.Est, r.Lo, r.Hi, r.P, r.SD, r.Span = nanNull(est), nanNull(lo), nanNull(hi), nanNull(p), nanNull(sd), nanNull(span)
		return r, err
	})
}

// nullNaN stores NaN (not measured) as NULL.
func nullNaN(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return v
}

func nanNull(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}
