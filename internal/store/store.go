// Package store keeps one run in one SQLite database (out/<run-id>/soak.db):
// the schema and its migrations, the batched writer (one transaction per
// call, prepared statements reused) and the read queries of the report.
//
// The controller is the only writer. The database is in WAL mode, so a
// reader opened with OpenReadOnly sees every committed batch while the run
// goes on.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver

	"github.com/wssoak/wssoak/internal/rundir"
)

// DB is an open run database.
type DB struct {
	db       *sql.DB
	path     string
	readOnly bool
	version  int // the schema's user_version: a reader may open an older one (minReadVersion)

	// Writer only: statements prepared once, reused by every Write.
	insSample, insStreamSample, insEvent, insHost, insStream, selStream, updStream *sql.Stmt
	streamIDs                                                                      map[streamKey]int64
}

type streamKey struct {
	lib, grp, stream string
	slot             int
}

func dsn(path string, params url.Values) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params.Encode()
}

// Open opens or creates the database at path (its directory must exist) as
// the run's single writer and brings the schema up to date.
func Open(path string) (*DB, error) {
	// A file with content but no tables is not to be migrated: it is a copy
	// of a running database made without its WAL (see noTables).
	fi, err := os.Stat(path)
	existing := err == nil && fi.Size() > 0
	db, err := sql.Open("sqlite3", dsn(path, url.Values{
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_busy_timeout": {"5000"},
		"_foreign_keys": {"on"},
		"_txlock":       {"immediate"},
	}))
	if err != nil {
		return nil, fmt.Errorf("open db: %w", err)
	}
	db.SetMaxOpenConns(1) // one writer connection: statements and pragmas stay on it
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	s := &DB{db: db, path: path, streamIDs: map[streamKey]int64{}}
	if err := s.migrate(existing); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.prepare(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// OpenReadOnly opens an existing database for reading; it may be used while
// the writer runs.
//
// A database without a -wal file beside it has no writer (the writer's Close
// folds the WAL in and removes it): it is opened immutable, so reading it
// leaves no -wal and -shm files behind in the run directory.
func OpenReadOnly(path string) (*DB, error) {
	params := url.Values{"mode": {"ro"}, "_busy_timeout": {"5000"}}
	if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
		params.Set("immutable", "1")
	}
	db, err := sql.Open("sqlite3", dsn(path, params))
	if err != nil {
		return nil, fmt.Errorf("open db: %w", err)
	}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		db.Close()
		if werr := walUnreadable(path); werr != nil {
			return nil, werr
		}
		return nil, fmt.Errorf("open db: %w", err)
	}
	if v == 0 {
		if err := noTables(db, path); err != nil {
			db.Close()
			return nil, err
		}
	}
	if v < minReadVersion || v > schemaVersion {
		db.Close()
		return nil, fmt.Errorf("open db: schema version %d: this soak reads versions %d to %d", v, minReadVersion, schemaVersion)
	}
	return &DB{db: db, path: path, readOnly: true, version: v}, nil
}

// walUnreadable explains why SQLite cannot open a database read-only: a
// -wal file without its -shm in a directory this process may not write,
// where SQLite cannot make the -shm it needs to read the WAL. Nil when that
// is not the case.
func walUnreadable(path string) error {
	if _, err := os.Stat(path + "-wal"); err != nil {
		return nil
	}
	if _, err := os.Stat(path + "-shm"); err == nil {
		return nil
	}
	dir := filepath.Dir(path)
	if rundir.Writable(dir) == nil {
		return nil
	}
	return fmt.Errorf("open db: %s has a -wal file (%s: a run going on, or one that crashed or was copied mid-run) "+
		"but no -shm, and its directory %s is read-only: SQLite cannot read the WAL without making a -shm there; "+
		"copy the run directory somewhere writable", path, filepath.Base(path)+"-wal", dir)
}

// noTables explains a database without a single table: a copy of a running
// run's soak.db made without its soak.db-wal, where everything written since
// the last checkpoint (for a short run: everything, the schema included) is.
func noTables(db *sql.DB, path string) error {
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return fmt.Errorf("open db: %w", err)
	}
	if n > 0 {
		return nil
	}
	return fmt.Errorf("open db: %s has no tables: a copy of a running database needs its -wal file too (%s), "+
		"or this is not a soak database", path, filepath.Base(path)+"-wal")
}

func (s *DB) migrate(existing bool) error {
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("open db: %w", err)
	}
	if v == 0 && existing {
		if err := noTables(s.db, s.path); err != nil {
			return err
		}
	}
	if v > schemaVersion {
		return fmt.Errorf("open db: schema version %d is newer than this program's %d", v, schemaVersion)
	}
	for ; v < schemaVersion; v++ {
		tx, err := s.db.Begin()
		if err != nil {
			return fmt.Errorf("migrate db: %w", err)
		}
		if _, err := tx.Exec(migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate db to version %d: %w", v+1, err)
		}
		if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate db to version %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate db to version %d: %w", v+1, err)
		}
	}
	return nil
}

func (s *DB) prepare() error {
	for _, p := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&s.insSample, `INSERT INTO samples (sec, lib, ts_ns,
				msgs, bytes, msgs_total, bytes_total, goroutines, heap_bytes, conns_up,
				reconnects_total, lost_total, dup_total, lat_p50_us, lat_p99_us, lat_max_us,
				rss, cpu_user_ms, cpu_sys_ms, cpu_pct100, fds, threads, wire_bytes, wire_bytes_total, drops, dropped_total,
				writes, drain)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ` + drainOf + `)
			ON CONFLICT (sec, lib) DO UPDATE SET
				ts_ns = excluded.ts_ns,
				msgs = coalesce(excluded.msgs, msgs),
				bytes = coalesce(excluded.bytes, bytes),
				msgs_total = coalesce(excluded.msgs_total, msgs_total),
				bytes_total = coalesce(excluded.bytes_total, bytes_total),
				goroutines = coalesce(excluded.goroutines, goroutines),
				heap_bytes = coalesce(excluded.heap_bytes, heap_bytes),
				conns_up = coalesce(excluded.conns_up, conns_up),
				reconnects_total = coalesce(excluded.reconnects_total, reconnects_total),
				lost_total = coalesce(excluded.lost_total, lost_total),
				dup_total = coalesce(excluded.dup_total, dup_total),
				-- a second whose merged count is 0 has no latency of its own
				-- (a worker's last frame may repeat a second with nothing new)
				lat_p50_us = CASE WHEN coalesce(excluded.msgs, msgs) = 0 THEN NULL ELSE coalesce(excluded.lat_p50_us, lat_p50_us) END,
				lat_p99_us = CASE WHEN coalesce(excluded.msgs, msgs) = 0 THEN NULL ELSE coalesce(excluded.lat_p99_us, lat_p99_us) END,
				lat_max_us = CASE WHEN coalesce(excluded.msgs, msgs) = 0 THEN NULL ELSE coalesce(excluded.lat_max_us, lat_max_us) END,
				rss = coalesce(excluded.rss, rss),
				cpu_user_ms = coalesce(excluded.cpu_user_ms, cpu_user_ms),
				cpu_sys_ms = coalesce(excluded.cpu_sys_ms, cpu_sys_ms),
				cpu_pct100 = coalesce(excluded.cpu_pct100, cpu_pct100),
				fds = coalesce(excluded.fds, fds),
				threads = coalesce(excluded.threads, threads),
				wire_bytes = coalesce(excluded.wire_bytes, wire_bytes),
				wire_bytes_total = coalesce(excluded.wire_bytes_total, wire_bytes_total),
				drops = coalesce(excluded.drops, drops),
				dropped_total = coalesce(excluded.dropped_total, dropped_total),
				writes = coalesce(excluded.writes, writes)`},
		{&s.insStreamSample, `INSERT OR REPLACE INTO stream_samples (sec, sid, msgs_total, bytes_total,
				lost_total, dup_total, ooo_total, max_silence_ms, last_seq, stalls_total, stalled,
				regress_total, lost_across_total)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.insEvent, `INSERT INTO events (lib, ts_ns, sec, kind, slot, grp, stream, code, detail, dur_ms, fault)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.insHost, `INSERT OR REPLACE INTO host_samples (sec, ts_ns, load1, load5, load15,
				cpu_pct, steal_pct, iowait_pct, mem_used, mem_avail)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.insStream, `INSERT INTO streams (lib, slot, grp, stream) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`},
		{&s.selStream, `SELECT id FROM streams WHERE lib = ? AND grp = ? AND slot = ? AND stream = ?`},
		{&s.updStream, `UPDATE streams SET last_sec = ?1
			WHERE id IN (SELECT value FROM json_each(?2)) AND (last_sec IS NULL OR last_sec < ?1)`},
	} {
		st, err := s.db.Prepare(p.query)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		*p.dst = st
	}
	return nil
}

// Close closes the database; the writer first folds the WAL into the main
// file so the run directory holds one self-contained file.
func (s *DB) Close() error { return s.CloseWith(nil) }

// CloseWith is Close with the writer's final checkpoint retried by r (nil:
// tried once). A checkpoint that fails loses nothing: the WAL stays beside
// the database, and the next open folds it in (a *CheckpointError says so).
func (s *DB) CloseWith(r *Retry) error {
	var errs []error
	for _, st := range []*sql.Stmt{s.insSample, s.insStreamSample, s.insEvent, s.insHost, s.insStream, s.selStream, s.updStream} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if !s.readOnly {
		checkpoint := func() error {
			_, err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
			return err
		}
		var err error
		if r != nil {
			err = r.Do("checkpoint", checkpoint)
		} else {
			err = checkpoint()
		}
		if err != nil {
			errs = append(errs, &CheckpointError{Path: s.path, Err: err})
		}
	}
	if err := s.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close db: %w", err))
	}
	return errors.Join(errs...)
}

// CheckpointError is a final checkpoint that failed (the disk is full): the
// database is intact, in two files. Its text says where what was written
// is, not that nothing was lost: writes that failed before it (batches
// given up) are another error's to tell.
type CheckpointError struct {
	Path string
	Err  error
}

func (e *CheckpointError) Error() string {
	return fmt.Sprintf("checkpoint %s: %v: what was written is in %s and %s, keep the two files together "+
		"(the next open of the database folds the WAL in)", e.Path, e.Err, filepath.Base(e.Path), filepath.Base(e.Path)+"-wal")
}

func (e *CheckpointError) Unwrap() error { return e.Err }

// Checkpoint copies committed WAL pages into the database without blocking
// readers or the writer (PASSIVE); call it periodically during a run.
func (s *DB) Checkpoint() error {
	if _, err := s.db.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// tx runs fn in one transaction.
func (s *DB) tx(what string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// ns stores a time as Unix nanoseconds; the zero time is NULL.
func ns(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// fromNS is the inverse of ns.
func fromNS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.Unix(0, v.Int64)
}

func jsonMap(m map[string]string) (string, error) {
	if m == nil {
		m = map[string]string{}
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// Run is the one run a database holds.
type Run struct {
	ID, Name, Target, ProfileText, Status, GoVersion string
	Started, Ended                                   time.Time
	Planned                                          time.Duration
	Host                                             map[string]string // kernel, CPU, tcp_rmem …
	Settings                                         map[string]string // resolved settings shown in the report
}

// CreateRun records the run; a database holds exactly one.
func (s *DB) CreateRun(r Run) error {
	host, err := jsonMap(r.Host)
	if err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	settings, err := jsonMap(r.Settings)
	if err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	_, err = s.db.Exec(`INSERT INTO runs (id, name, target, profile_text, started_ns, planned_s,
			ended_ns, status, host_json, go_version, settings_json)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Name, r.Target, r.ProfileText, ns(r.Started), r.Planned.Seconds(),
		ns(r.Ended), r.Status, host, r.GoVersion, settings)
	if err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	return nil
}

// FinishRun records the end of the run and its final status.
func (s *DB) FinishRun(ended time.Time, status string) error {
	res, err := s.db.Exec(`UPDATE runs SET ended_ns = ?, status = ?`, ns(ended), status)
	if err != nil {
		return fmt.Errorf("finish run: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("finish run: %d runs recorded, want 1", n)
	}
	return nil
}

// Run returns the run record.
func (s *DB) Run() (Run, error) {
	var (
		r              Run
		started, ended sql.NullInt64
		planned        float64
		host, settings string
	)
	err := s.db.QueryRow(`SELECT id, name, target, profile_text, started_ns, planned_s, ended_ns,
			status, host_json, go_version, settings_json FROM runs`).
		Scan(&r.ID, &r.Name, &r.Target, &r.ProfileText, &started, &planned, &ended,
			&r.Status, &host, &r.GoVersion, &settings)
	if err != nil {
		return Run{}, fmt.Errorf("read run: %w", err)
	}
	r.Started, r.Ended = fromNS(started), fromNS(ended)
	r.Planned = time.Duration(math.Round(planned * 1e9))
	if err := json.Unmarshal([]byte(host), &r.Host); err != nil {
		return Run{}, fmt.Errorf("read run host: %w", err)
	}
	if err := json.Unmarshal([]byte(settings), &r.Settings); err != nil {
		return Run{}, fmt.Errorf("read run settings: %w", err)
	}
	return r, nil
}

// Worker is one library's process over the run (the last one, if restarted).
type Worker struct {
	Lib, Module, Version  string
	Pid                   int
	Started, Ended        time.Time
	ExitCode              int
	RusageUser, RusageSys float64 // seconds, from the kernel at exit
	// SampledCPU is seconds, summed from the /proc samples (clock ticks, so
	// 10 ms steps); NaN when no sample of the worker was taken (stored as
	// notSampled; databases before it stored 0 for that).
	SampledCPU             float64
	MaxRSS                 int64 // bytes
	LatCount               int64 // latency samples over the whole run (0 = none)
	LatP50, LatP99, LatMax int64 // microseconds, from the run's merged histogram
	LatP999                int64 // microseconds (0 before schemaSignals)
	LatNeg                 int64 // latency samples below 0 (clock skew), recorded as 0
	// DroppedEvents is how many events the worker dropped because its channel
	// to the frame writer was full (over all its processes): they are in no
	// events row. 0 before schemaSignals.
	DroppedEvents int64
	// Runtime is the Go runtime the worker ran with, as it read it back:
	// "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off" ("" before schemaRuntime).
	Runtime string
	// CPUUnreaped is, of SampledCPU, the seconds of processes whose rusage
	// is unknown: the workers of a controller that died, which it never
	// reaped (0 before schemaResume). SampledCPU − CPUUnreaped is what
	// compares with the rusage.
	CPUUnreaped float64
}

// UpsertWorker records or replaces the worker of w.Lib.
func (s *DB) UpsertWorker(w Worker) error {
	_, err := s.db.Exec(`INSERT OR REPLACE INTO workers (lib, module, version, pid, started_ns, ended_ns,
			exit_code, rusage_user_s, rusage_sys_s, sampled_cpu_s, maxrss, lat_count, lat_p50_us, lat_p99_us, lat_max_us,
			lat_p999_us, lat_neg, dropped_events, runtime, cpu_unreaped_s)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.Lib, w.Module, w.Version, w.Pid, ns(w.Started), ns(w.Ended), w.ExitCode,
		w.RusageUser, w.RusageSys, sampledOut(w.SampledCPU), w.MaxRSS, w.LatCount, w.LatP50, w.LatP99, w.LatMax,
		w.LatP999, w.LatNeg, w.DroppedEvents, w.Runtime, w.CPUUnreaped)
	if err != nil {
		return fmt.Errorf("upsert worker %s: %w", w.Lib, err)
	}
	return nil
}

// Workers returns all workers ordered by library name.
func (s *DB) Workers() ([]Worker, error) {
	rows, err := s.db.Query(`SELECT lib, module, version, pid, started_ns, ended_ns, exit_code,
		rusage_user_s, rusage_sys_s, sampled_cpu_s, maxrss, lat_count, lat_p50_us, lat_p99_us, lat_max_us, ` +
		s.col("lat_p999_us", "0") + `, ` + s.col("lat_neg", "0") + `, ` + s.col("dropped_events", "0") + `, ` +
		s.colSince(runtimeVersion, "runtime", "''") + `, ` + s.colSince(resumeVersion, "cpu_unreaped_s", "0") + `
		FROM workers ORDER BY lib`)
	if err != nil {
		return nil, fmt.Errorf("read workers: %w", err)
	}
	return collect(rows, "read workers", func(rows *sql.Rows) (Worker, error) {
		var (
			w              Worker
			started, ended sql.NullInt64
		)
		err := rows.Scan(&w.Lib, &w.Module, &w.Version, &w.Pid, &started, &ended, &w.ExitCode,
			&w.RusageUser, &w.RusageSys, &w.SampledCPU, &w.MaxRSS, &w.LatCount, &w.LatP50, &w.LatP99, &w.LatMax,
			&w.LatP999, &w.LatNeg, &w.DroppedEvents, &w.Runtime, &w.CPUUnreaped)
		w.Started, w.Ended = fromNS(started), fromNS(ended)
		if w.SampledCPU == notSampled || (w.SampledCPU == 0 && s.readOnly && s.version < notSampledVersion) {
			w.SampledCPU = math.NaN()
		}
		return w, err
	})
}

// notSampled is what sampled_cpu_s (NOT NULL) holds for a worker of which
// no /proc sample was taken; Workers returns NaN for it.
const notSampled = -1

func sampledOut(v float64) float64 {
	if math.IsNaN(v) {
		return notSampled
	}
	return v
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, what string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ReopenRun marks a run that a crashed controller left behind as running
// again: its end instant is cleared and its status set.
func (s *DB) ReopenRun(status string) error {
	if _, err := s.db.Exec(`UPDATE runs SET ended_ns = NULL, status = ?`, status); err != nil {
		return fmt.Errorf("reopen run: %w", err)
	}
	return nil
}
