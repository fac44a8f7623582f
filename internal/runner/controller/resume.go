package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Resuming a run whose controller died (SIGKILL, OOM, power):
//
//   - The run keeps its id, database, plan (symbols included: they are not
//     resolved again) and window. It continues up to the ORIGINAL end instant,
//     not for the remaining duration: every row is keyed by seconds since the
//     original start, the window is one calendar interval shared by all
//     libraries, and whoever planned a day-long run expects it to end when
//     planned. The seconds lost are a hole in that window, recorded as an
//     outage event and counted by the table as missing seconds.
//   - The outage runs from the last second recorded to the instant the
//     resume began; the workers then take the warm-up to reconnect, so the
//     first second with data comes a little after the outage's end.
//   - Every account continues from what the database holds, which is every
//     account to the last second recorded: per library the totals of every
//     second (messages, bytes, wire bytes, reconnects, lost, duplicates,
//     dropped events), per subscription its loss account and lost ranges
//     (sent by the worker in the second they change) and its other totals
//     as of its last subs frame (every 10 s), per slot its dial account
//     (dials, failures by status, unrepairable: sent when it changes), and
//     the CPU accounts. Events (reconnects, negotiated extensions, faults)
//     are rows already. Sequence state does not survive: the first message
//     of each subscription after the resume starts a new sequence, so what
//     was sent during the outage is the outage's, not counted as lost.
//   - What cannot be kept: the outage's seconds (nothing was received), the
//     dead workers' rusage (never reaped: their last CPU sample stands for
//     it, recorded as unreaped CPU), their latency histograms (the latency
//     is the resumed processes'), and what the dead replay server counted.
//   - A local target gets a new replay server on the run's original
//     schedule (its start instant): every stream's ids and bytes go on as an
//     uninterrupted run's would, the events due during the outage skipped,
//     and the profile's faults fire at their planned instants, those due
//     before the resume dropped (they fell in the outage). Its counts
//     (server_counts, server_wire) describe the resumed part only, and the
//     wire check compares the workers' bytes since the resume with them.

// resumed is what a crashed run left in its database.
type resumed struct {
	db      *store.DB
	run     store.Run
	plan    *wire.Plan
	profile *profile.Profile
	lastSec int64
	last    map[string]store.Sample
	streams map[string]map[subKey]wire.SubStat
	gaps    map[string]map[subKey]store.SubGaps
	slots   map[string]map[int]store.SlotDials
	workers map[string]store.Worker
	lock    *rundir.Lock // the run directory's, taken before the database is opened
}

type subKey struct {
	slot   int
	stream string
}

func openResumed(dir string) (*resumed, error) {
	path := filepath.Join(dir, "soak.db")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("resume %s: %w", dir, err)
	}
	// A run that cannot be resumed (finished, or a side: server run) is
	// refused from a read-only look, before its lock file is touched.
	if err := resumable(path); err != nil {
		return nil, fmt.Errorf("resume %s: %w", dir, err)
	}
	// A controller still running this run owns it: refused before anything is written.
	lock, err := rundir.TakeLock(dir)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	db, err := store.Open(path)
	if err != nil {
		lock.Release()
		return nil, fmt.Errorf("resume %s: %w", dir, err)
	}
	rs, err := loadResumed(db)
	if err != nil {
		db.Close()
		lock.Release()
		return nil, fmt.Errorf("resume %s: %w", dir, err)
	}
	rs.lock = lock
	return rs, nil
}

// resumable reads the run at path without writing anything and says why it
// cannot be resumed, if it cannot.
func resumable(path string) error {
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	run, err := db.Run()
	if err != nil {
		return err
	}
	return canResume(run)
}

// canResume says why run cannot be resumed, if it cannot.
func canResume(run store.Run) error {
	if run.Status != store.StatusRunning {
		return fmt.Errorf("run %s has status %q: only a run whose controller died (status \"running\") can be resumed", run.ID, run.Status)
	}
	if run.Settings["side"] == profile.SideServer {
		// Checked before the plan: such a run stores none (its servers are its libraries).
		return errors.New("a side: server run cannot be resumed (its rooms start anew)")
	}
	return nil
}

func loadResumed(db *store.DB) (*resumed, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	if err := canResume(run); err != nil { // again, under the lock
		return nil, err
	}
	rs := &resumed{db: db, run: run, last: map[string]store.Sample{}, streams: map[string]map[subKey]wire.SubStat{}, workers: map[string]store.Worker{},
		gaps: map[string]map[subKey]store.SubGaps{}, slots: map[string]map[int]store.SlotDials{}}
	if err := json.Unmarshal([]byte(run.Settings["plan"]), &rs.plan); err != nil || rs.plan == nil || len(rs.plan.Slots) == 0 {
		return nil, fmt.Errorf("run %s: no usable plan in its settings", run.ID)
	}
	if rs.plan.Version != wire.PlanVersion {
		return nil, fmt.Errorf("run %s: plan version %d, this program speaks %d", run.ID, rs.plan.Version, wire.PlanVersion)
	}
	if strings.Contains(rs.plan.Proxy, ":****@") {
		// Only the masked proxy is stored: read its password again from the profile file.
		if rs.plan.Proxy, err = proxyFromFile(run.Settings["profile_path"], rs.plan.Proxy); err != nil {
			return nil, fmt.Errorf("run %s goes through a proxy whose password is stored masked: %w", run.ID, err)
		}
	}
	if strings.TrimSpace(run.ProfileText) == "" && run.Settings["profile_path"] == "" {
		// Made from the built-in profile (no file: nothing stored as its
		// text); its plan, window and libraries are the run's own.
		rs.profile = profile.Default()
	} else if rs.profile, err = profile.Parse(run.Settings["profile_path"], []byte(run.ProfileText)); err != nil {
		return nil, fmt.Errorf("run %s: stored profile: %w", run.ID, err)
	}
	rs.profile.Proxy = rs.plan.Proxy // the controller's preflight and REST requests use it too
	// What the command line changed of the profile for this run: its window
	// (-duration) and its libraries (-libs).
	rs.profile.Duration = profile.Duration(rs.plan.End.Sub(rs.plan.Start))
	if rs.lastSec, err = db.LastSec(); err != nil {
		return nil, err
	}
	last, err := db.LastSamples()
	if err != nil {
		return nil, err
	}
	for _, s := range last {
		rs.last[s.Lib] = s
	}
	ss, err := db.LatestStreamSamples()
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		put(rs.streams, s.Lib, subKey{s.Slot, s.Stream}, wire.SubStat{Slot: s.Slot, Group: s.Group, Stream: s.Stream,
			Msgs: s.MsgsTotal, Bytes: s.BytesTotal, Lost: s.LostTotal, Dup: s.DupTotal, OOO: s.OOOTotal,
			MaxSilenceMs: s.MaxSilenceMs, LastSeq: s.LastSeq, Stalls: s.StallsTotal, Regress: s.RegressTotal, LostAcross: s.LostAcrossTotal})
	}
	gaps, err := db.SubGapsAll()
	if err != nil {
		return nil, err
	}
	for _, g := range gaps {
		put(rs.gaps, g.Lib, subKey{g.Slot, g.Stream}, g)
	}
	dials, err := db.SlotDialAccounts()
	if err != nil {
		return nil, err
	}
	for _, d := range dials {
		put(rs.slots, d.Lib, d.Slot, d)
	}
	ws, err := db.Workers()
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		rs.workers[w.Lib] = w
	}
	if libs := run.Settings["libraries"]; libs != "" {
		rs.profile.Libraries = strings.Split(libs, ",")
	} else if len(ws) > 0 { // recorded before the setting: the libraries that said hello
		rs.profile.Libraries = rs.profile.Libraries[:0]
		for _, w := range ws {
			rs.profile.Libraries = append(rs.profile.Libraries, w.Lib)
		}
	}
	return rs, nil
}

// put sets m[lib][k] to v, making m[lib] when it is missing.
func put[K comparable, V any](m map[string]map[K]V, lib string, k K, v V) {
	if m[lib] == nil {
		m[lib] = map[K]V{}
	}
	m[lib][k] = v
}

// carry starts a worker's accounts from what the crashed run recorded.
func (rs *resumed) carry(w *workerProc) {
	last, ok := rs.last[w.lib]
	if ok {
		w.acc.msgs, w.acc.bytes = last.MsgsTotal, last.BytesTotal
		w.acc.reconnects, w.acc.lost, w.acc.dup = last.ReconnectsTotal, last.LostTotal, last.DupTotal
		w.acc.wire = last.WireBytesTotal
	}
	w.acc.subs, w.acc.gaps, w.acc.slots = rs.streams[w.lib], rs.gaps[w.lib], rs.slots[w.lib]
	w.subs, w.gaps, w.slots = maps.Clone(w.acc.subs), maps.Clone(w.acc.gaps), maps.Clone(w.acc.slots)
	if wk, ok := rs.workers[w.lib]; ok {
		// The record holds the accounts of the processes the dead
		// controller reaped (restarts), and what earlier resumes carried.
		w.acc.rusageUser, w.acc.rusageSys = wk.RusageUser, wk.RusageSys
		w.acc.dropped = wk.DroppedEvents
		w.acc.unreaped = wk.CPUUnreaped
		if !math.IsNaN(wk.SampledCPU) {
			w.acc.sampled, w.acc.sampledAny = wk.SampledCPU, true
		}
	}
	w.acc.dropped = max(w.acc.dropped, last.DroppedTotal) // the crashed process's, to its last second
	if ok && last.HasProc {
		// The dead controller's workers were never reaped by it: their rusage
		// is unknown. What was sampled of them is kept (their last sample),
		// as CPU that no rusage accounts for.
		w.acc.sampled += last.CPUUser + last.CPUSys
		w.acc.unreaped += last.CPUUser + last.CPUSys
		w.acc.sampledAny = true
	}
}

// carrySub adds what earlier processes (or the crashed controller) counted
// for a subscription, and remembers the result for a later restart.
func (w *workerProc) carrySub(s wire.SubStat) wire.SubStat {
	if b, ok := w.acc.subs[subKey{s.Slot, s.Stream}]; ok {
		s.Msgs += b.Msgs
		s.Bytes += b.Bytes
		s.Lost += b.Lost
		s.LostAcross += b.LostAcross
		s.Dup += b.Dup
		s.OOO += b.OOO
		s.Regress += b.Regress
		s.Stalls += b.Stalls
		s.MaxSilenceMs = max(s.MaxSilenceMs, b.MaxSilenceMs)
	}
	if w.subs == nil {
		w.subs = map[subKey]wire.SubStat{}
	}
	w.subs[subKey{s.Slot, s.Stream}] = s
	return s
}

// reopen marks the run running again and records the outage: from the last
// second recorded to until, the instant the resume began (the replay
// server's faults due before it are dropped: see Run).
func (c *controller) reopen(until time.Time) error {
	rs := c.resumed
	if err := rs.db.ReopenRun("running"); err != nil {
		return err
	}
	c.recorded(rs.run)
	out := c.addOutage(until, "resumed")
	c.resumedAt = float64(rs.lastSec) + out.Seconds()
	c.o.Log.Warn("resuming a crashed run", "run", rs.run.ID, "last_second", rs.lastSec, "outage", out.Round(time.Millisecond),
		"end", rs.plan.End.Format(time.RFC3339))
	return nil
}

// addOutage records the run-wide outage from the last second recorded to
// until (a monotonic instant on the run's grid) and returns its length.
func (c *controller) addOutage(until time.Time, why string) time.Duration {
	rs := c.resumed
	from := c.epoch.Add(time.Duration(rs.lastSec) * time.Second)
	out := until.Sub(from)
	c.batch.Events = append(c.batch.Events, store.Event{TS: from, Sec: float64(rs.lastSec), Kind: wire.EventOutage, Slot: -1,
		DurMs:  float64(out.Milliseconds()),
		Detail: fmt.Sprintf("controller down: nothing recorded from second %d to %.1f; %s", rs.lastSec, until.Sub(c.epoch).Seconds(), why)})
	return out
}

// proxyFromFile returns the proxy of the profile file at path when it is the
// one a run used (stored as masked), password included.
func proxyFromFile(path, masked string) (string, error) {
	p, err := profile.Load(path)
	if err != nil {
		return "", fmt.Errorf("read its password again: %w", err)
	}
	if endpoint.Mask(p.Proxy) != masked {
		return "", fmt.Errorf("read its password again: %s now names proxy %q, the run used %q", path, endpoint.Mask(p.Proxy), masked)
	}
	return p.Proxy, nil
}
