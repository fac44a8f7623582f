package controller

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

func TestFaultEvents(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := start.Add(1500 * time.Millisecond)
	log := []wire.Applied{
		{Fault: wire.Fault{Kind: wire.FaultClose, Code: 1011}, At: at, Conns: []string{"gws/0/1", "gorilla/0/1", "gws/1/1", "#7"}},
		{Fault: wire.Fault{Kind: wire.FaultDrop, N: 3, Streams: []string{"btcusdt@trade"}}, At: at, Conns: []string{"coder/2/1"}},
		{Fault: wire.Fault{Kind: wire.FaultReject, N: 1, Status: 429}, At: at, Conns: []string{"fasthttp/0/2"}},
		{Fault: wire.Fault{Kind: wire.FaultReject, N: 1, Status: 503}, At: at, Conns: []string{"127.0.0.1:4000"}},
	}
	got := faultEvents(log, []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"}, start)
	ev := func(lib string, code int, stream, detail string) store.Event {
		kind, _, _ := strings.Cut(detail, " ")
		return store.Event{Lib: lib, TS: at, Sec: 1.5, Kind: wire.EventFault, Fault: wire.FaultKind(kind), Code: code, Stream: stream, Detail: detail}
	}
	want := []store.Event{
		ev("gorilla", 1011, "", "close code=1011; 1 connections"),
		ev("gws", 1011, "", "close code=1011; 2 connections"),
		ev("coder", 0, "btcusdt@trade", "drop n=3 streams=btcusdt@trade; 1 connections"),
		ev("fasthttp", 429, "", "reject n=1 status=429; 1 handshakes rejected"),
		ev("", 503, "", "reject n=1 status=503; hit no connection"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// TestRejectRecordedAsItHits: a reject fault's log entry fills in as
// handshakes are rejected, after the poll that first saw it armed: each
// library gets its one event when one of its handshakes shows up rejected
// (a poll every second must not record it as having hit nobody), and a
// reject that hit nobody by the end is recorded run-wide then; any other
// fault at once.
func TestRejectRecordedAsItHits(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := start.Add(19 * time.Second)
	c := testController(t)
	c.plan = &wire.Plan{Start: start, Columns: []wire.Column{wire.LibraryColumn("gorilla"), wire.LibraryColumn("gws")}} // the run's columns
	reject := wire.Applied{Fault: wire.Fault{Kind: wire.FaultReject, N: 2, Status: 429}, At: at}
	closeF := wire.Applied{Fault: wire.Fault{Kind: wire.FaultClose, Code: 1011}, At: at, Conns: []string{"gws/1/0", "gorilla/1/0"}}
	unused := wire.Applied{Fault: wire.Fault{Kind: wire.FaultReject, N: 1, Status: 503}, At: at}
	kinds := func() []string {
		var out []string
		for _, e := range c.batch.Events {
			out = append(out, fmt.Sprintf("%s %s %d", e.Lib, e.Fault, e.Code))
		}
		c.batch.Events = nil
		return out
	}
	c.recordFaults([]wire.Applied{reject, closeF}, false)
	if got := kinds(); !slices.Equal(got, []string{"gorilla close 1011", "gws close 1011"}) {
		t.Errorf("first poll: %v; want the close only (the reject hit nobody yet)", got)
	}
	reject.Conns = []string{"gws/1/1"}
	c.recordFaults([]wire.Applied{reject, closeF}, false)
	if got := kinds(); !slices.Equal(got, []string{"gws reject 429"}) {
		t.Errorf("second poll: %v; want gws's reject", got)
	}
	reject.Conns = []string{"gws/1/1", "gws/1/2", "gorilla/1/1"}
	c.recordFaults([]wire.Applied{reject, closeF, unused}, true)
	if got := kinds(); !slices.Equal(got, []string{"gorilla reject 429", " reject 503"}) {
		t.Errorf("last poll: %v; want gorilla's reject, and the unused one run-wide", got)
	}
}
