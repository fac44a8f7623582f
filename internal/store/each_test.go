package store

import (
	"errors"
	"reflect"
	"testing"
)

// The streaming readers return what the slice readers return, in the same
// order, and stop at the callback's first error.
func TestEachMatchesSliceReaders(t *testing.T) {
	db, _ := open(t)
	b := secondBatch(10, []string{"gws", "coder"}, 4, 10)
	b.Samples = append(b.Samples, workerHalf(full("gws", 11)), procHalf(full("coder", 11)))
	b.Events = []Event{{Lib: "gws", TS: at(2), Sec: 2, Kind: "stall", Detail: "x"}, {Lib: "", TS: at(1), Sec: 1, Kind: "fault"}}
	b.Host = []HostSample{{Sec: 10, TS: at(10), Load1: 1}}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(secondBatch(20, []string{"gws", "coder"}, 4, 10)); err != nil {
		t.Fatal(err)
	}
	collectEach := func(each func(func(*Sample) error) error) []Sample {
		var out []Sample
		if err := each(func(s *Sample) error { out = append(out, *s); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, _ := db.Samples("")
	if got := collectEach(db.EachSample); !reflect.DeepEqual(got, want) || len(got) != 6 {
		t.Errorf("EachSample = %d rows %+v\nwant %d rows", len(got), got, len(want))
	}
	var evs []Event
	if err := db.EachEvent(func(e *Event) error { evs = append(evs, *e); return nil }); err != nil {
		t.Fatal(err)
	}
	if wantEv, _ := db.Events(""); !reflect.DeepEqual(evs, wantEv) {
		t.Errorf("EachEvent = %+v, want %+v", evs, wantEv)
	}
	var hs []HostSample
	if err := db.EachHostSample(func(h *HostSample) error { hs = append(hs, *h); return nil }); err != nil {
		t.Fatal(err)
	}
	if wantH, _ := db.HostSamples(); !reflect.DeepEqual(hs, wantH) {
		t.Errorf("EachHostSample = %+v, want %+v", hs, wantH)
	}
	var ss []StreamSample
	if err := db.EachStreamSample(func(s *StreamSample) error { ss = append(ss, *s); return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Count("stream_samples"); err != nil || int64(len(ss)) != n || n != 8 {
		t.Errorf("EachStreamSample gave %d rows; table has %d (%v), want 8", len(ss), n, err)
	}
	for i := 1; i < len(ss); i++ {
		if ss[i].Sec < ss[i-1].Sec {
			t.Fatalf("stream samples not in sec order at %d", i)
		}
	}
	latest, _ := db.LatestStreamSamples()
	for _, l := range latest {
		if l.Sec != 20 {
			t.Errorf("latest %+v not at sec 20", l)
		}
	}
	stop := errors.New("stop")
	calls := 0
	if err := db.EachSample(func(*Sample) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("EachSample with a failing callback: err %v after %d calls; want stop after 1", err, calls)
	}
	if _, err := db.Count("sqlite_master; DROP TABLE samples"); err == nil {
		t.Errorf("Count of an unknown table: no error")
	}
}

func TestVerdicts(t *testing.T) {
	db, _ := open(t)
	vs := []Verdict{
		{Lib: "gws", Threshold: "max_lost", Value: 3, Limit: 0, Unit: "messages", Broken: true, Ord: 0},
		{Lib: "coder", Threshold: "max_lost", Value: 0, Limit: 0, Unit: "messages", Ord: 0},
		{Lib: "coder", Threshold: "max_rss_growth", Value: 1.5e6, Limit: 50e6, Unit: "bytes", Ord: 1},
	}
	if err := db.SaveVerdicts(vs); err != nil {
		t.Fatal(err)
	}
	got, err := db.Verdicts()
	want := []Verdict{vs[1], vs[0], vs[2]}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Verdicts() = %+v, %v\nwant %+v", got, err, want)
	}
	if err := db.SaveVerdicts(vs[:1]); err != nil { // replaces, not appends
		t.Fatal(err)
	}
	if got, _ := db.Verdicts(); len(got) != 1 {
		t.Errorf("after a second save: %d verdicts, want 1", len(got))
	}
}
