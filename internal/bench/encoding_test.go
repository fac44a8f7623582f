package bench

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/firehose"
)

// TestClientTruthEncoded: every path (five libraries across them, raw and the
// ceiling) reads the depth20 firehose in msgpack and packed: exactly the
// messages and bytes sent, sequence checked, every message decoded; the wire
// bytes per message are the encoded frames'.
func TestClientTruthEncoded(t *testing.T) {
	sc, err := firehose.Lookup("depth20")
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
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
		Streams: sc.Streams, N: n, PayloadBytes: st.PayloadBytes, WireBytes: st.WireBytes, EncodedWireBytes: map[string]int64{}}
	for _, e := range []codec.Encoding{codec.Msgpack, codec.Packed} {
		if info.EncodedWireBytes[e.String()], err = srv.WireBytes(e); err != nil {
			t.Fatal(err)
		}
	}
	type run struct{ lib, path string }
	runs := []run{{"gorilla", PathDecode}, {"gobwas", PathFull}, {"coder", PathDecode}, {"gws", PathFull}, {"fasthttp", PathBare},
		{RawLib, PathRaw}, {RawLib, PathCeiling}}
	for _, e := range []string{"msgpack", "packed"} {
		for _, rn := range runs {
			t.Run(e+"/"+rn.lib+"/"+rn.path, func(t *testing.T) {
				cs := ClientSpec{URL: info.URL, Lib: rn.lib, Path: rn.path, Streams: info.Streams, Encoding: e}
				if rn.path == PathCeiling {
					cs.SkipBytes = info.EncodedWireBytes[e] + 4
				}
				r := RunClient(context.Background(), cs)
				check(context.Background(), &r, info)
				if !r.Valid || r.Messages != n || r.PayloadBytes != r.SentPayload || r.SentWire != info.EncodedWireBytes[e] {
					t.Fatalf("result %+v: want valid, %d messages, the bytes sent, wire %d", r, n, info.EncodedWireBytes[e])
				}
				if r.PayloadBytes >= st.PayloadBytes {
					t.Errorf("%s payload %d bytes, not below json's %d", e, r.PayloadBytes, st.PayloadBytes)
				}
			})
		}
	}
}

// TestBinaryDecode: the binary decode path fills the typed events with the
// JSON's values (packed levels within float32's rounding), for every kind the
// firehose sends.
func TestBinaryDecode(t *testing.T) {
	for _, name := range []string{"aggTrade", "kline", "depth20", "depth", "mix", "tickerArr", "book"} {
		sc, _ := firehose.Lookup(name)
		n := 50
		if name == "tickerArr" {
			n = 2
		}
		jb, err := firehose.PrepareEncoded(sc, n, 3, true, codec.JSON)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []codec.Encoding{codec.Msgpack, codec.Packed} {
			d := newBinDecoder()
			var jd decoder
			jd.next = &counter{}
			for i, p := range frames(t, jb.Wire()) {
				m, err := codec.Append(nil, p, e)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.decode(m); err != nil {
					t.Fatalf("%s %v message %d: %v", name, e, i, err)
				}
				jd.OnMessage(true, p)
				if jd.errs > 0 {
					t.Fatalf("json decode failed")
				}
				if strings.HasSuffix(d.stream, "@aggTrade") {
					if d.agg.AggID != jd.agg.AggID || d.agg.Price != num(t, jd.agg.Price) || d.agg.Maker != jd.agg.Maker {
						t.Fatalf("aggTrade %+v, json %+v", d.agg, jd.agg)
					}
				}
				switch {
				case name == "depth20":
					if len(d.part.Bids) != 20 || d.part.LastUpdateID != jd.part.LastUpdateID || !near(d.part.Asks[19][0], num(t, jd.part.Asks[19][0]), e) {
						t.Fatalf("depth20 %+v, json %+v", d.part, jd.part)
					}
				case name == "book":
					if len(d.seed.Asks) != 20 || d.seed.Seq != jd.seed.Seq || d.seed.TS != jd.seed.TS || !near(d.seed.Bids[7][0], jd.seed.Bids[7][0], e) {
						t.Fatalf("book %+v, json %+v", d.seed, jd.seed)
					}
				case name == "depth":
					if len(d.diff.Bids) != len(jd.diff.Bids) || d.diff.Final != jd.diff.Final || !near(d.diff.Bids[3][1], num(t, jd.diff.Bids[3][1]), e) {
						t.Fatalf("depth diff %d levels, json %d", len(d.diff.Bids), len(jd.diff.Bids))
					}
				case name == "kline":
					if d.kl.K.Last != jd.kl.K.Last || d.kl.K.Close != num(t, jd.kl.K.Close) || d.kl.K.Interval != jd.kl.K.Interval {
						t.Fatalf("kline %+v, json %+v", d.kl.K, jd.kl.K)
					}
				case name == "tickerArr":
					if len(d.ticks) != len(jd.ticks) || d.ticks[7].Count != jd.ticks[7].Count || d.ticks[7].Symbol != jd.ticks[7].Symbol {
						t.Fatalf("%d tickers, json %d", len(d.ticks), len(jd.ticks))
					}
				}
			}
		}
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// near: equal in msgpack, within float32's rounding when packed.
func near(got, want float64, e codec.Encoding) bool {
	if e == codec.Msgpack {
		return got == want
	}
	return math.Abs(got-want) <= math.Abs(want)*0x1p-24
}

// frames splits unmasked server frames, each a whole message, into payloads.
func frames(t *testing.T, w []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(w) > 0 {
		n, h := int(w[1]&0x7f), 2
		switch n {
		case 126:
			n, h = int(w[2])<<8|int(w[3]), 4
		case 127:
			n, h = 0, 10
			for _, c := range w[2:10] {
				n = n<<8 | int(c)
			}
		}
		out = append(out, w[h:h+n])
		w = w[h+n:]
	}
	return out
}
