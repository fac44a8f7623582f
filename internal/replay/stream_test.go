package replay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

var wantKeys = map[string]string{
	"trade":           "e,E,s,t,p,q,T,m,M",
	"blockTrade":      "e,E,s,t,p,q,T",
	"aggTrade":        "e,E,s,a,p,q,f,l,T,m,M",
	"bookTicker":      "u,s,b,B,a,A",
	"depth":           "e,E,s,U,u,b,a",
	"depthN":          "lastUpdateId,bids,asks",
	"kline":           "e,E,s,k",
	"kline.k":         "t,T,s,i,f,L,o,c,h,l,v,n,x,q,V,Q,B",
	"ticker":          "e,E,s,p,P,w,x,c,Q,b,B,a,A,o,h,l,v,q,O,C,F,L,n",
	"windowTicker":    "e,E,s,p,P,o,h,l,c,w,v,q,O,C,F,L,n",
	"miniTicker":      "e,E,s,c,o,h,l,v,q",
	"avgPrice":        "e,E,s,i,w,T",
	"referencePrice":  "e,s,r,t",
	"windowTickerArr": "",
	"miniTickerArr":   "",
}

// decimalFields are the fields that must be 8-decimal strings, per kind.
var decimalFields = map[string][]string{
	"trade": {"p", "q"}, "blockTrade": {"p", "q"}, "aggTrade": {"p", "q"}, "bookTicker": {"b", "B", "a", "A"},
	"kline.k":      {"o", "c", "h", "l", "v", "q", "V", "Q"},
	"ticker":       {"p", "w", "x", "c", "Q", "b", "B", "a", "A", "o", "h", "l", "v", "q"},
	"windowTicker": {"p", "o", "h", "l", "c", "w", "v", "q"}, "miniTicker": {"c", "o", "h", "l", "v", "q"},
	"avgPrice": {"w"}, "referencePrice": {"r"},
}

type seqState struct {
	n              int
	e0, e          int64 // first and last E
	id, l          int64 // last t / a / u / lastUpdateId; last trade id of a range
	klineT, klineF int64
	klineClosed    bool
	finals         int
}

func TestStreamsShapeAndContinuity(t *testing.T) {
	s := startServer(t, Config{Replay: wire.Replay{Seed: 21, Speed: 10, Rates: map[string]float64{"blockTrade": 2}}})
	names := []string{
		"btcusdt@trade", "ethusdt@trade", "btcusdt@aggTrade", "btcusdt@bookTicker", "btcusdt@depth@100ms", "btcusdt@depth",
		"btcusdt@depth20@100ms", "btcusdt@depth5", "ethusdt@depth10@100ms", "btcusdt@kline_1s", "btcusdt@kline_1m",
		"btcusdt@kline_1d@+08:00", "btcusdt@ticker", "btcusdt@miniTicker", "btcusdt@ticker_1h", "!miniTicker@arr",
		"!ticker_4h@arr", "btcusdt@avgPrice", "btcusdt@referencePrice", "btcusdt@blockTrade",
	}
	c := dial(t, s, "/stream?streams="+strings.Join(names, "/"), "")
	lo := time.Now().Add(-time.Second) // ticks already due at subscription are skipped, not sent late
	msgs, err := readFor(c, 2500*time.Millisecond)
	hi := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]*seqState{}
	for _, m := range msgs {
		name, p := unwrap(t, m)
		st, err := binance.ParseStream(name)
		if err != nil {
			t.Fatal(err)
		}
		ss := states[name]
		if ss == nil {
			ss = &seqState{}
			states[name] = ss
		}
		checkEvent(t, name, st, p, ss, lo, hi)
		ss.n++
	}
	for _, n := range names {
		ss := states[n]
		if ss == nil || ss.n < 3 {
			t.Errorf("%s: too few messages (%v)", n, ss)
		}
	}
	// Rates follow Speed, measured on event time (a loaded machine delays
	// delivery, not the schedule): depth@100ms every 10 ms, 1000 ms cadences every 100 ms.
	for _, tc := range []struct {
		name     string
		min, max time.Duration // mean spacing of E
	}{
		{"btcusdt@depth@100ms", 9 * time.Millisecond, 12 * time.Millisecond}, // a few ticks skipped: book unchanged
		{"btcusdt@ticker", 95 * time.Millisecond, 105 * time.Millisecond},
		{"btcusdt@kline_1s", 95 * time.Millisecond, 105 * time.Millisecond},
		{"btcusdt@kline_1m", 190 * time.Millisecond, 210 * time.Millisecond},
		{"btcusdt@trade", time.Microsecond, 10 * time.Millisecond}, // 200/s plus bursts
	} {
		ss := states[tc.name]
		if ss.n < 3 {
			continue
		}
		mean := time.Duration(ss.e-ss.e0) * time.Millisecond / time.Duration(ss.n-1)
		if mean < tc.min || mean > tc.max {
			t.Errorf("%s at Speed 10: mean spacing %v over %d messages", tc.name, mean, ss.n)
		}
	}
	if ss := states["btcusdt@kline_1s"]; ss.e-ss.e0 >= 1100 && ss.finals < 1 {
		t.Errorf("kline_1s: no final x:true update in %d ms", ss.e-ss.e0)
	}
	if f := states["btcusdt@kline_1m"].finals; f > 1 {
		t.Errorf("kline_1m: %d final updates in 2.5 s", f)
	}
}

func checkEvent(t *testing.T, name string, st binance.Stream, p []byte, ss *seqState, lo, hi time.Time) {
	t.Helper()
	kind := st.Kind.String()
	if st.Kind == binance.KindMiniTickerArr || st.Kind == binance.KindWindowTickerArr {
		var arr []json.RawMessage
		if err := json.Unmarshal(p, &arr); err != nil || len(arr) == 0 {
			t.Fatalf("%s: %v %s", name, err, p)
		}
		elem := "miniTicker"
		if st.Kind == binance.KindWindowTickerArr {
			elem = "windowTicker"
		}
		for _, a := range arr {
			checkKeys(t, name, elem, a)
			if e := string(mustField(t, a, "e")); st.Kind == binance.KindWindowTickerArr && e != `"4hTicker"` {
				t.Fatalf("%s: e=%s", name, e)
			}
		}
		return
	}
	checkKeys(t, name, kind, p)
	if st.Kind.HasEventTime() {
		e := field(t, p, "E")
		if e < ss.e {
			t.Fatalf("%s: E went back %d -> %d", name, ss.e, e)
		}
		if at := time.UnixMilli(e); at.Before(lo) || at.After(hi) {
			t.Fatalf("%s: E %v outside the reading window %v..%v", name, at, lo, hi)
		}
		ss.e = e
		if ss.n == 0 {
			ss.e0 = e
		}
	}
	first := ss.n == 0
	switch st.Kind {
	case binance.KindTrade, binance.KindBlockTrade:
		id := field(t, p, "t")
		if !first && id != ss.id+1 {
			t.Fatalf("%s: t %d after %d", name, id, ss.id)
		}
		ss.id = id
	case binance.KindAggTrade:
		a, f, l := field(t, p, "a"), field(t, p, "f"), field(t, p, "l")
		if !first && (a != ss.id+1 || f != ss.l+1) || l < f {
			t.Fatalf("%s: a=%d f=%d l=%d after a=%d l=%d", name, a, f, l, ss.id, ss.l)
		}
		ss.id, ss.l = a, l
	case binance.KindDepthDiff:
		u0, u := field(t, p, "U"), field(t, p, "u")
		if !first && u0 != ss.id+1 || u < u0 {
			t.Fatalf("%s: U=%d u=%d after u=%d", name, u0, u, ss.id)
		}
		ss.id = u
	case binance.KindBookTicker:
		u := field(t, p, "u")
		if !first && u <= ss.id {
			t.Fatalf("%s: u %d after %d", name, u, ss.id)
		}
		ss.id = u
		if bid, ask := string(mustField(t, p, "b")), string(mustField(t, p, "a")); len(bid) == len(ask) && bid >= ask {
			t.Fatalf("%s: bid %s >= ask %s", name, bid, ask)
		}
	case binance.KindDepthPartial:
		var d struct {
			ID   int64       `json:"lastUpdateId"`
			Bids [][2]string `json:"bids"`
			Asks [][2]string `json:"asks"`
		}
		if err := json.Unmarshal(p, &d); err != nil {
			t.Fatal(err)
		}
		if !first && d.ID <= ss.id {
			t.Fatalf("%s: lastUpdateId %d after %d", name, d.ID, ss.id)
		}
		ss.id = d.ID
		if len(d.Bids) != st.Levels || len(d.Asks) != st.Levels {
			t.Fatalf("%s: %d bids %d asks", name, len(d.Bids), len(d.Asks))
		}
		for _, l := range append(d.Bids, d.Asks...) {
			for _, v := range l {
				if !eightDecimals.MatchString(v) {
					t.Fatalf("%s: level value %q", name, v)
				}
			}
		}
	case binance.KindKline:
		var k struct {
			K json.RawMessage `json:"k"`
		}
		_ = json.Unmarshal(p, &k)
		checkKeys(t, name, "kline.k", k.K)
		open, f, l, n := field(t, k.K, "t"), field(t, k.K, "f"), field(t, k.K, "L"), field(t, k.K, "n")
		x := string(mustField(t, k.K, "x")) == "true"
		if l-f+1 != n || n < 1 {
			t.Fatalf("%s: f=%d L=%d n=%d", name, f, l, n)
		}
		if !first {
			switch {
			case open == ss.klineT:
				if ss.klineClosed || f != ss.klineF || l < ss.l {
					t.Fatalf("%s: update after close or ids moved: f=%d L=%d after f=%d L=%d", name, f, l, ss.klineF, ss.l)
				}
			case open > ss.klineT:
				if !ss.klineClosed || f != ss.l+1 {
					t.Fatalf("%s: new kline f=%d after L=%d (closed=%v)", name, f, ss.l, ss.klineClosed)
				}
			default:
				t.Fatalf("%s: open time went back", name)
			}
		}
		if x {
			ss.finals++
		}
		ss.klineT, ss.klineF, ss.l, ss.klineClosed = open, f, l, x
	case binance.KindTicker, binance.KindWindowTicker:
		f, l, n := field(t, p, "F"), field(t, p, "L"), field(t, p, "n")
		if n != l-f+1 || !first && l < ss.l {
			t.Fatalf("%s: F=%d L=%d n=%d after L=%d", name, f, l, n, ss.l)
		}
		ss.l = l
	}
}

func checkKeys(t *testing.T, name, kind string, p []byte) {
	t.Helper()
	if got := strings.Join(keys(t, p), ","); got != wantKeys[kind] {
		t.Fatalf("%s: keys %s, want %s", name, got, wantKeys[kind])
	}
	for _, f := range decimalFields[kind] {
		var v string
		if err := json.Unmarshal(mustField(t, p, f), &v); err != nil || !eightDecimals.MatchString(v) {
			t.Fatalf("%s: %s=%s", name, f, mustField(t, p, f))
		}
	}
	if strings.ContainsAny(string(p), " \n\t") {
		t.Fatalf("%s: not compact: %s", name, p)
	}
}

func mustField(t *testing.T, p []byte, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatalf("%v: %s", err, p)
	}
	v, ok := m[key]
	if !ok {
		t.Fatalf("no field %s in %s", key, p)
	}
	return v
}
