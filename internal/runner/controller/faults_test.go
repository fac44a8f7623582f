package controller

import (
	"reflect"
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
