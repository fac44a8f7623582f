package worker

import (
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/binance"
)

// shapeCases are payloads (the data of a combined message) of each kind,
// with IDS and EVT standing for the id and event time digits.
var shapeCases = []struct {
	kind    binance.Kind
	payload string
	learns  bool // a shape is learnt (false: the kind's layout varies, or no run to read)
}{
	{binance.KindAggTrade, `{"e":"aggTrade","E":EVT,"s":"BTCUSDT","a":IDS,"p":"67123.45000000","q":"0.00123000","f":IDS,"l":IDS,"T":1784563200122,"m":true,"M":true}`, true},
	{binance.KindTrade, `{"e":"trade","E":EVT,"s":"BNBBTC","t":IDS,"p":"0.001","q":"100","T":123456785,"m":true,"M":true}`, true},
	{binance.KindDepthDiff, `{"e":"depthUpdate","E":EVT,"s":"BNBBTC","U":IDS,"u":IDS,"b":[["0.0024","10"]],"a":[["0.0026","100"]]}`, true},
	{binance.KindBookTicker, `{"u":IDS,"s":"BNBUSDT","b":"25.35190000","B":"31.21000000","a":"25.36520000","A":"40.66000000"}`, true},
	{binance.KindDepthPartial, `{"lastUpdateId":IDS,"bids":[["0.0024","10"]],"asks":[["0.0026","100"]]}`, true},
	// a kline's identity is in its nested object: scanned in full
	{binance.KindKline, `{"e":"kline","E":EVT,"s":"BNBBTC","k":{"t":123400000,"T":123460000,"s":"BNBBTC","i":"1m","f":IDS,"L":IDS,"o":"0.0010","c":"0.0020","h":"0.0025","l":"0.0015","v":"1000","n":100,"x":false,"q":"1.0000","V":"500","Q":"0.500","B":"123456"}}`, false},
	// keys in another order: the shape follows the order learnt
	{binance.KindAggTrade, `{"a":IDS,"E":EVT,"e":"aggTrade","s":"BTCUSDT"}`, true},
	// an id that is not an integer: Scan reads on past the event time, so no shape
	{binance.KindTrade, `{"e":"trade","E":EVT,"s":"BNBBTC","t":"IDS","p":"0.001"}`, false},
}

func shapeMsg(payload string, id, evt string) []byte {
	return []byte(strings.NewReplacer("IDS", id, "EVT", evt).Replace(payload))
}

// TestShape: a shape learnt from one message reads the next ones of its
// layout exactly as binance.Scan does, and refuses (to a full scan) those
// that differ: another digit count, a leading zero, a number that is not a
// plain integer, another symbol.
func TestShape(t *testing.T) {
	for _, c := range shapeCases {
		var s shape
		first := shapeMsg(c.payload, "100000", "1784563200123")
		var want binance.Fields
		if !binance.Scan(first, c.kind, &want) {
			t.Fatalf("%v: Scan refused %s", c.kind, first)
		}
		if got := s.learn(first, c.kind, want); got != c.learns {
			t.Errorf("%v %s: learnt %v, want %v", c.kind, first, got, c.learns)
			continue
		}
		for _, next := range []struct {
			id, evt string
			reads   bool // false: a run the shape must refuse
		}{
			{"100001", "1784563200124", true},
			{"999999", "1784563299999", true},
			{"1000000", "1784563200124", true},        // one digit more: still a digit run
			{"7", "9", true},                          // as few as one
			{"0100001", "1784563200124", false},       // a leading zero: not a JSON integer
			{"100001.5", "1784563200124", false},      // not a plain integer
			{"-100001", "1784563200124", false},       // negative
			{"100001", "17845632001240000000", false}, // too long for a shape
		} {
			if !next.reads && next.id == "100001" && !strings.Contains(c.payload, "EVT") {
				next.reads = true // only the event time changed, and the kind has none
			}
			m := shapeMsg(c.payload, next.id, next.evt)
			var a, b binance.Fields
			okScan := binance.Scan(m, c.kind, &a)
			read := s.read(m, &b)
			if read != (next.reads && c.learns) {
				t.Errorf("%v %s: read %v, want %v", c.kind, m, read, next.reads && c.learns)
			}
			if read && (!okScan || a != b) {
				t.Errorf("%v %s: shape read %+v, Scan %v %+v", c.kind, m, b, okScan, a)
			}
		}
	}
	// The symbol comes before the aggTrade's id: another symbol is another layout.
	var s shape
	c := shapeCases[0]
	first := shapeMsg(c.payload, "100000", "1784563200123")
	var want, b binance.Fields
	if !binance.Scan(first, c.kind, &want) || !s.learn(first, c.kind, want) {
		t.Fatal("no shape of an aggTrade")
	}
	if m := []byte(strings.Replace(string(first), `"s":"BTCUSDT"`, `"s":"ETHUSDT"`, 1)); s.read(m, &b) {
		t.Errorf("read a message of another layout: %s", m)
	}
}

// TestShapeScanData: scanData gives Scan's fields for a kline (no shape)
// and backs off from trying to learn one: after a failed try it waits, and
// the wait doubles up to its bound.
func TestShapeScanData(t *testing.T) {
	var s shape
	c := shapeCases[5]
	for i := range 10000 {
		m := shapeMsg(c.payload, "1000"+string(rune('0'+i%10)), "1784563200123")
		var a, b binance.Fields
		if !binance.Scan(m, c.kind, &a) || !s.scanData(m, c.kind, &b) || a != b {
			t.Fatalf("message %d: scanData %+v, Scan %+v", i, b, a)
		}
	}
	if s.ok || s.backoff != maxLearnBackoff {
		t.Errorf("kline: shape %v, backoff %d, want none and %d", s.ok, s.backoff, maxLearnBackoff)
	}
	// Trying to learn allocates nothing once its buffers have grown: every
	// message here is a try.
	m := shapeMsg(c.payload, "100000", "1784563200123")
	var f binance.Fields
	allocs := testing.AllocsPerRun(100, func() {
		s.wait = 0
		s.scanData(m, c.kind, &f)
	})
	if allocs != 0 {
		t.Errorf("a try to learn allocates %.1f", allocs)
	}
}

// FuzzShape: whatever message follows, a shape that reads it reads what
// binance.Scan does.
func FuzzShape(f *testing.F) {
	for i, c := range shapeCases {
		f.Add(i, shapeMsg(c.payload, "100000", "1784563200123"), shapeMsg(c.payload, "100001", "1784563200124"))
	}
	f.Fuzz(func(t *testing.T, i int, learnt, next []byte) {
		c := shapeCases[(i%len(shapeCases)+len(shapeCases))%len(shapeCases)]
		var want binance.Fields
		if !binance.Scan(learnt, c.kind, &want) {
			return
		}
		var s shape
		if !s.learn(learnt, c.kind, want) {
			return
		}
		var a, b binance.Fields
		if s.read(next, &b) && (!binance.Scan(next, c.kind, &a) || a != b) {
			t.Fatalf("learnt from %q; %q: shape read %+v, Scan %+v", learnt, next, b, a)
		}
	})
}
