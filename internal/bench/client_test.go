package bench

import (
	"context"
	"testing"

	"github.com/wssoak/wssoak/internal/firehose"
)

// TestClientTruth runs every path in this process against a firehose and
// checks each result against the firehose's stats; a result that differs
// from what was sent is marked invalid.
func TestClientTruth(t *testing.T) {
	for _, name := range []string{"aggTrade", "mix"} {
		sc, err := firehose.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		const n = 500
		srv, err := firehose.New(firehose.Config{Scenario: sc, N: n, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Listen("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		st := srv.Stats()
		info := ServerInfo{Addr: srv.Addr(), URL: srv.URL(), StatsURL: "http://" + srv.Addr() + firehose.StatsPath,
			Streams: sc.Streams, N: n, PayloadBytes: st.PayloadBytes, WireBytes: st.WireBytes}
		type run struct{ lib, path string }
		runs := []run{{"gorilla", PathBare}, {"gobwas", PathFull}, {"gws", PathDecode}, {RawLib, PathRaw}, {RawLib, PathCeiling}}
		for _, rn := range runs {
			t.Run(name+"/"+rn.lib+"/"+rn.path, func(t *testing.T) {
				cs := ClientSpec{URL: info.URL, Lib: rn.lib, Path: rn.path, Streams: info.Streams}
				if rn.path == PathCeiling {
					cs.SkipBytes = info.WireBytes + 4
				}
				r := RunClient(context.Background(), cs)
				check(context.Background(), &r, info)
				if !r.Valid || r.Messages != n || r.Messages != r.SentMessages || r.PayloadBytes != r.SentPayload || r.PayloadBytes != st.PayloadBytes {
					t.Fatalf("result %+v: want valid, %d messages and %d bytes as sent", r, n, st.PayloadBytes)
				}
				if r.Syscr == 0 || r.Rchar == 0 || r.WallNS <= 0 || r.MaxRSSKiB == 0 || r.Runtime.GOMAXPROCS == 0 {
					t.Errorf("result %+v: want reads, bytes, wall time, RSS and the runtime measured", r)
				}
				// One message fewer than sent is a lie the check must catch.
				r.Messages--
				r.Valid, r.Invalid = false, ""
				check(context.Background(), &r, info)
				if r.Valid || r.Invalid == "" {
					t.Errorf("a run one message short: valid %v (%q), want invalid", r.Valid, r.Invalid)
				}
			})
		}
	}
}
