package binance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// frame is one real-shaped payload with the stream it
// belongs to and the fields Scan must find in it.
type frame struct {
	name   string
	stream string
	raw    string
	want   Fields
}

var frames = []frame{
	{
		name:   "trade",
		stream: "btcusdt@trade",
		raw:    `{"e":"trade","E":1784563200123,"s":"BTCUSDT","t":5234567890,"p":"67123.45000000","q":"0.00123000","T":1784563200122,"m":true,"M":true}`,
		want:   Fields{E: 1784563200123, First: 5234567890, Last: 5234567890, HasSeq: true},
	},
	{
		name:   "trade microseconds",
		stream: "btcusdt@trade",
		raw:    `{"e":"trade","E":1784563200123456,"s":"BTCUSDT","t":5234567891,"p":"67123.45000000","q":"0.00123000","T":1784563200122999,"m":false,"M":true}`,
		want:   Fields{E: 1784563200123456, First: 5234567891, Last: 5234567891, HasSeq: true},
	},
	{
		name:   "aggTrade",
		stream: "btcusdt@aggTrade",
		raw:    `{"e":"aggTrade","E":1784563200124,"s":"BTCUSDT","a":3123456789,"p":"67123.45000000","q":"0.01000000","f":5234567880,"l":5234567890,"T":1784563200122,"m":false,"M":true}`,
		want:   Fields{E: 1784563200124, First: 3123456789, Last: 3123456789, HasSeq: true},
	},
	{
		name:   "kline",
		stream: "btcusdt@kline_1m",
		raw:    `{"e":"kline","E":1784563200500,"s":"BTCUSDT","k":{"t":1784563140000,"T":1784563199999,"s":"BTCUSDT","i":"1m","f":5234567000,"L":5234567890,"o":"67100.00000000","c":"67123.45000000","h":"67130.00000000","l":"67090.00000000","v":"12.34500000","n":891,"x":false,"q":"828456.12000000","V":"6.10000000","Q":"409400.00000000","B":"0"}}`,
		want:   Fields{E: 1784563200500, First: 5234567000, Last: 5234567890, HasSeq: true, KlineOpen: 1784563140000},
	},
	{
		name:   "kline closed without trades",
		stream: "btcusdt@kline_1s@+08:00",
		raw:    `{"e":"kline","E":1784563201001,"s":"BTCUSDT","k":{"t":1784563200000,"T":1784563200999,"s":"BTCUSDT","i":"1s","f":-1,"L":-1,"o":"67123.45000000","c":"67123.45000000","h":"67123.45000000","l":"67123.45000000","v":"0.00000000","n":0,"x":true,"q":"0.00000000","V":"0.00000000","Q":"0.00000000","B":"0"}}`,
		want:   Fields{E: 1784563201001, First: -1, Last: -1, HasSeq: true, KlineOpen: 1784563200000, KlineClosed: true},
	},
	{
		name:   "miniTicker",
		stream: "btcusdt@miniTicker",
		raw:    `{"e":"24hrMiniTicker","E":1784563200000,"s":"BTCUSDT","c":"67123.45000000","o":"66000.00000000","h":"67500.00000000","l":"65800.00000000","v":"25000.12300000","q":"1660000000.00000000"}`,
		want:   Fields{E: 1784563200000},
	},
	{
		name:   "miniTicker arr",
		stream: "!miniTicker@arr",
		raw:    `[{"e":"24hrMiniTicker","E":1784563200001,"s":"BTCUSDT","c":"67123.45000000","o":"66000.00000000","h":"67500.00000000","l":"65800.00000000","v":"25000.12300000","q":"1660000000.00000000"},{"e":"24hrMiniTicker","E":1784563200002,"s":"ETHUSDT","c":"3512.10000000","o":"3400.00000000","h":"3550.00000000","l":"3390.00000000","v":"310000.10000000","q":"1080000000.00000000"}]`,
		want:   Fields{E: 1784563200001},
	},
	{
		name:   "ticker",
		stream: "btcusdt@ticker",
		raw:    `{"e":"24hrTicker","E":1784563200003,"s":"BTCUSDT","p":"1123.45000000","P":"1.702","w":"66800.00000000","x":"66000.00000000","c":"67123.45000000","Q":"0.00123000","b":"67123.44000000","B":"0.51000000","a":"67123.45000000","A":"1.20000000","o":"66000.00000000","h":"67500.00000000","l":"65800.00000000","v":"25000.12300000","q":"1660000000.00000000","O":1784476800000,"C":1784563200000,"F":5200000000,"L":5234567890,"n":34567891}`,
		want:   Fields{E: 1784563200003},
	},
	{
		name:   "window ticker",
		stream: "btcusdt@ticker_1h",
		raw:    `{"e":"1hTicker","E":1784563200004,"s":"BTCUSDT","p":"123.45000000","P":"0.184","w":"67050.00000000","o":"67000.00000000","h":"67200.00000000","l":"66900.00000000","c":"67123.45000000","v":"800.12300000","q":"53600000.00000000","O":1784559600000,"C":1784563200000,"F":5234000000,"L":5234567890,"n":567891}`,
		want:   Fields{E: 1784563200004},
	},
	{
		name:   "window ticker arr",
		stream: "!ticker_4h@arr",
		raw:    `[{"e":"4hTicker","E":1784563200005,"s":"BTCUSDT","p":"123.45000000","P":"0.184","w":"67050.00000000","o":"67000.00000000","h":"67200.00000000","l":"66900.00000000","c":"67123.45000000","v":"800.12300000","q":"53600000.00000000","O":1784548800000,"C":1784563200000,"F":5234000000,"L":5234567890,"n":567891}]`,
		want:   Fields{E: 1784563200005},
	},
	{
		name:   "bookTicker",
		stream: "btcusdt@bookTicker",
		raw:    `{"u":71234567891,"s":"BTCUSDT","b":"67123.44000000","B":"0.51000000","a":"67123.45000000","A":"1.20000000"}`,
		want:   Fields{First: 71234567891, Last: 71234567891, HasSeq: true},
	},
	{
		name:   "avgPrice",
		stream: "btcusdt@avgPrice",
		raw:    `{"e":"avgPrice","E":1784563200006,"s":"BTCUSDT","i":"5m","w":"67000.12345678","T":1784563199000}`,
		want:   Fields{E: 1784563200006},
	},
	{
		name:   "depth diff",
		stream: "btcusdt@depth@100ms",
		raw:    `{"e":"depthUpdate","E":1784563200200,"s":"BTCUSDT","U":71234567801,"u":71234567890,"b":[["67123.44000000","0.51000000"]],"a":[["67130.00000000","0.00000000"]]}`,
		want:   Fields{E: 1784563200200, First: 71234567801, Last: 71234567890, HasSeq: true},
	},
	{
		name:   "depth partial",
		stream: "btcusdt@depth5@100ms",
		raw:    `{"lastUpdateId":71234567890,"bids":[["67123.44000000","0.51000000"],["67123.43000000","0.10000000"],["67123.00000000","2.00000000"],["67122.50000000","0.00500000"],["67122.00000000","1.10000000"]],"asks":[["67123.45000000","1.20000000"],["67123.46000000","0.30000000"],["67124.00000000","0.01000000"],["67125.00000000","4.00000000"],["67126.10000000","0.20000000"]]}`,
		want:   Fields{First: 71234567890, Last: 71234567890, HasSeq: true},
	},
	{
		name:   "referencePrice",
		stream: "btcusdt@referencePrice",
		raw:    `{"e":"referencePrice","s":"BTCUSDT","r":"67123.40000000","t":1784563200000}`,
		want:   Fields{},
	},
	{
		name:   "blockTrade",
		stream: "btcusdt@blockTrade",
		raw:    `{"e":"blockTrade","E":1784563200300,"s":"BTCUSDT","t":812345,"p":"67100.00000000","q":"25.00000000","T":1784563200299}`,
		want:   Fields{E: 1784563200300, First: 812345, Last: 812345, HasSeq: true},
	},
	{
		name:   "serverShutdown",
		stream: "!serverShutdown",
		raw:    `{"e":"serverShutdown","E":1770123456789}`,
		want:   Fields{E: 1770123456789, Shutdown: true},
	},
	{
		name:   "serverShutdown on a trade stream",
		stream: "btcusdt@trade",
		raw:    `{"e":"serverShutdown","E":1770123456789}`,
		want:   Fields{E: 1770123456789, Shutdown: true},
	},
}

func streamKind(t testing.TB, name string) Kind {
	t.Helper()
	st, err := ParseStream(name)
	if err != nil {
		t.Fatalf("parse stream %q: %v", name, err)
	}
	return st.Kind
}

func combined(stream, raw string) string {
	return `{"stream":"` + stream + `","data":` + raw + `}`
}

func TestScanFrames(t *testing.T) {
	for _, fr := range frames {
		t.Run(fr.name+"/raw", func(t *testing.T) {
			var got Fields
			if !Scan([]byte(fr.raw), streamKind(t, fr.stream), &got) {
				t.Fatalf("Scan returned false")
			}
			if got != fr.want {
				t.Errorf("got  %+v\nwant %+v", got, fr.want)
			}
		})
		t.Run(fr.name+"/combined", func(t *testing.T) {
			stream, data, ok := SplitCombined([]byte(combined(fr.stream, fr.raw)))
			if !ok {
				t.Fatalf("SplitCombined returned false")
			}
			if string(stream) != fr.stream || string(data) != fr.raw {
				t.Fatalf("split = %q, %q", stream, data)
			}
			var got Fields
			if !Scan(data, streamKind(t, string(stream)), &got) {
				t.Fatalf("Scan returned false")
			}
			if got != fr.want {
				t.Errorf("got  %+v\nwant %+v", got, fr.want)
			}
		})
	}
}

func TestScanTricky(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		in   string
		ok   bool
		want Fields
	}{
		{"keys in any order", KindDepthDiff, `{"u":20,"b":[],"a":[],"U":11,"s":"BTCUSDT","E":5,"e":"depthUpdate"}`, true,
			Fields{E: 5, First: 11, Last: 20, HasSeq: true}},
		{"quotes and key-like text inside strings", KindTrade, `{"s":"B\"T\",\"t\":1,\"E\":2}","p":"{[}]","t":42,"E":7}`, true,
			Fields{E: 7, First: 42, Last: 42, HasSeq: true}},
		{"escaped backslash before closing quote", KindTrade, `{"s":"x\\","t":3}`, true,
			Fields{First: 3, Last: 3, HasSeq: true}},
		{"t inside a nested object is not the trade id", KindTrade, `{"e":"trade","k":{"t":99,"E":98},"x":[{"t":97}],"E":1}`, true,
			Fields{E: 1}},
		{"top-level t of a kline payload is not k.t", KindKline, `{"t":5,"f":6,"L":7,"k":{"x":true,"L":12,"f":10,"t":60000}}`, true,
			Fields{First: 10, Last: 12, HasSeq: true, KlineOpen: 60000, KlineClosed: true}},
		{"kline without L has no sequence", KindKline, `{"k":{"t":60000,"f":10}}`, true,
			Fields{First: 10, KlineOpen: 60000}},
		{"depth diff without U has no sequence", KindDepthDiff, `{"u":20}`, true, Fields{Last: 20}},
		{"whitespace everywhere", KindAggTrade, " \n{ \"a\" :\t17 ,\r\n \"E\" : 3 } \n", true,
			Fields{E: 3, First: 17, Last: 17, HasSeq: true}},
		{"escaped key", KindTrade, `{"\u0065":"server\u0053hutdown","\u0045":5,"\u0074":6}`, true,
			Fields{E: 5, First: 6, Last: 6, HasSeq: true, Shutdown: true}},
		{"first duplicate wins", KindTrade, `{"t":1,"t":2,"E":9,"E":"late"}`, true,
			Fields{E: 9, First: 1, Last: 1, HasSeq: true}},
		{"stops when complete: the tail is not read", KindDepthPartial, `{"lastUpdateId":7,"bids":[["1","2"]],"asks":[broken`, true,
			Fields{First: 7, Last: 7, HasSeq: true}},
		{"shutdown notice", KindBookTicker, `{"e":"serverShutdown","E":1770123456789}`, true,
			Fields{E: 1770123456789, Shutdown: true}},
		{"non-integer sequence is absent", KindBookTicker, `{"u":1.5}`, true, Fields{}},
		{"exponent is not an integer", KindBookTicker, `{"u":1e3}`, true, Fields{}},
		{"null is absent", KindBookTicker, `{"u":null}`, true, Fields{}},
		{"int64 bounds", KindDepthDiff, `{"U":-9223372036854775808,"u":9223372036854775807}`, true,
			Fields{First: -9223372036854775808, Last: 9223372036854775807, HasSeq: true}},
		{"int64 overflow is absent", KindBookTicker, `{"u":9223372036854775808}`, true, Fields{}},
		{"negative overflow is absent", KindBookTicker, `{"u":-9223372036854775809}`, true, Fields{}},
		{"uint64 overflow is absent", KindBookTicker, `{"u":18446744073709551617}`, true, Fields{}},
		{"leading zero is not an integer", KindBookTicker, `{"u":012}`, true, Fields{}},
		{"negative kline ids", KindKline, `{"k":{"f":-1,"L":-1}}`, true, Fields{First: -1, Last: -1, HasSeq: true}},
		{"e not a string", KindUnknown, `{"e":["serverShutdown"]}`, true, Fields{}},
		{"empty object", KindTrade, `{}`, true, Fields{}},
		{"empty array", KindMiniTickerArr, `[]`, true, Fields{}},
		{"array of non-objects", KindMiniTickerArr, `[1,{"E":2}]`, true, Fields{}},
		{"truncated", KindTrade, `{"e":"trade","t":1`, false, Fields{}},
		{"truncated string", KindTrade, `{"e":"tra`, false, Fields{}},
		{"truncated array", KindMiniTickerArr, `[{"e":"x"`, false, Fields{}},
		{"array tail after the first event is not read", KindMiniTickerArr, `[{"E":1},`, true, Fields{E: 1}},
		{"unbalanced nested", KindTrade, `{"b":[[1,2]}`, false, Fields{}},
		{"trailing garbage", KindTrade, `{"t":1}x`, false, Fields{}},
		{"two objects", KindTrade, `{"t":1}{"t":2}`, false, Fields{}},
		{"missing colon", KindTrade, `{"t" 1}`, false, Fields{}},
		{"missing comma", KindTrade, `{"t":1 "E":2}`, false, Fields{}},
		{"bare string", KindTrade, `"t"`, false, Fields{}},
		{"bare number", KindTrade, `1`, false, Fields{}},
		{"empty", KindTrade, ``, false, Fields{}},
		{"bad literal", KindTrade, `{"m":tru}`, false, Fields{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Fields
			ok := Scan([]byte(tt.in), tt.kind, &got)
			if ok != tt.ok {
				t.Fatalf("Scan = %v, want %v", ok, tt.ok)
			}
			if ok && got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if json.Valid([]byte(tt.in)) {
				ref, rok := refScan([]byte(tt.in), tt.kind)
				if rok != ok || ok && ref != got {
					t.Errorf("reference disagrees: %v %+v", rok, ref)
				}
			}
		})
	}
}

func TestSplitCombined(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		ok           bool
		stream, data string
	}{
		{"usual order", `{"stream":"btcusdt@trade","data":{"t":1}}`, true, "btcusdt@trade", `{"t":1}`},
		{"data first", `{"data":{"t":1,"s":"}"},"stream":"btcusdt@trade"}`, true, "btcusdt@trade", `{"t":1,"s":"}"}`},
		{"array data", `{"stream":"!miniTicker@arr","data":[{"E":1},{"E":2}]}`, true, "!miniTicker@arr", `[{"E":1},{"E":2}]`},
		{"whitespace", " { \"stream\" : \"a@trade\" ,\n\"data\" : {\"t\" : 1} } ", true, "a@trade", `{"t" : 1}`},
		{"extra key", `{"x":[1,{"data":2}],"stream":"a@trade","data":{}}`, true, "a@trade", `{}`},
		{"null data", `{"stream":"a@trade","data":null}`, true, "a@trade", `null`},
		{"missing data", `{"stream":"a@trade"}`, false, "", ""},
		{"missing stream", `{"data":{}}`, false, "", ""},
		{"stream not a string", `{"stream":1,"data":{}}`, false, "", ""},
		{"escaped stream", `{"stream":"a\u0040trade","data":{}}`, false, "", ""},
		{"raw payload", `{"e":"trade","t":1}`, false, "", ""},
		{"array", `[{"stream":"a@trade","data":{}}]`, false, "", ""},
		{"truncated", `{"stream":"a@trade","data":{"t":1}`, false, "", ""},
		{"trailing brace: the usual shape's data end is not looked for", `{"stream":"a@trade","data":{}}}`, true, "a@trade", `{}}`},
		{"trailing garbage", `{"stream":"a@trade","data":{}}x`, false, "", ""},
		{"empty", ``, false, "", ""},
		{"nothing but blanks after data (panicked)", `{"stream":"a@trade","data":  `, false, "", ""},
		{"blanks then brace after data", `{"stream":"a@trade","data": }`, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, data, ok := SplitCombined([]byte(tt.in))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			checkPrefixed(t, []byte(tt.in), "a@trade")
			checkPrefixed(t, []byte(tt.in), "btcusdt@trade")
			if string(stream) != tt.stream || string(data) != tt.data {
				t.Errorf("got %q, %q; want %q, %q", stream, data, tt.stream, tt.data)
			}
			if json.Valid([]byte(tt.in)) {
				rs, rd, rok := refSplit([]byte(tt.in))
				if rok != ok || !bytes.Equal(rs, stream) || !bytes.Equal(rd, data) {
					t.Errorf("reference disagrees: %q, %q, %v", rs, rd, rok)
				}
			}
		})
	}
}

// checkPrefixed checks that SplitPrefixed with the prefix of name agrees with
// SplitCombined on p: when it accepts p, p is of that stream with that data.
func checkPrefixed(t *testing.T, p []byte, name string) {
	t.Helper()
	data, ok := SplitPrefixed(p, CombinedPrefix(name))
	if !ok {
		return
	}
	stream, want, wok := SplitCombined(p)
	if !wok || string(stream) != name || !bytes.Equal(data, want) {
		t.Fatalf("SplitPrefixed(%q, %s) = %q; SplitCombined %q, %q, %v", p, name, data, stream, want, wok)
	}
}

func TestSplitPrefixed(t *testing.T) {
	if CombinedPrefix(`a"b`) != nil || CombinedPrefix(`a\b`) != nil {
		t.Error("a name with a quote or a backslash has a prefix")
	}
	for _, fr := range frames {
		p := []byte(combined(fr.stream, fr.raw))
		data, ok := SplitPrefixed(p, CombinedPrefix(fr.stream))
		if !ok {
			t.Errorf("%s: not split", fr.name)
		}
		checkPrefixed(t, p, fr.stream)
		if _, ok := SplitPrefixed(p, CombinedPrefix(fr.stream+"x")); ok {
			t.Errorf("%s: split as another stream's", fr.name)
		}
		if _, ok := SplitPrefixed(p, nil); ok {
			t.Errorf("%s: split with no prefix", fr.name)
		}
		_, want, _ := SplitCombined(p)
		if !bytes.Equal(data, want) {
			t.Errorf("%s: data %q, SplitCombined %q", fr.name, data, want)
		}
	}
	for _, in := range []string{`{"stream":"a@trade","data":{}`, `{"stream":"a@trade","data":`, `{"stream":"a@trade","data":{}}x`,
		`{"stream":"a@trade","data":[}`, `{"stream":"a@trade","data":  `} {
		if data, ok := SplitPrefixed([]byte(in), CombinedPrefix("a@trade")); ok {
			t.Errorf("SplitPrefixed(%q) = %q, want not ok", in, data)
		}
	}
}

func TestScanAllocs(t *testing.T) {
	for _, fr := range frames {
		p := []byte(combined(fr.stream, fr.raw))
		k := streamKind(t, fr.stream)
		var f Fields
		allocs := testing.AllocsPerRun(100, func() {
			_, data, _ := SplitCombined(p)
			Scan(data, k, &f)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per split and scan, want 0", fr.name, allocs)
		}
	}
}

// refScan is a slow reference for Scan built on encoding/json, for
// well-formed input only. It walks the keys in order with Scan's rules: the
// first occurrence of a key counts, and reading stops once every field the
// kind has is found.
func refScan(p []byte, k Kind) (f Fields, ok bool) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 {
		return f, false
	}
	switch p[0] {
	case '[':
		var arr []json.RawMessage
		if json.Unmarshal(p, &arr) != nil {
			return f, false
		}
		if len(arr) == 0 || arr[0][0] != '{' {
			return f, true
		}
		p = arr[0]
	case '{':
	default:
		return f, false
	}
	kvs, err := orderedKeys(p)
	if err != nil {
		return f, false
	}
	need := needs(k)
	var seen, have uint8
	seq := map[Kind]map[string]uint8{
		KindTrade: {"t": haveFirst | haveLast}, KindBlockTrade: {"t": haveFirst | haveLast},
		KindAggTrade: {"a": haveFirst | haveLast}, KindDepthDiff: {"U": haveFirst, "u": haveLast},
		KindBookTicker: {"u": haveFirst | haveLast}, KindDepthPartial: {"lastUpdateId": haveFirst | haveLast},
	}[k]
	for _, kv := range kvs {
		switch {
		case kv.key == "e" && seen&haveE0 == 0:
			seen |= haveE0
			var s string
			if json.Unmarshal(kv.val, &s) == nil {
				f.Shutdown = s == "serverShutdown"
			}
		case kv.key == "E" && seen&haveE == 0:
			seen |= haveE
			f.E, _ = refInt(kv.val)
		case k == KindKline && kv.key == "k" && seen&haveK == 0:
			seen |= haveK
			if kv.val[0] != '{' {
				break
			}
			kk, err := orderedKeys(kv.val)
			if err != nil {
				return f, false
			}
			var ks uint8
			for _, x := range kk {
				switch {
				case x.key == "t" && ks&1 == 0:
					ks |= 1
					f.KlineOpen, _ = refInt(x.val)
				case x.key == "x" && ks&2 == 0:
					ks |= 2
					f.KlineClosed = string(x.val) == "true"
				case x.key == "f" && ks&4 == 0:
					ks |= 4
					var isInt bool
					if f.First, isInt = refInt(x.val); isInt {
						have |= haveFirst
					}
				case x.key == "L" && ks&8 == 0:
					ks |= 8
					var isInt bool
					if f.Last, isInt = refInt(x.val); isInt {
						have |= haveLast
					}
				}
			}
		default:
			bits := seq[kv.key] &^ seen
			if bits == 0 {
				break
			}
			seen |= bits
			v, isInt := refInt(kv.val)
			if isInt {
				have |= bits
			}
			if bits&haveFirst != 0 {
				f.First = v
			}
			if bits&haveLast != 0 {
				f.Last = v
			}
		}
		if seen&need == need {
			break
		}
	}
	f.HasSeq = have == haveFirst|haveLast
	return f, true
}

type keyValue struct {
	key string
	val json.RawMessage
}

// orderedKeys returns the members of a JSON object in order, duplicates included.
func orderedKeys(p []byte) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []keyValue
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, keyValue{t.(string), v})
	}
	return out, nil
}

func refInt(raw json.RawMessage) (int64, bool) {
	var v int64
	if len(raw) == 0 || raw[0] == 'n' || json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	return v, true
}

// refSplit is a slow reference for SplitCombined, for well-formed input only.
func refSplit(p []byte) (stream, data []byte, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil || m == nil {
		return nil, nil, false
	}
	s, sok := m["stream"]
	d, dok := m["data"]
	if !sok || !dok || s[0] != '"' || bytes.IndexByte(s, '\\') >= 0 {
		return nil, nil, false
	}
	return s[1 : len(s)-1], d, true
}

// numKinds is the number of Kind values, KindUnknown included.
const numKinds = int(KindBlockTrade) + 1

func FuzzScan(f *testing.F) {
	for _, fr := range frames {
		f.Add([]byte(fr.raw), uint8(streamKind(f, fr.stream)))
	}
	f.Add([]byte(`{"s":"B\"T\",\"t\":1}","t":42,"E":7}`), uint8(KindTrade))
	f.Add([]byte(`{"\u0045":5,"\u0074":6,"\u0065":"server\u0053hutdown"}`), uint8(KindTrade))
	f.Add([]byte(`{"k":{"t":1,"f":-1,"L":-0,"x":true},"k":[1]}`), uint8(KindKline))
	f.Fuzz(func(t *testing.T, p []byte, kind uint8) {
		k := Kind(int(kind) % numKinds)
		var got Fields
		ok := Scan(p, k, &got)
		if !json.Valid(p) {
			return
		}
		ref, rok := refScan(p, k)
		if ok != rok {
			t.Fatalf("Scan(%q, %v) = %v, reference %v", p, k, ok, rok)
		}
		if ok && got != ref {
			t.Fatalf("Scan(%q, %v):\ngot  %+v\nwant %+v", p, k, got, ref)
		}
	})
}

func FuzzSplitCombined(f *testing.F) {
	for _, fr := range frames {
		f.Add([]byte(combined(fr.stream, fr.raw)))
	}
	f.Add([]byte(`{"data":{"t":1,"s":"}"},"stream":"btcusdt@trade","data":null}`))
	f.Add([]byte(`{"stream":"a\u0040trade","data":{}}`))
	f.Fuzz(func(t *testing.T, p []byte) {
		stream, data, ok := SplitCombined(p)
		if ok {
			checkPrefixed(t, p, string(stream))
		}
		checkPrefixed(t, p, "a@trade")
		if ok && (!within(p, stream) || !within(p, data)) {
			t.Fatalf("SplitCombined(%q) returned bytes outside its input", p)
		}
		if !json.Valid(p) {
			return
		}
		rs, rd, rok := refSplit(p)
		if _, _, usual := splitUsual(p); usual && rok && bytes.Equal(rs, stream) && bytes.HasPrefix(data, rd) {
			return // the fast path's data runs to the wrapper's closing brace
		}
		if ok != rok || !bytes.Equal(rs, stream) || !bytes.Equal(rd, data) {
			t.Fatalf("SplitCombined(%q) = %q, %q, %v; reference %q, %q, %v", p, stream, data, ok, rs, rd, rok)
		}
	})
}

// within reports whether sub is a subslice of p.
func within(p, sub []byte) bool {
	if len(sub) == 0 {
		return true
	}
	for i := 0; i+len(sub) <= len(p); i++ {
		if &p[i] == &sub[0] {
			return true
		}
	}
	return false
}

func BenchmarkScan(b *testing.B) {
	for _, fr := range frames {
		if strings.HasPrefix(fr.name, "serverShutdown") {
			continue
		}
		k := streamKind(b, fr.stream)
		raw := []byte(fr.raw)
		b.Run(fmt.Sprintf("%s/raw", strings.ReplaceAll(fr.name, " ", "_")), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			var f Fields
			for b.Loop() {
				Scan(raw, k, &f)
			}
		})
		comb := []byte(combined(fr.stream, fr.raw))
		b.Run(fmt.Sprintf("%s/combined", strings.ReplaceAll(fr.name, " ", "_")), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(comb)))
			var f Fields
			for b.Loop() {
				_, data, _ := SplitCombined(comb)
				Scan(data, k, &f)
			}
		})
	}
}

// TestShortKey: whenever shortKey takes a key, str, ws and byte(':') take the
// same key to the same place.
func TestShortKey(t *testing.T) {
	for _, in := range []struct {
		p  string
		ok bool
	}{
		{`"e":"trade"`, true}, {`"E":1`, true}, {`"é":1`, false}, {`"e" :1`, false}, {`"":1`, false},
		{`"""":1`, false}, {`"\"":1`, false}, {`"\\":1`, false}, {`"e":`, true}, {`"e"`, false}, {`"ab":1`, false}, {`e":1`, false},
	} {
		c := cursor{p: []byte(in.p)}
		key, esc, ok := c.shortKey()
		if ok != in.ok {
			t.Errorf("shortKey(%q) ok %v, want %v", in.p, ok, in.ok)
		}
		if !ok {
			if c.i != 0 {
				t.Errorf("shortKey(%q) consumed %d bytes and refused", in.p, c.i)
			}
			continue
		}
		r := cursor{p: []byte(in.p)}
		rkey, resc, rok := r.str()
		r.ws()
		if !rok || !r.byte(':') || string(rkey) != string(key) || resc != esc || r.i != c.i {
			t.Errorf("shortKey(%q) = %q, %v at %d; str: %q, %v at %d", in.p, key, esc, c.i, rkey, resc, r.i)
		}
	}
}

// TestIntValue checks the integer reader, eight digits at a time where it
// can, against strconv: every length up to 21 digits, signs, leading zeros,
// the int64 limits, and a digit run broken by a non-digit at each place.
func TestIntValue(t *testing.T) {
	var cases []string
	for n := 1; n <= 21; n++ {
		digits := strings.Repeat("9", n)
		cases = append(cases, digits, "1"+strings.Repeat("0", n-1), "-"+digits, "0"+digits)
		for cut := 0; cut < n; cut++ { // a non-digit at every place of the run
			for _, bad := range []string{"/", ":", "a", ".5", "e3", ","} {
				cases = append(cases, digits[:cut]+bad+digits[cut:])
			}
		}
	}
	cases = append(cases, "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "1784563200122045", "12345678", "0", "-0", "-", "")
	for _, in := range cases {
		c := &cursor{p: []byte(in + "}")}
		v, isInt, ok := c.intValue()
		// want: JSON's integer grammar (an optional minus, digits, no leading
		// zero, no fraction or exponent after) within int64, from strconv.
		sign := 0
		if strings.HasPrefix(in, "-") {
			sign = 1
		}
		end := sign
		for end < len(in) && in[end] >= '0' && in[end] <= '9' {
			end++
		}
		digits := in[sign:end]
		want, err := strconv.ParseInt(in[:end], 10, 64)
		plain := err == nil && digits != "" && !(len(digits) > 1 && digits[0] == '0') &&
			(end == len(in) || !strings.ContainsRune(".eE", rune(in[end])))
		if !ok && plain {
			t.Errorf("%q: not ok", in)
			continue
		}
		if isInt != plain {
			t.Errorf("%q: isInt %v, want %v", in, isInt, plain)
			continue
		}
		if isInt && v != want {
			t.Errorf("%q: %d, want %d", in, v, want)
		}
	}
}
