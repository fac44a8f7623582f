package store

import (
	"database/sql"
	"fmt"
)

// Kinds of run a database holds (Run.Kind).
const (
	KindSoak  = "soak"
	KindBench = "bench"
)

// BenchResult is one client run of soak bench.
type BenchResult struct {
	Scenario, Path, Lib, Version string
	Round                        int // 0: the warm-up
	Valid                        bool
	Reason, Err                  string // why not valid; the client's own error
	Msgs, Bytes                  int64
	SentMsgs, SentBytes          int64
	WallNS, UserNS, SysNS        int64
	Syscr, Rchar                 int64
	MaxRSSKiB                    int64
	Mallocs                      uint64
	Lost, Dup                    int64
	RcvBuf                       int
	Runtime                      string
	WireBytes                    int64  // WebSocket frame bytes the client read (0 before schemaWire, and for raw rows)
	Extensions                   string // the server's Sec-WebSocket-Extensions answer
}

// SetKind records what the database holds (KindSoak or KindBench).
func (s *DB) SetKind(kind string) error {
	res, err := s.db.Exec(`UPDATE runs SET kind = ?`, kind)
	if err != nil {
		return fmt.Errorf("set run kind: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("set run kind: %d runs recorded, want 1", n)
	}
	return nil
}

// Kind says what the database holds: KindBench, or KindSoak (every database
// written before the bench was recorded).
func (s *DB) Kind() (string, error) {
	if s.readOnly && s.version < benchVersion {
		return KindSoak, nil
	}
	var k string
	err := s.db.QueryRow(`SELECT kind FROM runs`).Scan(&k)
	if err == sql.ErrNoRows {
		return KindSoak, nil
	}
	if err != nil {
		return "", fmt.Errorf("read run kind: %w", err)
	}
	return k, nil
}

// WriteBenchResults appends the bench's results in one transaction.
func (s *DB) WriteBenchResults(rs []BenchResult) error {
	return s.tx("write bench results", func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT INTO bench_results (scenario, path, lib, version, round, valid, reason, err,
				msgs, bytes, sent_msgs, sent_bytes, wall_ns, user_ns, sys_ns, syscr, rchar, maxrss_kib, mallocs,
				lost, dup, rcvbuf, runtime, wire_bytes, extensions)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rs {
			if _, err := st.Exec(r.Scenario, r.Path, r.Lib, r.Version, r.Round, r.Valid, r.Reason, r.Err,
				r.Msgs, r.Bytes, r.SentMsgs, r.SentBytes, r.WallNS, r.UserNS, r.SysNS, r.Syscr, r.Rchar, r.MaxRSSKiB,
				int64(r.Mallocs), r.Lost, r.Dup, r.RcvBuf, r.Runtime, r.WireBytes, r.Extensions); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchResults returns the bench's results in the order they ran; none for a
// database older than the bench tables.
func (s *DB) BenchResults() ([]BenchResult, error) {
	if s.readOnly && s.version < benchVersion {
		return nil, nil
	}
	rows, err := s.db.Query(`SELECT scenario, path, lib, version, round, valid, reason, err,
			msgs, bytes, sent_msgs, sent_bytes, wall_ns, user_ns, sys_ns, syscr, rchar, maxrss_kib, mallocs,
			lost, dup, rcvbuf, runtime, ` + s.colSince(wireVersion, "wire_bytes", "0") + `, ` + s.colSince(wireVersion, "extensions", "''") + `
		FROM bench_results ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read bench results: %w", err)
	}
	return collect(rows, "bench results", func(rows *sql.Rows) (BenchResult, error) {
		var r BenchResult
		var mallocs int64
		err := rows.Scan(&r.Scenario, &r.Path, &r.Lib, &r.Version, &r.Round, &r.Valid, &r.Reason, &r.Err,
			&r.Msgs, &r.Bytes, &r.SentMsgs, &r.SentBytes, &r.WallNS, &r.UserNS, &r.SysNS, &r.Syscr, &r.Rchar, &r.MaxRSSKiB,
			&mallocs, &r.Lost, &r.Dup, &r.RcvBuf, &r.Runtime, &r.WireBytes, &r.Extensions)
		r.Mallocs = uint64(mallocs)
		return r, err
	})
}
