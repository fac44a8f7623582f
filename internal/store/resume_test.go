package store

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/rundir"
)

// TestResumeAccountsRoundTrip: the dial accounts and lost ranges a batch
// carries are stored, each replacing the same slot's or subscription's, and
// read back as written; the end's accounts (SaveTruth) replace those of the
// same slots and leave the interim account of a slot they do not name (a
// worker that died at the end).
func TestResumeAccountsRoundTrip(t *testing.T) {
	db, _ := open(t)
	at := time.Unix(1_800_000_000, 0)
	first := &Batch{
		Samples: []Sample{{Lib: "gws", Sec: 1, TS: at, HasWorker: true, DroppedTotal: 7}, {Lib: "gws", Sec: 2, TS: at, HasWorker: true}},
		Dials: []SlotDials{
			{Lib: "gws", Slot: 0, Group: "g", Dials: 1, Interim: true},
			{Lib: "coder", Slot: 0, Group: "g", Dials: 3, DialFails: 2, Statuses: map[string]int64{"503": 2}, Interim: true},
		},
		Gaps: []SubGaps{{Lib: "gws", Slot: 0, Group: "g", Stream: "btcusdt@trade", Gaps: [][2]int64{{4, 7}}}},
	}
	second := &Batch{
		Dials: []SlotDials{{Lib: "gws", Slot: 0, Group: "g", Dials: 2, DialFails: 1, Statuses: map[string]int64{"429": 1}, Unrepairable: true, Interim: true}},
		Gaps: []SubGaps{{Lib: "gws", Slot: 0, Group: "g", Stream: "btcusdt@trade", Gaps: [][2]int64{{4, 7}, {20, 20}},
			Across: []bool{false, true}, Overflow: 3, OverflowAcross: 1}},
	}
	for _, b := range []*Batch{first, second} {
		if err := db.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	samples, err := db.Samples("gws")
	if err != nil || len(samples) != 2 || samples[0].DroppedTotal != 7 || samples[1].DroppedTotal != 0 {
		t.Errorf("samples %+v, %v: want 7 dropped events at second 1, none (NULL) at 2", samples, err)
	}
	gaps, err := db.SubGapsAll()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(gaps) != fmt.Sprint(second.Gaps) {
		t.Errorf("gaps %+v, want the second batch's %+v", gaps, second.Gaps)
	}
	dials, err := db.SlotDialAccounts()
	if err != nil {
		t.Fatal(err)
	}
	if want := []SlotDials{first.Dials[1], second.Dials[0]}; fmt.Sprint(dials) != fmt.Sprint(want) {
		t.Errorf("dials %+v\nwant %+v", dials, want)
	}
	end := SlotDials{Lib: "gws", Slot: 0, Group: "g", Dials: 2, DialFails: 1, Statuses: map[string]int64{"429": 1}, Unrepairable: true, WireBytes: 1234}
	if err := db.SaveTruth(nil, []SlotDials{end}); err != nil {
		t.Fatal(err)
	}
	if dials, err = db.SlotDialAccounts(); err != nil {
		t.Fatal(err)
	}
	if want := []SlotDials{first.Dials[1], end}; fmt.Sprint(dials) != fmt.Sprint(want) {
		t.Errorf("after the end's accounts: %+v\nwant %+v", dials, want)
	}
	if (&Batch{}).Empty() != true || second.Empty() {
		t.Error("Empty: a batch of dial accounts and ranges only is not empty; an empty one is")
	}
}

// TestWorkerCPUUnreaped: the sampled CPU of processes never reaped is
// stored with the worker.
func TestWorkerCPUUnreaped(t *testing.T) {
	db, _ := open(t)
	if err := db.UpsertWorker(Worker{Lib: "gws", Module: "m", SampledCPU: 1.5, CPUUnreaped: 0.5, RusageUser: 0.8, RusageSys: 0.2}); err != nil {
		t.Fatal(err)
	}
	ws, err := db.Workers()
	if err != nil || len(ws) != 1 || ws[0].CPUUnreaped != 0.5 || ws[0].SampledCPU != 1.5 {
		t.Errorf("workers %+v, %v; want gws with 0.5 s of its 1.5 s sampled unreaped", ws, err)
	}
}

// TestShownStatus: a run recorded as running is shown so while a process
// owns its directory, and as ended without its status once none does (its
// controller died, or could not record its end); any other status as
// recorded.
func TestShownStatus(t *testing.T) {
	db, path := open(t)
	dir := filepath.Dir(path)
	l, err := rundir.TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	running := Run{Status: StatusRunning}
	if got := db.ShownStatus(running); got != StatusRunning {
		t.Errorf("owned: %q, want running", got)
	}
	l.Release()
	if got := db.ShownStatus(running); got != StatusNoEnd {
		t.Errorf("not owned: %q, want %q", got, StatusNoEnd)
	}
	if got := db.ShownStatus(Run{Status: "done"}); got != "done" {
		t.Errorf("done: %q", got)
	}
}
