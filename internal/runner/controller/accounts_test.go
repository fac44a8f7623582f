package controller

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// testController is a controller over a fresh database, without processes:
// the tests drive it with frames.
func testController(t *testing.T) *controller {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &controller{Lifecycle: &Lifecycle{o: Options{Log: slog.New(slog.DiscardHandler), Now: time.Now, EndRetry: &store.Retry{}}, db: db,
		epoch: time.Now(), batch: new(store.Batch)}, restarts: make(chan *workerProc, 16)}
}

func newWorkerProc(lib string) *workerProc {
	return &workerProc{lib: lib, secs: map[int64]*wire.SecStat{}, procs: map[int64]ProcAt{}, res: WorkerResult{Lib: lib}}
}

// TestAccountsCarryOverRestart: a worker that dies and is restarted goes on
// counting from what the dead process sent, to its last frame: wire bytes
// per second, each slot's dials and failures by status, each
// subscription's lost ranges (merged: the ids of the later process come
// after); the end's lost charges and dial accounts cover both processes,
// with the last process's wire bytes (what the wire check compares).
func TestAccountsCarryOverRestart(t *testing.T) {
	c := testController(t)
	dir := t.TempDir()
	w := newWorkerProc("gws")
	w.ch = exitedChild(t, dir)
	c.onFrame(w, &wire.Frame{Type: wire.FrameSec, Sec: 1, Stat: &wire.SecStat{MsgsTotal: 10, BytesTotal: 1000, WireBytes: 1100, WireBytesTotal: 1100}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 1, Slots: []wire.SlotStat{{Slot: 0, Group: "g", Dials: 2, DialFails: 1,
		Statuses: map[string]int64{"503": 1}, WireBytes: 1100}}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 1, Subs: []wire.SubStat{{Slot: 0, Group: "g", Stream: "s@trade", Msgs: 10, Lost: 4,
		Gaps: [][2]int64{{5, 8}}}}})
	c.onExit(w, false)

	w.ch, w.exited = exitedChild(t, dir), false
	c.onFrame(w, &wire.Frame{Type: wire.FrameSec, Sec: 3, Stat: &wire.SecStat{MsgsTotal: 5, BytesTotal: 500, WireBytes: 600, WireBytesTotal: 600}})
	if st := w.secs[3]; st.WireBytesTotal != 1700 || st.WireBytes != 600 || st.MsgsTotal != 15 {
		t.Errorf("second 3 after the restart: %+v; want 1,700 wire bytes so far (1,100 before), 600 in the second, 15 messages", st)
	}
	// The last process: a total frame without ranges (its ranges came when
	// they changed), then its final frames, with one more lost range across
	// a reconnect and one more dial.
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 3, Subs: []wire.SubStat{{Slot: 0, Group: "g", Stream: "s@trade", Msgs: 5, Lost: 2,
		Gaps: [][2]int64{{30, 31}}, GapAcross: []bool{true}, LostAcross: 2}}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 4, Subs: []wire.SubStat{{Slot: 0, Group: "g", Stream: "s@trade", Msgs: 7, Lost: 2, LostAcross: 2}}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 5, Subs: []wire.SubStat{{Slot: 0, Group: "g", Stream: "s@trade", Msgs: 9, Lost: 2,
		Gaps: [][2]int64{{30, 31}}, GapAcross: []bool{true}, LostAcross: 2}},
		Slots: []wire.SlotStat{{Slot: 0, Group: "g", Dials: 1, WireBytes: 600}}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameFinal, Fin: &wire.FinalReport{}})
	c.onExit(w, true)

	b := c.batch
	if len(b.Gaps) != 2 || fmt.Sprint(b.Gaps[0].Gaps) != "[[5 8]]" || fmt.Sprint(b.Gaps[1].Gaps, b.Gaps[1].Across) != "[[5 8] [30 31]] [false true]" {
		t.Errorf("recorded ranges %+v: want 5–8, then 5–8 and 30–31 (across), once each (unchanged ones not again)", b.Gaps)
	}
	last := b.Dials[len(b.Dials)-1]
	if last.Dials != 3 || last.DialFails != 1 || last.Statuses["503"] != 1 || last.WireBytes != 600 || !last.Interim {
		t.Errorf("last dial account %+v: want 3 dials, 1 failed (503), this process's 600 wire bytes, interim", last)
	}
	if ss := b.StreamSamples; ss[len(ss)-1].MsgsTotal != 19 || ss[len(ss)-1].LostTotal != 6 {
		t.Errorf("stream samples %+v: want 19 messages and 6 lost at the end", ss)
	}
	c.batch, c.workers = new(store.Batch), []*workerProc{w}
	if err := c.saveTruth(); err != nil {
		t.Fatal(err)
	}
	if d := c.batch.Dials; len(d) != 1 || d[0].Interim || d[0].Dials != 3 || d[0].WireBytes != 600 {
		t.Errorf("the end's dial accounts %+v: want one, final, 3 dials, the last process's 600 wire bytes", d)
	}
	charges, err := c.db.LostCharges()
	if err != nil {
		t.Fatal(err)
	}
	if len(charges) != 1 || charges[0].Lost != 6 || charges[0].Source != 6 || charges[0].LostAcross != 2 ||
		fmt.Sprint(charges[0].Gaps) != "[[5 8] [30 31]]" {
		t.Errorf("lost charges %+v: want 6 ids lost over both processes (2 across), in 2 ranges, charged to the source (the only library)", charges)
	}
}

// TestResumeCarriesAccounts: a resume reads back what the crashed
// controller wrote, to its last second, and its workers count on from it:
// the library's wire bytes, a slot's dials, a subscription's lost ranges,
// its dropped events, its CPU (the dead process's last sample, as CPU no
// rusage accounts for); and it runs the libraries and the window the run
// was made with, not its profile file's.
func TestResumeCarriesAccounts(t *testing.T) {
	c := testController(t)
	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	plan := wire.Plan{Version: wire.PlanVersion, RunID: "r", Start: start, End: start.Add(40 * time.Second),
		Slots: []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade"}}}}
	pj, _ := json.Marshal(plan)
	if err := c.db.CreateRun(store.Run{ID: "r", Name: "r", Status: "running", Started: start, Planned: 40 * time.Second,
		ProfileText: "name: r\nduration: 5s\nlibraries: [gorilla, gobwas, coder]\n",
		Settings:    map[string]string{"plan": string(pj), "libraries": "coder,gws"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", SampledCPU: 0.5, CPUUnreaped: 0.1, RusageUser: 0.3, RusageSys: 0.1}); err != nil {
		t.Fatal(err)
	}
	w := newWorkerProc("gws")
	c.onFrame(w, &wire.Frame{Type: wire.FrameSec, Sec: 7, Stat: &wire.SecStat{MsgsTotal: 70, WireBytesTotal: 7000, Dropped: 3}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 7, Subs: []wire.SubStat{{Slot: 0, Group: "g", Stream: "btcusdt@trade", Msgs: 70, Lost: 4,
		Gaps: [][2]int64{{5, 8}}}}, Slots: []wire.SlotStat{{Slot: 0, Group: "g", Dials: 2, DialFails: 1, Statuses: map[string]int64{"429": 1}}}})
	w.procs[7] = ProcAt{ProcSample: procSample(0.25, 0.05), OK: true}
	c.addRow(w, 7)
	if err := c.db.Write(c.batch); err != nil {
		t.Fatal(err)
	}

	rs, err := loadResumed(c.db)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rs.profile.Libraries, []string{"coder", "gws"}) || time.Duration(rs.profile.Duration) != 40*time.Second {
		t.Errorf("resumed with libraries %v for %v; want the run's coder,gws for 40s", rs.profile.Libraries, time.Duration(rs.profile.Duration))
	}
	r := newWorkerProc("gws")
	rs.carry(r)
	if r.acc.wire != 7000 || r.acc.msgs != 70 || r.acc.dropped != 3 {
		t.Errorf("carried wire %d msgs %d dropped %d; want 7000, 70, 3", r.acc.wire, r.acc.msgs, r.acc.dropped)
	}
	if math.Abs(r.acc.sampled-0.8) > 1e-9 || math.Abs(r.acc.unreaped-0.4) > 1e-9 || r.acc.rusageUser != 0.3 {
		t.Errorf("carried CPU sampled %.3f unreaped %.3f rusage %.2f; want 0.8 (0.5 + the dead process's 0.3), 0.4 of it unreaped, rusage 0.3",
			r.acc.sampled, r.acc.unreaped, r.acc.rusageUser)
	}
	c.batch = new(store.Batch)
	r.ch = exitedChild(t, t.TempDir())
	c.onFrame(r, &wire.Frame{Type: wire.FrameSubs, Sec: 9, Subs: []wire.SubStat{{Slot: 0, Group: "g", Stream: "btcusdt@trade", Msgs: 5, Lost: 1,
		Gaps: [][2]int64{{90, 90}}}}, Slots: []wire.SlotStat{{Slot: 0, Group: "g", Dials: 1}}})
	c.onFrame(r, &wire.Frame{Type: wire.FrameFinal, Fin: &wire.FinalReport{}})
	subs, dials := r.finalAccounts()
	if len(subs) != 1 || subs[0].Lost != 5 || subs[0].Msgs != 75 || fmt.Sprint(subs[0].Gaps) != "[[5 8] [90 90]]" {
		t.Errorf("final subscription %+v: want 75 messages, 5 lost in 5–8 and 90", subs)
	}
	if len(dials) != 1 || dials[0].Dials != 3 || dials[0].DialFails != 1 || dials[0].Statuses["429"] != 1 {
		t.Errorf("final dials %+v: want 3 dials, one failed with 429", dials)
	}
}

// TestFaultsAfter: a resumed run's replay server gets the faults due from
// the resume on; a repeated one from its first repetition then.
func TestFaultsAfter(t *testing.T) {
	fs := []wire.ScheduledFault{{At: 5 * time.Second}, {At: 20 * time.Second}, {At: 3 * time.Second, Every: 4 * time.Second}}
	if got := faultsAfter(fs, 0); len(got) != 3 {
		t.Errorf("a new run: %v, want all", got)
	}
	got := faultsAfter(fs, 10*time.Second)
	if len(got) != 2 || got[0].At != 20*time.Second || got[1].At != 11*time.Second || got[1].Every != 4*time.Second {
		t.Errorf("from 10 s: %+v; want the one at 20 s and the repeated one from 11 s", got)
	}
	if got := faultsAfter(fs, 11*time.Second); len(got) != 2 || got[1].At != 11*time.Second {
		t.Errorf("from 11 s: %+v; want the repetition due at 11 s kept", got)
	}
}

func procSample(user, sys float64) sampler.ProcSample {
	return sampler.ProcSample{RSS: 1 << 20, CPUUser: user, CPUSys: sys}
}

// TestResumeBuiltinProfile: a run made from the built-in profile (no file:
// no profile text stored) resumes with that profile, its window and
// libraries the run's own, instead of failing on an empty profile.
func TestResumeBuiltinProfile(t *testing.T) {
	c := testController(t)
	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	plan := wire.Plan{Version: wire.PlanVersion, RunID: "r", Start: start, End: start.Add(40 * time.Second),
		Slots: []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade"}}}}
	pj, _ := json.Marshal(plan)
	if err := c.db.CreateRun(store.Run{ID: "r", Name: "local", Status: "running", Started: start, Planned: 40 * time.Second,
		Settings: map[string]string{"plan": string(pj), "libraries": "gorilla,gws"}}); err != nil {
		t.Fatal(err)
	}
	rs, err := loadResumed(c.db)
	if err != nil {
		t.Fatalf("resume of a run made from the built-in profile: %v", err)
	}
	if !slices.Equal(rs.profile.Libraries, []string{"gorilla", "gws"}) || time.Duration(rs.profile.Duration) != 40*time.Second {
		t.Errorf("resumed with libraries %v for %v; want the run's gorilla,gws for 40s", rs.profile.Libraries, time.Duration(rs.profile.Duration))
	}
}
