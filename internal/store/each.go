package store

import (
	"database/sql"
	"fmt"
	"time"
)

// The Each* readers stream a table row by row in key order, so that a day's
// database is read without holding it in memory. fn's argument is valid only
// during the call; an error from fn stops the scan and is returned as is.

// each scans every row with scan, hands it to fn, and closes rows.
func each[T any](rows *sql.Rows, what string, scan func(*sql.Rows, *T) error, fn func(*T) error) error {
	defer rows.Close()
	var v T
	for rows.Next() {
		if err := scan(rows, &v); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := fn(&v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// EachSample calls fn for every sample, ordered by sec, then lib.
func (s *DB) EachSample(fn func(*Sample) error) error {
	rows, err := s.db.Query(`SELECT ` + s.sampleCols() + ` FROM samples ORDER BY sec, lib`)
	if err != nil {
		return fmt.Errorf("read samples: %w", err)
	}
	return each(rows, "read samples", func(rows *sql.Rows, x *Sample) (err error) {
		*x, err = scanSample(rows)
		return err
	}, fn)
}

// EachStreamSample calls fn for every stored stream sample, ordered by sec,
// then stream id (the order in which subscriptions were first recorded):
// the table's key order, so nothing is sorted.
func (s *DB) EachStreamSample(fn func(*StreamSample) error) error {
	rows, err := s.db.Query(`SELECT st.lib, st.slot, st.grp, st.stream, ss.sec, ss.msgs_total,
			ss.bytes_total, ss.lost_total, ss.dup_total, ss.ooo_total, ss.max_silence_ms, ss.last_seq,
			ss.stalls_total, ss.stalled, ` + s.streamSignalCols() + `
		FROM stream_samples ss JOIN streams st ON st.id = ss.sid
		ORDER BY ss.sec, ss.sid`)
	if err != nil {
		return fmt.Errorf("read stream samples: %w", err)
	}
	return each(rows, "read stream samples", func(rows *sql.Rows, x *StreamSample) error {
		return rows.Scan(&x.Lib, &x.Slot, &x.Group, &x.Stream, &x.Sec, &x.MsgsTotal, &x.BytesTotal,
			&x.LostTotal, &x.DupTotal, &x.OOOTotal, &x.MaxSilenceMs, &x.LastSeq, &x.StallsTotal, &x.Stalled,
			&x.RegressTotal, &x.LostAcrossTotal)
	}, fn)
}

// EachEvent calls fn for every event in time order.
func (s *DB) EachEvent(fn func(*Event) error) error {
	rows, err := s.db.Query(`SELECT lib, ts_ns, sec, kind, slot, grp, stream, code, detail, dur_ms, ` + s.col("fault", "''") + `
		FROM events ORDER BY ts_ns, id`)
	if err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	return each(rows, "read events", func(rows *sql.Rows, e *Event) error {
		var ts int64
		err := rows.Scan(&e.Lib, &ts, &e.Sec, &e.Kind, &e.Slot, &e.Group, &e.Stream, &e.Code, &e.Detail, &e.DurMs, &e.Fault)
		e.TS = time.Unix(0, ts)
		e.Fault = s.faultOf(e)
		return err
	}, fn)
}

// EachHostSample calls fn for every host sample, ordered by sec.
func (s *DB) EachHostSample(fn func(*HostSample) error) error {
	rows, err := s.db.Query(`SELECT sec, ts_ns, load1, load5, load15, cpu_pct, steal_pct, iowait_pct,
		mem_used, mem_avail FROM host_samples ORDER BY sec`)
	if err != nil {
		return fmt.Errorf("read host samples: %w", err)
	}
	return each(rows, "read host samples", func(rows *sql.Rows, h *HostSample) error {
		var ts int64
		err := rows.Scan(&h.Sec, &ts, &h.Load1, &h.Load5, &h.Load15, &h.CPUPct, &h.StealPct,
			&h.IOWaitPct, &h.MemUsed, &h.MemAvail)
		h.TS = time.Unix(0, ts)
		return err
	}, fn)
}

// Count returns the number of rows of a table of this schema.
func (s *DB) Count(table string) (int64, error) {
	switch table {
	case "samples", "stream_samples", "events", "host_samples", "summary", "workers", "streams", "server_counts", "verdicts":
	case "clock_samples":
		if s.readOnly && s.version < clockVersion {
			return 0, nil // recorded by a soak that did not read the clock
		}
	default:
		return 0, fmt.Errorf("count: unknown table %q", table)
	}
	var n int64
	if err := s.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}
