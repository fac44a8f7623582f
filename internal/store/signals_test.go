package store

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// TestSignals: what schemaSignals adds (a fault event's kind, a worker's
// dropped events, p99.9 and negative latencies, a subscription's regressions
// and ids lost across reconnects, the lost charges split by where) reads back
// as written; a database from before it opens read-only with those fields 0,
// the split unknown and a fault's kind taken from its detail, and a writer
// migrates it to the same reading.
func TestSignals(t *testing.T) {
	db, _ := open(t)
	w := Worker{Lib: "gws", SampledCPU: 1, LatCount: 10, LatP999: 900, LatNeg: 3, DroppedEvents: 7}
	if err := db.UpsertWorker(w); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 20, 16, 0, 0, 0, time.UTC)
	ev := Event{Lib: "gws", TS: at, Sec: 1, Kind: wire.EventFault, Fault: wire.FaultDrop, Detail: "drop n=3; 1 connections"}
	ss := StreamSample{Lib: "gws", Group: "g", Stream: "btcusdt@trade", Sec: 10, LostTotal: 12, RegressTotal: 2, LostAcrossTotal: 9}
	if err := db.Write(&Batch{Events: []Event{ev}, StreamSamples: []StreamSample{ss}}); err != nil {
		t.Fatal(err)
	}
	split := LostCharge{Lib: "gws", Stream: "btcusdt@trade", Lost: 12, Library: 5, Source: 7, Gaps: [][2]int64{{1, 12}},
		LostAcross: 9, LibraryAcross: 4, SourceAcross: 5}
	split.SetConnected()
	unsplit := LostCharge{Lib: "gws", Slot: 1, Stream: "btcusdt@trade", Lost: 1, Library: 1, Gaps: [][2]int64{{4, 4}}}
	if err := db.SaveTruth([]LostCharge{split, unsplit}, nil); err != nil {
		t.Fatal(err)
	}
	if split.LostConnected != 3 || split.LibraryConnected != 1 || split.SourceConnected != 2 {
		t.Fatalf("SetConnected: %+v", split)
	}
	ws, err := db.Workers()
	if err != nil || len(ws) != 1 || ws[0].LatP999 != 900 || ws[0].LatNeg != 3 || ws[0].DroppedEvents != 7 {
		t.Errorf("workers %+v, %v: want p99.9 900, 3 negative, 7 dropped", ws, err)
	}
	evs, err := db.Events("")
	if err != nil || len(evs) != 1 || evs[0].Fault != wire.FaultDrop {
		t.Errorf("events %+v, %v: want one drop fault", evs, err)
	}
	latest, err := db.LatestStreamSamples()
	if err != nil || len(latest) != 1 || latest[0].RegressTotal != 2 || latest[0].LostAcrossTotal != 9 {
		t.Errorf("stream samples %+v, %v: want 2 regressions, 9 lost across", latest, err)
	}
	var each []StreamSample
	if err := db.EachStreamSample(func(x *StreamSample) error { each = append(each, *x); return nil }); err != nil || !reflect.DeepEqual(each, latest) {
		t.Errorf("EachStreamSample %+v, %v: want %+v", each, err, latest)
	}
	lost, err := db.LostCharges()
	if err != nil || !reflect.DeepEqual(lost, []LostCharge{split, unsplit}) {
		t.Errorf("lost charges %+v, %v:\nwant %+v", lost, err, []LostCharge{split, unsplit})
	}

	// A database of the version before schemaSignals.
	path := filepath.Join(t.TempDir(), "soak.db")
	raw, err := sql.Open("sqlite3", dsn(path, url.Values{"_journal_mode": {"WAL"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:signalsVersion-1] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf(`PRAGMA user_version = %d;
		INSERT INTO workers (lib, module, version, pid, exit_code, rusage_user_s, rusage_sys_s, sampled_cpu_s, maxrss, lat_count, lat_p50_us, lat_p99_us, lat_max_us)
		VALUES ('gws', '', '', 1, 0, 0.5, 0, 0.5, 0, 0, 0, 0, 0);
		INSERT INTO events (lib, ts_ns, sec, kind, slot, grp, stream, code, detail, dur_ms)
		VALUES ('gws', 1, 1, 'fault', 0, '', '', 0, 'half_open for=2s; 1 connections', 0),
		       ('gws', 2, 2, 'disconnected', 0, '', '', 1006, 'abnormal: EOF', 0),
		       ('', 3, 3, 'fault', -1, '', '', 0, 'reset; hit no connection', 0);
		INSERT INTO lost (lib, slot, grp, stream, lost, lost_library, lost_source, gap_overflow, gaps_json)
		VALUES ('gws', 0, 'g', 'btcusdt@trade', 4, 4, 0, 0, '[[1,4]]')`, signalsVersion-1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	check := func(db *DB) {
		t.Helper()
		evs, err := db.Events("")
		if err != nil || len(evs) != 3 || evs[0].Fault != wire.FaultHalfOpen || evs[1].Fault != "" || evs[2].Fault != wire.FaultReset {
			t.Errorf("events %+v, %v: want the fault's kind from its detail, none for the disconnect", evs, err)
		}
		ws, err := db.Workers()
		if err != nil || len(ws) != 1 || ws[0].DroppedEvents != 0 || ws[0].LatP999 != 0 {
			t.Errorf("workers %+v, %v", ws, err)
		}
		lost, err := db.LostCharges()
		if err != nil || len(lost) != 1 || lost[0].Split || lost[0].Lost != 4 {
			t.Errorf("lost %+v, %v: want 4 lost, split unknown", lost, err)
		}
		if _, err := db.LatestStreamSamples(); err != nil {
			t.Error(err)
		}
		if err := db.EachEvent(func(*Event) error { return nil }); err != nil {
			t.Error(err)
		}
		if err := db.EachStreamSample(func(*StreamSample) error { return nil }); err != nil {
			t.Error(err)
		}
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	check(ro)
	ro.Close()
	rw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	check(rw)
}
