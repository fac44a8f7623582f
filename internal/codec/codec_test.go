package codec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/firehose"
)

// payloads returns n JSON payloads of scenario name, as the firehose sends them.
func payloads(t testing.TB, name string, n int, combined bool) [][]byte {
	t.Helper()
	sc, err := firehose.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := firehose.Prepare(sc, n, 7, combined)
	if err != nil {
		t.Fatal(err)
	}
	return frames(t, b.Wire())
}

// frames splits unmasked server frames (each a whole message) into payloads.
func frames(t testing.TB, w []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(w) > 0 {
		if len(w) < 2 || w[0]&0x80 == 0 {
			t.Fatalf("not a final frame: % x", w[:min(len(w), 4)])
		}
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

// fromJSON is the value a msgpack encoding of the JSON p must decode to:
// quoted decimals as float64, integers as int64, level sides of a packed
// message as [][2]float64 rounded through float32.
func fromJSON(t testing.TB, p []byte, packed bool) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(p))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("json: %v", err)
	}
	return norm(v, "", packed)
}

func norm(v any, key string, packed bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = norm(e, k, packed)
		}
	case []any:
		if packed && codec.IsLevelKey([]byte(key)) {
			if ls, ok := jsonLevels(x); ok {
				return ls
			}
		}
		for i, e := range x {
			x[i] = norm(e, "", packed)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil && isDec(x) {
			return f
		}
	}
	return v
}

func isDec(s string) bool {
	s = trimMinus(s)
	dot := false
	for i, c := range s {
		if c == '.' && !dot && i > 0 && i < len(s)-1 {
			dot = true
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return dot
}

func trimMinus(s string) string {
	if len(s) > 0 && s[0] == '-' {
		return s[1:]
	}
	return s
}

func jsonLevels(x []any) ([][2]float64, bool) {
	out := make([][2]float64, 0, len(x))
	for _, e := range x {
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			return nil, false
		}
		var l [2]float64
		for k := range 2 {
			s, ok := pair[k].(string)
			if !ok || !isDec(s) {
				return nil, false
			}
			l[k], _ = strconv.ParseFloat(s, 64)
		}
		out = append(out, l)
	}
	return out, true
}

// fromMsgpack decodes p generically; level sides (bin) become [][2]float64.
func fromMsgpack(t testing.TB, p []byte) any {
	t.Helper()
	v, rest, err := msgp.ReadIntfBytes(p)
	if err != nil || len(rest) != 0 {
		t.Fatalf("msgpack: %v (%d bytes left)", err, len(rest))
	}
	return normMsgpack(t, v)
}

func normMsgpack(t testing.TB, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normMsgpack(t, e)
		}
	case []any:
		for i, e := range x {
			x[i] = normMsgpack(t, e)
		}
	case uint64:
		return int64(x)
	case []byte:
		out := [][2]float64{}
		if !codec.Levels(x, func(p, s float32) { out = append(out, [2]float64{float64(p), float64(s)}) }) {
			t.Fatalf("bin of %d bytes: not whole levels", len(x))
		}
		return out
	}
	return v
}

// maxPriceError is the largest |float32(price) - price| among the levels of
// want (JSON, float64) against got (packed, float32), and fails on any other
// difference.
func compareLevels(t *testing.T, want, got any, worst *float64) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			t.Fatalf("map: got %v, want %v", got, want)
		}
		for k := range w {
			compareLevels(t, w[k], g[k], worst)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			t.Fatalf("array: got %v, want %v", got, want)
		}
		for i := range w {
			compareLevels(t, w[i], g[i], worst)
		}
	case [][2]float64:
		g, ok := got.([][2]float64)
		if !ok || len(g) != len(w) {
			t.Fatalf("levels: got %v, want %v", got, want)
		}
		for i := range w {
			for k := range 2 {
				if float64(float32(w[i][k])) != g[i][k] {
					t.Fatalf("level %d: got %v, want float32 of %v", i, g[i][k], w[i][k])
				}
				bound := math.Abs(w[i][k]) * 0x1p-24 // half a float32 ulp, relative
				if e := math.Abs(g[i][k] - w[i][k]); e > bound {
					t.Fatalf("level %d: %v -> %v, error %g above %g", i, w[i][k], g[i][k], e, bound)
				} else if k == 0 && e > *worst {
					*worst = e
				}
			}
		}
	default:
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("got %#v, want %#v", got, want)
		}
	}
}

var scenarios = []string{"aggTrade", "kline", "depth20", "depth", "mix", "tickerArr"}

// TestRoundTrip transcodes every kind of event the firehose makes, raw and
// combined, and checks each decodes to the JSON's values: exactly for
// msgpack, and within float32's rounding for packed levels.
func TestRoundTrip(t *testing.T) {
	var worst float64
	for _, name := range scenarios {
		for _, combined := range []bool{false, true} {
			n := 60
			if name == "tickerArr" {
				n = 2
			}
			for i, p := range payloads(t, name, n, combined) {
				m, err := codec.Append(nil, p, codec.Msgpack)
				if err != nil {
					t.Fatalf("%s %d: %v", name, i, err)
				}
				if got, want := fromMsgpack(t, m), fromJSON(t, p, false); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s %d msgpack: got %v\nwant %v", name, i, got, want)
				}
				k, err := codec.Append(nil, p, codec.Packed)
				if err != nil {
					t.Fatalf("%s %d packed: %v", name, i, err)
				}
				compareLevels(t, fromJSON(t, p, true), fromMsgpack(t, k), &worst)
				if j, _ := codec.Append(nil, p, codec.JSON); !bytes.Equal(j, p) {
					t.Fatalf("json is not the payload itself")
				}
			}
		}
	}
	// The largest price in these books is btcusdt's ~67,000: float32 steps
	// there are 1/256, so a price moves by up to 0.0039.
	t.Logf("largest absolute float32 round-trip error of a price: %.8f", worst)
	if worst == 0 || worst > 0.004 {
		t.Fatalf("largest price error %g: want within (0, 0.004]", worst)
	}
}

// TestSeedPrice is the seed's example: 60000.13 packs as 60000.12890625.
func TestSeedPrice(t *testing.T) {
	p := []byte(`{"b":[["60000.13000000","1.50000000"]]}`)
	k, err := codec.Append(nil, p, codec.Packed)
	if err != nil {
		t.Fatal(err)
	}
	got := fromMsgpack(t, k).(map[string]any)["b"].([][2]float64)
	if got[0][0] != 60000.12890625 || got[0][1] != 1.5 {
		t.Fatalf("got %v, want [60000.12890625 1.5]", got[0])
	}
}

// TestSizes reports bytes per message of each kind in each encoding (the
// README's table) and checks the orderings that must hold: packed is never
// larger than msgpack, and much smaller for depth.
func TestSizes(t *testing.T) {
	t.Logf("%-10s %9s %9s %9s", "scenario", "json", "msgpack", "packed")
	for _, name := range scenarios {
		n := 200
		if name == "tickerArr" {
			n = 2
		}
		var sum [3]int
		ps := payloads(t, name, n, true)
		for _, p := range ps {
			for _, e := range codec.Encodings() {
				out, err := codec.Append(nil, p, e)
				if err != nil {
					t.Fatal(err)
				}
				sum[e] += len(out)
			}
		}
		avg := func(e codec.Encoding) float64 { return float64(sum[e]) / float64(len(ps)) }
		t.Logf("%-10s %9.0f %9.0f %9.0f", name, avg(codec.JSON), avg(codec.Msgpack), avg(codec.Packed))
		if name == "mix" { // by kind
			kinds := map[string]*[4]int{}
			var order []string
			for _, p := range ps {
				var w struct{ Stream string }
				_ = json.Unmarshal(p, &w)
				_, k, _ := strings.Cut(w.Stream, "@")
				if kinds[k] == nil {
					kinds[k] = &[4]int{}
					order = append(order, k)
				}
				for _, e := range codec.Encodings() {
					out, _ := codec.Append(nil, p, e)
					kinds[k][e] += len(out)
				}
				kinds[k][3]++
			}
			for _, k := range order {
				c := kinds[k]
				t.Logf("  %-8s %9.0f %9.0f %9.0f", k, float64(c[0])/float64(c[3]), float64(c[1])/float64(c[3]), float64(c[2])/float64(c[3]))
			}
		}
		if sum[codec.Packed] > sum[codec.Msgpack] {
			t.Errorf("%s: packed %d bytes > msgpack %d", name, sum[codec.Packed], sum[codec.Msgpack])
		}
		if (name == "depth" || name == "depth20") && 2*sum[codec.Packed] > sum[codec.Msgpack] {
			t.Errorf("%s: packed %d bytes is not under half of msgpack's %d", name, sum[codec.Packed], sum[codec.Msgpack])
		}
	}
}

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		want    codec.Encoding
		answer  string
	}{
		{nil, codec.JSON, ""},
		{[]string{"chat"}, codec.JSON, ""},
		{[]string{"soak.msgpack.v2"}, codec.JSON, ""},
		{[]string{"chat", "soak.packed.v1", "soak.msgpack.v1"}, codec.Packed, "soak.packed.v1"},
		{[]string{"soak.msgpack.v1"}, codec.Msgpack, "soak.msgpack.v1"},
		{[]string{"soak.json.v1"}, codec.JSON, "soak.json.v1"},
	} {
		e, answer := codec.Negotiate(tc.offered)
		if e != tc.want || answer != tc.answer {
			t.Errorf("Negotiate(%q) = %v, %q; want %v, %q", tc.offered, e, answer, tc.want, tc.answer)
		}
	}
	for _, e := range codec.Encodings() {
		if got, err := codec.Parse(e.String()); err != nil || got != e {
			t.Errorf("Parse(%q) = %v, %v", e.String(), got, err)
		}
	}
	if _, err := codec.Parse("protobuf"); err == nil || err.Error() != `unknown encoding "protobuf" (allowed: json, msgpack, packed)` {
		t.Errorf("Parse(protobuf): %v", err)
	}
}

func TestBadJSON(t *testing.T) {
	for _, p := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `[1 2]`, `{"a":"x\"y"}`, `{"a":tru}`, `{} x`, `{"b":[["1.0"]]}`} {
		if _, err := codec.Append(nil, []byte(p), codec.Packed); err == nil && p != `{"b":[["1.0"]]}` {
			t.Errorf("%q: no error", p)
		}
	}
	// A side that is not pairs of decimals is left as msgpack.
	out, err := codec.Append(nil, []byte(`{"b":[["1.0"]]}`), codec.Packed)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fromMsgpack(t, out)); got != "map[b:[[1]]]" {
		t.Errorf("got %s", got)
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, name := range []string{"aggTrade", "depth20", "depth"} {
		ps := payloads(b, name, 64, true)
		for _, e := range codec.Encodings()[1:] {
			b.Run(name+"/"+e.String(), func(b *testing.B) {
				var dst []byte
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					var err error
					if dst, err = codec.Append(dst[:0], ps[i%len(ps)], e); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// FuzzParseDecimal: the fast path gives ParseFloat's result for every decimal.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"60000.13000000", "0.00000001", "-1.5", "9007199254740993.0", "123456789012345678.12345678", "0.1", "1.0000000000000000000000001"} {
		f.Add(s)
	}
	f.Add("2" + strings.Repeat("0", 320) + ".0") // beyond float64: kept as a string
	f.Fuzz(func(t *testing.T, s string) {
		p := []byte(`{"x":"` + s + `"}`)
		if !isDec(s) || strings.ContainsAny(s, `"\`) {
			return
		}
		out, err := codec.Append(nil, p, codec.Msgpack)
		if err != nil {
			t.Fatal(err)
		}
		var want any = s // out of float64's range: kept as the string
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			want = f
		}
		got := fromMsgpack(t, out).(map[string]any)["x"]
		if got != want {
			t.Fatalf("%q: got %v, ParseFloat %v", s, got, want)
		}
	})
}
