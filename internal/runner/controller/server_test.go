package controller

import (
	"slices"
	"testing"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/transport/proxytest"
)

// TestControllerRESTThroughProxy: the controller's own REST requests to a remote base (the
// symbol list) take the profile's proxy, like the workers' connections.
func TestControllerRESTThroughProxy(t *testing.T) {
	srv, err := replay.New(replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	px, err := proxytest.Start("http", "soak", "p@ss", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c := &controller{Lifecycle: &Lifecycle{o: Options{Profile: &profile.Profile{Proxy: px.URL()}}}}
	client, err := c.httpClient(true)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get("http://" + srv.Addr() + "/api/v3/ticker/24hr")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || px.Stats().Tunnels[srv.Addr()] != 1 {
		t.Fatalf("status %d, tunnels %v: want 200 through one tunnel", resp.StatusCode, px.Stats().Tunnels)
	}
	client.CloseIdleConnections()
}

// TestServerRowsSameTag: a restarted worker numbers its attempts from 0
// again, so the server can hold two connections with one tag. Their counts
// are added, not the later written over the earlier; other tags stay apart.
func TestServerRowsSameTag(t *testing.T) {
	conns := []replay.ConnStats{
		{Tag: "gws/0/0", WireBytes: 1000, WireBytesReadable: 990, Extensions: "permessage-deflate",
			Streams: map[string]replay.StreamStats{"btcusdt@trade": {Sent: 10, Bytes: 100, FirstSeq: 5, LastSeq: 14}, "x@kline_1m": {}}},
		{Tag: "gorilla/0/0", WireBytes: 7, WireBytesReadable: 7,
			Streams: map[string]replay.StreamStats{"btcusdt@trade": {Sent: 1, Bytes: 9, FirstSeq: 5, LastSeq: 5}}},
		{Tag: "gws/0/0", WireBytes: 500, WireBytesReadable: 500, // the restarted worker's first connection
			Streams: map[string]replay.StreamStats{"btcusdt@trade": {Sent: 4, Bytes: 40, FirstSeq: 30, LastSeq: 33}, "x@kline_1m": {Sent: 2, Bytes: 20, FirstSeq: 7, LastSeq: 8}}},
	}
	rows, ws := serverRows(conns)
	want := []store.ServerCount{
		{Tag: "gws/0/0", Stream: "btcusdt@trade", Sent: 14, Bytes: 140, FirstSeq: 5, LastSeq: 33},
		{Tag: "gws/0/0", Stream: "x@kline_1m", Sent: 2, Bytes: 20, FirstSeq: 7, LastSeq: 8}, // the first sent none: its 0s are not ids
		{Tag: "gorilla/0/0", Stream: "btcusdt@trade", Sent: 1, Bytes: 9, FirstSeq: 5, LastSeq: 5},
	}
	if !slices.Equal(rows, want) {
		t.Errorf("counts %+v, want %+v", rows, want)
	}
	wantWire := []store.ServerWire{{Tag: "gws/0/0", WireBytes: 1500, Readable: 1490, Extensions: "permessage-deflate"}, {Tag: "gorilla/0/0", WireBytes: 7, Readable: 7}}
	if !slices.Equal(ws, wantWire) {
		t.Errorf("wire %+v, want %+v", ws, wantWire)
	}
}
