package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// Sample is one worker's second. The worker half comes from the worker's
// per-second frame, the process half from sampling its pid; a missing half
// is stored as NULL and read back with its Has flag false.
type Sample struct {
	Lib string
	Sec int64 // seconds since the run started
	TS  time.Time

	HasWorker                            bool
	Msgs, Bytes, MsgsTotal, BytesTotal   int64
	Goroutines                           int
	HeapBytes                            int64
	ConnsUp                              int
	ReconnectsTotal, LostTotal, DupTotal int64
	LatP50, LatP99, LatMax               int64 // microseconds
	// NoLat says the second had no latency sample (no message of it
	// carried an event time): its latency is stored NULL, not 0 (a p99 of
	// 0 is stored so too: a recorded latency is at least 1 µs), and read
	// back so (a database before schemaDrain stored 0: read as none too).
	NoLat bool
	// WireBytes and WireBytesTotal are the frame bytes read (this second, so
	// far), compressed as they came; 0 in a database before schemaWire.
	WireBytes, WireBytesTotal int64
	// Drops is the slow clients a chat server dropped in the second (a
	// side: server run's row); HasDrops false (NULL) in a client soak's row
	// and in a database before schemaDrops.
	HasDrops bool
	Drops    int64
	// Writes is the chat server's write syscalls in the second, with Drops
	// (NULL where HasDrops is false, and before schemaDrain).
	Writes int64
	// Drain marks a second after the planned window (the workers read on
	// while nothing is sent): stored, never a window second (schemaDrain;
	// the same rule on the planned window before it).
	Drain bool
	// DroppedTotal is the events the worker dropped so far (its channel
	// full), over its processes: stored only when not 0 (NULL otherwise, and
	// before schemaResume), for a resume to continue the count.
	DroppedTotal int64

	HasProc                 bool
	RSS                     int64
	CPUUser, CPUSys, CPUPct float64 // cumulative seconds; % of one core
	FDs, Threads            int
}

// StreamSample is one subscription's cumulative counters at Sec.
type StreamSample struct {
	Lib                                                                         string
	Slot                                                                        int
	Group, Stream                                                               string
	Sec                                                                         int64
	MsgsTotal, BytesTotal, LostTotal, DupTotal, OOOTotal, MaxSilenceMs, LastSeq int64
	StallsTotal                                                                 int64 // stall events so far
	Stalled                                                                     bool  // silent past its threshold at Sec
	RegressTotal                                                                int64 // sequence regressions so far (0 before schemaSignals)
	// LostAcrossTotal is the part of LostTotal found at a subscription's
	// first message after a reconnect: lost across the outage. The rest was
	// lost while a connection was up. 0 before schemaSignals.
	LostAcrossTotal int64
}

// Event is something that happened: dial, connected, first_data,
// disconnected, stall, gap, unrepairable, worker_exit, fault … Lib is "" for
// run-wide events.
type Event struct {
	Lib           string
	TS            time.Time
	Sec           float64 // seconds since the run started
	Kind          wire.EventKind
	Slot          int
	Group, Stream string
	Code          int
	Detail        string
	DurMs         float64
	// Fault is the kind of a "fault" event's fault, and of the clients a
	// server-side soak's "dropped" event counts; "" for other events.
	Fault wire.FaultKind
}

// IsError reports whether e counts as an error in the end table and the
// max_errors threshold: a failed dial, a worker that exited, or a connection
// lost other than by a server's normal or going-away close (1000, 1001: those
// are reconnects, not errors).
func (e *Event) IsError() bool {
	switch wire.EventKind(e.Kind) {
	case wire.EventDialError, wire.EventWorkerExit:
		return true
	case wire.EventDisconnected:
		return e.Code != 1000 && e.Code != 1001
	}
	return false
}

// HostSample is the machine's second.
type HostSample struct {
	Sec                                               int64
	TS                                                time.Time
	Load1, Load5, Load15, CPUPct, StealPct, IOWaitPct float64
	MemUsed, MemAvail                                 int64
}

// Batch is what the controller writes each second.
type Batch struct {
	Samples       []Sample
	StreamSamples []StreamSample
	Events        []Event
	Host          []HostSample
	Clock         []ClockSample   // the clock's sync state, once a minute
	Digests       []LatencyDigest // the workers' latency, once a minute per worker
	// What changed of the accounts a resume continues (schemaResume): a
	// slot's dial account, a subscription's lost ranges, each replacing
	// what was recorded of the same slot or subscription.
	Dials []SlotDials
	Gaps  []SubGaps
}

// Empty says whether b holds nothing to write.
func (b *Batch) Empty() bool {
	return len(b.Samples)+len(b.StreamSamples)+len(b.Events)+len(b.Host)+len(b.Clock)+len(b.Dials)+len(b.Gaps)+len(b.Digests) == 0
}

// nullable returns v, or NULL when the half it belongs to is missing.
func nullable(has bool, v any) any {
	if !has {
		return nil
	}
	return v
}

// Write stores b in one transaction: all of it or, on error, none of it.
// A sample for a (lib, sec) already stored is merged: the halves b carries
// replace the stored ones, the missing halves are kept.
func (s *DB) Write(b *Batch) error {
	if s.readOnly {
		return errors.New("write batch: read-only database")
	}
	var fresh []streamKey // stream ids created by this transaction
	err := s.tx("write batch", func(tx *sql.Tx) error {
		st := tx.Stmt(s.insSample)
		for _, x := range b.Samples {
			w, p := x.HasWorker, x.HasProc
			// No latency sample in the second: NULL, not a latency of 0 (a
			// recorded one is at least 1 µs). Nor in a second that counted
			// no message: the worker publishes a read's count and its
			// latencies one after the other, so a second's frame may hold
			// the latencies of messages the previous second counted; they
			// are that second's, not this one's (the minute's digest keeps
			// them).
			lat := w && !x.NoLat && x.LatP99 > 0 && x.Msgs > 0
			_, err := st.Exec(x.Sec, x.Lib, x.TS.UnixNano(),
				nullable(w, x.Msgs), nullable(w, x.Bytes), nullable(w, x.MsgsTotal), nullable(w, x.BytesTotal),
				nullable(w, x.Goroutines), nullable(w, x.HeapBytes), nullable(w, x.ConnsUp),
				nullable(w, x.ReconnectsTotal), nullable(w, x.LostTotal), nullable(w, x.DupTotal),
				nullable(lat, x.LatP50), nullable(lat, x.LatP99), nullable(lat, x.LatMax),
				nullable(p, x.RSS), nullable(p, toMilli(x.CPUUser)), nullable(p, toMilli(x.CPUSys)),
				nullable(p, int64(math.Round(x.CPUPct*100))), nullable(p, x.FDs), nullable(p, x.Threads),
				nullable(w, x.WireBytes), nullable(w, x.WireBytesTotal), nullable(x.HasDrops, x.Drops), nullable(w && x.DroppedTotal != 0, x.DroppedTotal),
				nullable(x.HasDrops, x.Writes), x.Sec)
			if err != nil {
				return fmt.Errorf("sample %s/%d: %w", x.Lib, x.Sec, err)
			}
		}
		if len(b.StreamSamples) > 0 {
			if err := s.writeStreamSamples(tx, b.StreamSamples, &fresh); err != nil {
				return err
			}
		}
		st = tx.Stmt(s.insEvent)
		for _, e := range b.Events {
			if _, err := st.Exec(e.Lib, e.TS.UnixNano(), e.Sec, e.Kind, e.Slot, e.Group, e.Stream,
				e.Code, e.Detail, e.DurMs, string(e.Fault)); err != nil {
				return fmt.Errorf("event %s %s: %w", e.Lib, e.Kind, err)
			}
		}
		st = tx.Stmt(s.insHost)
		for _, h := range b.Host {
			if _, err := st.Exec(h.Sec, h.TS.UnixNano(), h.Load1, h.Load5, h.Load15,
				h.CPUPct, h.StealPct, h.IOWaitPct, h.MemUsed, h.MemAvail); err != nil {
				return fmt.Errorf("host sample %d: %w", h.Sec, err)
			}
		}
		if err := writeDigests(tx, b.Digests); err != nil {
			return err
		}
		if err := writeClock(tx, b.Clock); err != nil {
			return err
		}
		return writeResume(tx, b.Dials, b.Gaps)
	})
	if err != nil {
		// Ids handed out inside the rolled-back transaction no longer exist.
		for _, k := range fresh {
			delete(s.streamIDs, k)
		}
	}
	return err
}

func toMilli(sec float64) int64 { return int64(math.Round(sec * 1000)) }

// writeStreamSamples inserts the rows, creating stream ids on first sight.
func (s *DB) writeStreamSamples(tx *sql.Tx, ss []StreamSample, fresh *[]streamKey) error {
	ins, sel, upd, put := tx.Stmt(s.insStream), tx.Stmt(s.selStream), tx.Stmt(s.updStream), tx.Stmt(s.insStreamSample)
	last := make(map[int64]int64)
	for _, x := range ss {
		k := streamKey{lib: x.Lib, grp: x.Group, stream: x.Stream, slot: x.Slot}
		id, ok := s.streamIDs[k]
		if !ok {
			if _, err := ins.Exec(x.Lib, x.Slot, x.Group, x.Stream); err != nil {
				return fmt.Errorf("stream %s/%s: %w", x.Lib, x.Stream, err)
			}
			if err := sel.QueryRow(x.Lib, x.Group, x.Slot, x.Stream).Scan(&id); err != nil {
				return fmt.Errorf("stream %s/%s: %w", x.Lib, x.Stream, err)
			}
			s.streamIDs[k] = id
			*fresh = append(*fresh, k)
		}
		if _, err := put.Exec(x.Sec, id, x.MsgsTotal, x.BytesTotal, x.LostTotal, x.DupTotal,
			x.OOOTotal, x.MaxSilenceMs, x.LastSeq, x.StallsTotal, x.Stalled, x.RegressTotal, x.LostAcrossTotal); err != nil {
			return fmt.Errorf("stream sample %s/%s/%d: %w", x.Lib, x.Stream, x.Sec, err)
		}
		if sec, seen := last[id]; !seen || x.Sec > sec {
			last[id] = x.Sec
		}
	}
	// One UPDATE per distinct second (usually one per batch), not per stream.
	bySec := map[int64][]int64{}
	for id, sec := range last {
		bySec[sec] = append(bySec[sec], id)
	}
	for sec, ids := range bySec {
		list, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		if _, err := upd.Exec(sec, string(list)); err != nil {
			return fmt.Errorf("streams at %d: %w", sec, err)
		}
	}
	return nil
}

// sampleCols are the columns scanSample reads (the wire bytes as NULL in a
// database before schemaWire, the drops before schemaDrops).
func (s *DB) sampleCols() string {
	return `sec, lib, ts_ns, msgs, bytes, msgs_total, bytes_total, goroutines, heap_bytes, conns_up,
	reconnects_total, lost_total, dup_total, lat_p50_us, lat_p99_us, lat_max_us,
	rss, cpu_user_ms, cpu_sys_ms, cpu_pct100, fds, threads, ` +
		s.colSince(wireVersion, "wire_bytes", "NULL") + `, ` + s.colSince(wireVersion, "wire_bytes_total", "NULL") + `, ` + s.colSince(dropsVersion, "drops", "NULL") + `, ` +
		s.colSince(resumeVersion, "dropped_total", "NULL") + `, ` + s.colSince(drainVersion, "writes", "NULL") + `, ` + s.drainCol()
}

// Samples returns the samples of lib ("" = every library) ordered by sec, then lib.
func (s *DB) Samples(lib string) ([]Sample, error) {
	rows, err := s.db.Query(`SELECT `+s.sampleCols()+` FROM samples
		WHERE ?1 = '' OR lib = ?1 ORDER BY sec, lib`, lib)
	if err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	return collect(rows, "read samples", scanSample)
}

func scanSample(rows *sql.Rows) (Sample, error) {
	var (
		x                                            Sample
		ts                                           int64
		msgs, bytes, msgsT, bytesT, gor, heap, conns sql.NullInt64
		recon, lost, dup, p50, p99, pmax             sql.NullInt64
		rss, cpuU, cpuS, cpuP, fds, threads          sql.NullInt64
		wireN, wireT, drops, dropped, writes, drain  sql.NullInt64
	)
	err := rows.Scan(&x.Sec, &x.Lib, &ts, &msgs, &bytes, &msgsT, &bytesT, &gor, &heap, &conns,
		&recon, &lost, &dup, &p50, &p99, &pmax, &rss, &cpuU, &cpuS, &cpuP, &fds, &threads, &wireN, &wireT, &drops, &dropped,
		&writes, &drain)
	x.WireBytes, x.WireBytesTotal, x.DroppedTotal = wireN.Int64, wireT.Int64, dropped.Int64
	x.HasDrops, x.Drops, x.Writes = drops.Valid, drops.Int64, writes.Int64
	x.Drain = drain.Int64 == 1
	x.TS = time.Unix(0, ts)
	if x.HasWorker = msgs.Valid; x.HasWorker {
		x.Msgs, x.Bytes, x.MsgsTotal, x.BytesTotal = msgs.Int64, bytes.Int64, msgsT.Int64, bytesT.Int64
		x.Goroutines, x.HeapBytes, x.ConnsUp = int(gor.Int64), heap.Int64, int(conns.Int64)
		x.ReconnectsTotal, x.LostTotal, x.DupTotal = recon.Int64, lost.Int64, dup.Int64
		x.LatP50, x.LatP99, x.LatMax = p50.Int64, p99.Int64, pmax.Int64
	}
	// NULL, or 0 as stored before schemaDrain: a recorded latency is at least
	// 1 µs. A row without the worker's half (the process sampled, the worker
	// sent no frame of that second: a drain second after it exited) has none.
	x.NoLat = !p99.Valid || p99.Int64 == 0
	if x.HasProc = rss.Valid; x.HasProc {
		x.RSS = rss.Int64
		x.CPUUser, x.CPUSys = float64(cpuU.Int64)/1000, float64(cpuS.Int64)/1000
		x.CPUPct = float64(cpuP.Int64) / 100
		x.FDs, x.Threads = int(fds.Int64), int(threads.Int64)
	}
	return x, err
}

// LatestStreamSamples returns the last stored row of every subscription
// (lib, group, slot, stream), ordered by lib, group, slot, stream.
func (s *DB) LatestStreamSamples() ([]StreamSample, error) {
	rows, err := s.db.Query(`SELECT st.lib, st.slot, st.grp, st.stream, ss.sec, ss.msgs_total,
			ss.bytes_total, ss.lost_total, ss.dup_total, ss.ooo_total, ss.max_silence_ms, ss.last_seq,
			ss.stalls_total, ss.stalled, ` + s.streamSignalCols() + `
		FROM streams st JOIN stream_samples ss ON ss.sec = st.last_sec AND ss.sid = st.id
		ORDER BY st.lib, st.grp, st.slot, st.stream`)
	if err != nil {
		return nil, fmt.Errorf("read stream samples: %w", err)
	}
	return collect(rows, "read stream samples", func(rows *sql.Rows) (StreamSample, error) {
		var x StreamSample
		err := rows.Scan(&x.Lib, &x.Slot, &x.Group, &x.Stream, &x.Sec, &x.MsgsTotal, &x.BytesTotal,
			&x.LostTotal, &x.DupTotal, &x.OOOTotal, &x.MaxSilenceMs, &x.LastSeq, &x.StallsTotal, &x.Stalled,
			&x.RegressTotal, &x.LostAcrossTotal)
		return x, err
	})
}

// Events returns the events of lib ("" = all, run-wide included) in time order.
func (s *DB) Events(lib string) ([]Event, error) {
	rows, err := s.db.Query(`SELECT lib, ts_ns, sec, kind, slot, grp, stream, code, detail, dur_ms, `+s.col("fault", "''")+`
		FROM events WHERE ?1 = '' OR lib = ?1 ORDER BY ts_ns, id`, lib)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return collect(rows, "read events", func(rows *sql.Rows) (Event, error) {
		var (
			e  Event
			ts int64
		)
		err := rows.Scan(&e.Lib, &ts, &e.Sec, &e.Kind, &e.Slot, &e.Group, &e.Stream, &e.Code, &e.Detail, &e.DurMs, &e.Fault)
		e.TS = time.Unix(0, ts)
		e.Fault = s.faultOf(&e)
		return e, err
	})
}

// HostSamples returns the host samples ordered by sec.
func (s *DB) HostSamples() ([]HostSample, error) {
	rows, err := s.db.Query(`SELECT sec, ts_ns, load1, load5, load15, cpu_pct, steal_pct, iowait_pct,
		mem_used, mem_avail FROM host_samples ORDER BY sec`)
	if err != nil {
		return nil, fmt.Errorf("read host samples: %w", err)
	}
	return collect(rows, "read host samples", func(rows *sql.Rows) (HostSample, error) {
		var (
			h  HostSample
			ts int64
		)
		err := rows.Scan(&h.Sec, &ts, &h.Load1, &h.Load5, &h.Load15, &h.CPUPct, &h.StealPct,
			&h.IOWaitPct, &h.MemUsed, &h.MemAvail)
		h.TS = time.Unix(0, ts)
		return h, err
	})
}

// ServerCount is what the replay server sent on one stream.
type ServerCount struct {
	Tag, Stream                    string
	Sent, Bytes, FirstSeq, LastSeq int64
}

// SaveServerCounts stores the counts, replacing rows with the same tag and stream.
func (s *DB) SaveServerCounts(cs []ServerCount) error {
	return s.tx("save server counts", func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT OR REPLACE INTO server_counts (tag, stream, sent, bytes, first_seq, last_seq)
			VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, c := range cs {
			if _, err := st.Exec(c.Tag, c.Stream, c.Sent, c.Bytes, c.FirstSeq, c.LastSeq); err != nil {
				return err
			}
		}
		return nil
	})
}

// ServerCounts returns the server counts ordered by tag and stream.
func (s *DB) ServerCounts() ([]ServerCount, error) {
	rows, err := s.db.Query(`SELECT tag, stream, sent, bytes, first_seq, last_seq FROM server_counts ORDER BY tag, stream`)
	if err != nil {
		return nil, fmt.Errorf("read server counts: %w", err)
	}
	return collect(rows, "read server counts", func(rows *sql.Rows) (ServerCount, error) {
		var c ServerCount
		err := rows.Scan(&c.Tag, &c.Stream, &c.Sent, &c.Bytes, &c.FirstSeq, &c.LastSeq)
		return c, err
	})
}

// ServerWire is what the replay server wrote on one connection.
type ServerWire struct {
	Tag        string
	WireBytes  int64 // frame bytes written after the upgrade
	Readable   int64 // of those, what the client could read (all, or before its close frame came)
	Extensions string
}

// SaveServerWire stores the rows, replacing those with the same tag.
func (s *DB) SaveServerWire(ws []ServerWire) error {
	return s.tx("save server wire", func(tx *sql.Tx) error {
		for _, w := range ws {
			if _, err := tx.Exec(`INSERT OR REPLACE INTO server_wire (tag, wire_bytes, readable, extensions) VALUES (?, ?, ?, ?)`,
				w.Tag, w.WireBytes, w.Readable, w.Extensions); err != nil {
				return err
			}
		}
		return nil
	})
}

// ServerWire returns the rows ordered by tag (none in a database before schemaWire).
func (s *DB) ServerWire() ([]ServerWire, error) {
	if s.readOnly && s.version < wireVersion {
		return nil, nil
	}
	rows, err := s.db.Query(`SELECT tag, wire_bytes, readable, extensions FROM server_wire ORDER BY tag`)
	if err != nil {
		return nil, fmt.Errorf("read server wire: %w", err)
	}
	return collect(rows, "read server wire", func(rows *sql.Rows) (ServerWire, error) {
		var w ServerWire
		err := rows.Scan(&w.Tag, &w.WireBytes, &w.Readable, &w.Extensions)
		return w, err
	})
}

// SummaryRow is one cell of the summary table: a metric for a library ("" =
// the run), its text as shown and its number (NaN if none), Ord the row order.
// ID is the measure's catalogue id (empty in a table stored before ids were).
type SummaryRow struct {
	ID                 string
	Metric, Lib, Value string
	Num                float64
	Ord                int
}

// SaveSummary replaces the whole summary with rows.
func (s *DB) SaveSummary(rows []SummaryRow) error {
	return s.tx("save summary", func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DELETE FROM summary`); err != nil {
			return err
		}
		st, err := tx.Prepare(`INSERT INTO summary (id, metric, lib, value, num, ord) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rows {
			var num any = r.Num
			if math.IsNaN(r.Num) || math.IsInf(r.Num, 0) {
				num = nil
			}
			if _, err := st.Exec(r.ID, r.Metric, r.Lib, r.Value, num, r.Ord); err != nil {
				return fmt.Errorf("%s/%s: %w", r.Metric, r.Lib, err)
			}
		}
		return nil
	})
}

// Summary returns the summary ordered by Ord, then metric and lib.
func (s *DB) Summary() ([]SummaryRow, error) {
	id := "id"
	if s.readOnly && s.version < summaryIDVersion {
		id = "''" // stored before the measures had ids
	}
	rows, err := s.db.Query(`SELECT ` + id + `, metric, lib, value, num, ord FROM summary ORDER BY ord, metric, lib`)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	return collect(rows, "read summary", func(rows *sql.Rows) (SummaryRow, error) {
		var (
			r   SummaryRow
			num sql.NullFloat64
		)
		err := rows.Scan(&r.ID, &r.Metric, &r.Lib, &r.Value, &num, &r.Ord)
		r.Num = math.NaN()
		if num.Valid {
			r.Num = num.Float64
		}
		return r, err
	})
}

// LastSamples returns, per library, the last stored second that has its
// worker half: where a resumed run continues the library's totals.
func (s *DB) LastSamples() ([]Sample, error) {
	rows, err := s.db.Query(`SELECT ` + s.sampleCols() + ` FROM samples
		WHERE (lib, sec) IN (SELECT lib, max(sec) FROM samples WHERE msgs IS NOT NULL GROUP BY lib)
		ORDER BY lib`)
	if err != nil {
		return nil, fmt.Errorf("read last samples: %w", err)
	}
	return collect(rows, "read last samples", scanSample)
}

// LastSec is the latest second with any sample row, 0 when there is none.
func (s *DB) LastSec() (int64, error) {
	var sec sql.NullInt64
	if err := s.db.QueryRow(`SELECT max(sec) FROM samples`).Scan(&sec); err != nil {
		return 0, fmt.Errorf("read last second: %w", err)
	}
	return sec.Int64, nil
}
