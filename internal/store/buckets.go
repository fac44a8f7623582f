package store

import (
	"database/sql"
	"errors"
	"fmt"
)

// Bucket is the minimum and maximum of a library's per-second values over
// Width seconds, for drawing long runs: buckets are computed by SQLite, so a
// day of rows is never copied into Go. Values are NaN-free: a bucket whose
// column had no value has Has* false. Latency only counts seconds with a
// latency sample (NULL, or 0 before schemaDrain: none). The drain's
// seconds after the window are left out: buckets are what charts draw of
// the window.
type Bucket struct {
	Lib        string
	From, To   int64 // first and last second present in the bucket
	HasWorker  bool
	Msgs       [2]int64 // min, max; per second
	LatP50     [2]int64 // microseconds
	LatP99     [2]int64
	HasLat     bool
	Heap       [2]int64
	Goroutines [2]int64
	Reconnects [2]int64 // cumulative
	Wire       [2]int64 // frame bytes read per second (0 before schemaWire)
	HasProc    bool
	RSS        [2]int64
	CPUPct100  [2]int64 // CPU % × 100
	// A chat server's (a side: server run's rows): the clients it dropped
	// per second, and its write syscalls per delivery in a second that had
	// deliveries.
	HasDrops  bool
	Drops     [2]int64
	HasWrites bool
	WritesPer [2]float64
}

// SampleBuckets returns per library and per width-second bucket (seconds
// [k·width, (k+1)·width)) the minimum and maximum of the charted columns,
// ordered by library, then time.
func (s *DB) SampleBuckets(width int64) ([]Bucket, error) {
	if width < 1 {
		return nil, fmt.Errorf("read sample buckets: width %d", width)
	}
	rows, err := s.db.Query(`SELECT lib, min(sec), max(sec), count(msgs),
			min(msgs), max(msgs),
			count(CASE WHEN lat_p99_us > 0 THEN lat_p50_us END),
			min(CASE WHEN lat_p99_us > 0 THEN lat_p50_us END), max(CASE WHEN lat_p99_us > 0 THEN lat_p50_us END),
			min(CASE WHEN lat_p99_us > 0 THEN lat_p99_us END), max(CASE WHEN lat_p99_us > 0 THEN lat_p99_us END),
			min(heap_bytes), max(heap_bytes), min(goroutines), max(goroutines),
			min(reconnects_total), max(reconnects_total),
			count(rss), min(rss), max(rss), min(cpu_pct100), max(cpu_pct100),
			min(`+s.colSince(wireVersion, "wire_bytes", "NULL")+`), max(`+s.colSince(wireVersion, "wire_bytes", "NULL")+`),
			count(`+s.colSince(dropsVersion, "drops", "NULL")+`), min(`+s.colSince(dropsVersion, "drops", "NULL")+`), max(`+s.colSince(dropsVersion, "drops", "NULL")+`),
			count(`+s.writesPer()+`), min(`+s.writesPer()+`), max(`+s.writesPer()+`)
		FROM samples WHERE `+s.drainCol()+` IS NULL GROUP BY lib, sec / ?1 ORDER BY lib, sec / ?1`, width)
	if err != nil {
		return nil, fmt.Errorf("read sample buckets: %w", err)
	}
	return collect(rows, "read sample buckets", func(rows *sql.Rows) (Bucket, error) {
		var (
			b              Bucket
			nw, nl, np     int64
			m, h, g, r, rs [2]sql.NullInt64
			c, wb          [2]sql.NullInt64
		)
		var lp50, lp99, dr [2]sql.NullInt64
		var wp [2]sql.NullFloat64
		var nd, nwp int64
		err := rows.Scan(&b.Lib, &b.From, &b.To, &nw, &m[0], &m[1], &nl, &lp50[0], &lp50[1], &lp99[0], &lp99[1],
			&h[0], &h[1], &g[0], &g[1], &r[0], &r[1], &np, &rs[0], &rs[1], &c[0], &c[1], &wb[0], &wb[1],
			&nd, &dr[0], &dr[1], &nwp, &wp[0], &wp[1])
		b.HasWorker, b.HasLat, b.HasProc = nw > 0, nl > 0, np > 0
		b.HasDrops, b.HasWrites = nd > 0, nwp > 0
		for i := range 2 {
			b.Drops[i], b.WritesPer[i] = dr[i].Int64, wp[i].Float64
		}
		for i := range 2 {
			b.Msgs[i], b.LatP50[i], b.LatP99[i] = m[i].Int64, lp50[i].Int64, lp99[i].Int64
			b.Heap[i], b.Goroutines[i], b.Reconnects[i] = h[i].Int64, g[i].Int64, r[i].Int64
			b.RSS[i], b.CPUPct100[i] = rs[i].Int64, c[i].Int64
			b.Wire[i] = wb[i].Int64
		}
		return b, err
	})
}

// writesPer is a row's write syscalls per delivery (NULL without
// deliveries, and before schemaDrain).
func (s *DB) writesPer() string {
	return `(CASE WHEN msgs > 0 THEN CAST(` + s.colSince(drainVersion, "writes", "NULL") + ` AS REAL) / msgs END)`
}

// HostBuckets is SampleBuckets for the host samples: per bucket the minimum
// and maximum of steal, iowait, busy CPU % and the three load averages.
type HostBucket struct {
	From, To             int64
	Steal, IOWait, CPU   [2]float64
	Load1, Load5, Load15 [2]float64
}

// HostBuckets returns the host samples folded into width-second buckets,
// the seconds after the planned window left out (as SampleBuckets does).
func (s *DB) HostBuckets(width int64) ([]HostBucket, error) {
	if width < 1 {
		return nil, fmt.Errorf("read host buckets: width %d", width)
	}
	rows, err := s.db.Query(`SELECT min(sec), max(sec), min(steal_pct), max(steal_pct), min(iowait_pct), max(iowait_pct),
			min(cpu_pct), max(cpu_pct), min(load1), max(load1), min(load5), max(load5), min(load15), max(load15)
		FROM host_samples WHERE `+afterWindow+` IS NULL GROUP BY sec / ?1 ORDER BY sec / ?1`, width)
	if err != nil {
		return nil, fmt.Errorf("read host buckets: %w", err)
	}
	return collect(rows, "read host buckets", func(rows *sql.Rows) (HostBucket, error) {
		var h HostBucket
		err := rows.Scan(&h.From, &h.To, &h.Steal[0], &h.Steal[1], &h.IOWait[0], &h.IOWait[1], &h.CPU[0], &h.CPU[1],
			&h.Load1[0], &h.Load1[1], &h.Load5[0], &h.Load5[1], &h.Load15[0], &h.Load15[1])
		return h, err
	})
}

// LostAt returns lib's cumulative lost total at each of secs: the value of
// the latest sample at or before that second that has one (0 before any).
func (s *DB) LostAt(lib string, secs []int64) ([]int64, error) {
	st, err := s.db.Prepare(`SELECT lost_total FROM samples
		WHERE sec <= ? AND lib = ? AND lost_total IS NOT NULL ORDER BY sec DESC LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("read lost totals: %w", err)
	}
	defer st.Close()
	out := make([]int64, len(secs))
	for i, sec := range secs {
		err := st.QueryRow(sec, lib).Scan(&out[i])
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read lost totals: %s at %d: %w", lib, sec, err)
		}
	}
	return out, nil
}
