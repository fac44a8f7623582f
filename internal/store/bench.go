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
	// Scenario is the firehose scenario; Encoding the encoding read (""
	// when the bench had no encoding dimension: json); Compression the
	// permessage-deflate asked for (wire.Compression's name). In a row
	// written before schemaBenchDims, Compression is "" and Scenario holds
	// the whole row label (measure.ParseRow splits it).
	Scenario, Encoding, Compression string
	Path, Lib, Version              string
	Round                           int // 0: the warm-up
	Valid                           bool
	Reason, Err                     string // why not valid; the client's own error
	Msgs, Bytes                     int64
	SentMsgs, SentBytes             int64
	WallNS, UserNS, SysNS           int64
	Syscr, Rchar                    int64
	MaxRSSKiB                       int64
	Mallocs                         uint64
	Lost, Dup                       int64
	RcvBuf                          int
	Runtime                         string
	WireBytes                       int64  // WebSocket frame bytes the client read (0 before schemaWire, and for raw rows)
	Extensions                      string // the server's Sec-WebSocket-Extensions answer
	// The firehose's side of the run (ServerMeasured false: not recorded,
	// a run from before): its CPU while it sent to the run's connection,
	// and its time encoding, compressing and framing the messages (0 when
	// the batch was encoded once beforehand).
	ServerMeasured                      bool
	ServerUserNS, ServerSysNS, EncodeNS int64
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
				lost, dup, rcvbuf, runtime, wire_bytes, extensions, encoding, compression,
				server_user_ns, server_sys_ns, server_encode_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rs {
			measured := func(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: r.ServerMeasured} }
			if _, err := st.Exec(r.Scenario, r.Path, r.Lib, r.Version, r.Round, r.Valid, r.Reason, r.Err,
				r.Msgs, r.Bytes, r.SentMsgs, r.SentBytes, r.WallNS, r.UserNS, r.SysNS, r.Syscr, r.Rchar, r.MaxRSSKiB,
				int64(r.Mallocs), r.Lost, r.Dup, r.RcvBuf, r.Runtime, r.WireBytes, r.Extensions, r.Encoding, r.Compression,
				measured(r.ServerUserNS), measured(r.ServerSysNS), measured(r.EncodeNS)); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchResults returns the client bench's results in the order they ran;
// none for a database older than the bench tables. A server bench's rows in
// a database written before chat_results are not among them (ChatResults).
func (s *DB) BenchResults() ([]BenchResult, error) {
	if s.readOnly && s.version < benchVersion {
		return nil, nil
	}
	where := ""
	if s.readOnly && s.version < chatVersion {
		where = "WHERE NOT (" + squeezedChat + ")"
	}
	rows, err := s.db.Query(`SELECT scenario, path, lib, version, round, valid, reason, err,
			msgs, bytes, sent_msgs, sent_bytes, wall_ns, user_ns, sys_ns, syscr, rchar, maxrss_kib, mallocs,
			lost, dup, rcvbuf, runtime, ` + s.colSince(wireVersion, "wire_bytes", "0") + `, ` + s.colSince(wireVersion, "extensions", "''") + `,
			` + s.colSince(benchDimsVersion, "encoding", "''") + `, ` + s.colSince(benchDimsVersion, "compression", "''") + `,
			` + s.colSince(chatStrategyVersion, "server_user_ns", "NULL") + `, ` + s.colSince(chatStrategyVersion, "server_sys_ns", "NULL") + `,
			` + s.colSince(chatStrategyVersion, "server_encode_ns", "NULL") + `
		FROM bench_results ` + where + ` ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read bench results: %w", err)
	}
	return collect(rows, "bench results", func(rows *sql.Rows) (BenchResult, error) {
		var r BenchResult
		var mallocs int64
		var su, ss, se sql.NullInt64
		err := rows.Scan(&r.Scenario, &r.Path, &r.Lib, &r.Version, &r.Round, &r.Valid, &r.Reason, &r.Err,
			&r.Msgs, &r.Bytes, &r.SentMsgs, &r.SentBytes, &r.WallNS, &r.UserNS, &r.SysNS, &r.Syscr, &r.Rchar, &r.MaxRSSKiB,
			&mallocs, &r.Lost, &r.Dup, &r.RcvBuf, &r.Runtime, &r.WireBytes, &r.Extensions, &r.Encoding, &r.Compression,
			&su, &ss, &se)
		r.Mallocs = uint64(mallocs)
		r.ServerMeasured, r.ServerUserNS, r.ServerSysNS, r.EncodeNS = su.Valid, su.Int64, ss.Int64, se.Int64
		return r, err
	})
}

// ChatResult is one load run of a server bench (soak bench -side server)
// against one chat server: what the load client counted over the timed
// part, and the server's own counts over the same part.
type ChatResult struct {
	Lib              string
	Strategy         string // the server's write strategy; "" recorded before strategies
	Clients          int    // the room size N
	Round            int    // 0: the warm-up
	Valid            bool
	Reason, Err      string // why not valid; the load process's own error
	Rounds, PerRound int    // load rounds of Clients × Clients × PerRound deliveries
	Sent             int64  // messages the clients sent
	Deliveries       int64  // broadcasts the clients received
	ServerDeliveries int64  // the server's own count of broadcasts written
	WallNS           int64  // the timed part, on the load client
	ServerUserNS     int64
	ServerSysNS      int64
	ServerMaxRSSKiB  int64
	ServerWrites     int64 // write syscalls
	Drops            int64 // clients the server dropped
	ClientUserNS     int64
	ClientSysNS      int64
	ClientMaxRSSKiB  int64
	ClientReads      int64 // the load client's socket reads
	P50us, P99us     float64
	MaxUs            float64
	// Partial marks a run recorded before chat_results (a bench_results row
	// of a server bench): only Lib, Clients, Round, Valid, Reason, Err,
	// Deliveries, ServerDeliveries, WallNS and the server's CPU and peak RSS
	// were recorded; the other numbers are 0 and were not measured.
	Partial bool
}

// WriteChatResults appends a server bench's results in one transaction.
func (s *DB) WriteChatResults(rs []ChatResult) error {
	return s.tx("write chat results", func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT INTO chat_results (` + chatColumns + `, strategy)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rs {
			if r.Partial {
				return fmt.Errorf("%s N=%d round %d: a partial result is read, not written", r.Lib, r.Clients, r.Round)
			}
			if _, err := st.Exec(r.Lib, r.Clients, r.Round, r.Valid, r.Reason, r.Err, r.Rounds, r.PerRound, r.Sent,
				r.Deliveries, r.ServerDeliveries, r.WallNS, r.ServerUserNS, r.ServerSysNS, r.ServerMaxRSSKiB, r.ServerWrites,
				r.Drops, r.ClientUserNS, r.ClientSysNS, r.ClientMaxRSSKiB, r.ClientReads, r.P50us, r.P99us, r.MaxUs, r.Strategy); err != nil {
				return err
			}
		}
		return nil
	})
}

// ChatResults returns a server bench's results in the order they ran; in a
// database written before chat_results, read from the rows that bench
// wrote into bench_results (Partial).
func (s *DB) ChatResults() ([]ChatResult, error) {
	if s.readOnly && s.version < benchVersion {
		return nil, nil
	}
	query, strategy := `SELECT `+chatColumns+`, strategy FROM chat_results ORDER BY seq`, true
	switch {
	case s.readOnly && s.version < chatVersion:
		query, strategy = chatFromSqueezed, false
	case s.readOnly && s.version < chatStrategyVersion:
		query, strategy = `SELECT `+chatColumns+` FROM chat_results ORDER BY seq`, false
	}
	rows, err := s.db.Query(query)
	if err != nil {
		return nil, fmt.Errorf("read chat results: %w", err)
	}
	return collect(rows, "chat results", func(rows *sql.Rows) (ChatResult, error) {
		var r ChatResult
		var sent sql.NullInt64
		var rounds, perRound, writes, drops, cu, cs, crss, reads sql.NullInt64
		var p50, p99, pmax sql.NullFloat64
		dst := []any{&r.Lib, &r.Clients, &r.Round, &r.Valid, &r.Reason, &r.Err, &rounds, &perRound, &sent,
			&r.Deliveries, &r.ServerDeliveries, &r.WallNS, &r.ServerUserNS, &r.ServerSysNS, &r.ServerMaxRSSKiB, &writes,
			&drops, &cu, &cs, &crss, &reads, &p50, &p99, &pmax}
		if strategy {
			dst = append(dst, &r.Strategy)
		}
		err := rows.Scan(dst...)
		r.Partial = !sent.Valid
		r.Rounds, r.PerRound, r.Sent = int(rounds.Int64), int(perRound.Int64), sent.Int64
		r.ServerWrites, r.Drops, r.ClientUserNS, r.ClientSysNS = writes.Int64, drops.Int64, cu.Int64, cs.Int64
		r.ClientMaxRSSKiB, r.ClientReads, r.P50us, r.P99us, r.MaxUs = crss.Int64, reads.Int64, p50.Float64, p99.Float64, pmax.Float64
		return r, err
	})
}
