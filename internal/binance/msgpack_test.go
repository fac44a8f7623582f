package binance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/codec"
)

// binaryEncodings are the encodings ScanMsgpack reads.
var binaryEncodings = []codec.Encoding{codec.Msgpack, codec.Packed}

func encode(t testing.TB, p string, e codec.Encoding) []byte {
	t.Helper()
	out, err := codec.Append(nil, []byte(p), e)
	if err != nil {
		t.Fatalf("%v of %q: %v", e, p, err)
	}
	return out
}

// TestScanMsgpackFrames: every real-shaped frame, transcoded, scans to the
// fields its JSON scans to, raw and combined (by the prefix and without).
func TestScanMsgpackFrames(t *testing.T) {
	for _, fr := range frames {
		for _, e := range binaryEncodings {
			k := streamKind(t, fr.stream)
			t.Run(fr.name+"/"+e.String(), func(t *testing.T) {
				var got Fields
				if !ScanMsgpack(encode(t, fr.raw, e), k, &got) || got != fr.want {
					t.Fatalf("raw: got %+v, want %+v", got, fr.want)
				}
				comb := encode(t, combined(fr.stream, fr.raw), e)
				stream, data, ok := SplitCombinedMsgpack(comb)
				if !ok || string(stream) != fr.stream || string(data) != string(encode(t, fr.raw, e)) {
					t.Fatalf("split = %q, %d bytes, %v", stream, len(data), ok)
				}
				pd, ok := SplitPrefixedMsgpack(comb, MsgpackPrefix(fr.stream))
				if !ok || string(pd) != string(data) {
					t.Fatalf("prefixed split = %d bytes, %v", len(pd), ok)
				}
				if _, ok := SplitPrefixedMsgpack(comb, MsgpackPrefix("ethusdt@trade")); ok {
					t.Fatal("another stream's prefix matched")
				}
				if !ScanMsgpack(data, k, &got) || got != fr.want {
					t.Fatalf("combined: got %+v, want %+v", got, fr.want)
				}
			})
		}
	}
}

func TestScanMsgpackMalformed(t *testing.T) {
	good := encode(t, `{"e":"trade","E":17,"t":5,"p":"1.5"}`, codec.Msgpack)
	var f Fields
	for i := range len(good) - 1 {
		if ScanMsgpack(good[:i], KindTrade, &f) && i > 0 {
			// A prefix that holds every field needed may stop early, as Scan does.
			if f.E != 17 || f.First != 5 {
				t.Errorf("truncated at %d: true with %+v", i, f)
			}
		}
	}
	for _, p := range [][]byte{nil, {0xc1}, {0x93, 1, 2}, encode(t, `"x"`, codec.Msgpack), encode(t, `5`, codec.Msgpack)} {
		if ScanMsgpack(p, KindTrade, &f) {
			t.Errorf("ScanMsgpack(% x) = true", p)
		}
		if _, _, ok := SplitCombinedMsgpack(p); ok {
			t.Errorf("SplitCombinedMsgpack(% x) = true", p)
		}
	}
	// Integers of every msgpack width, and a uint64 beyond int64 (not an id).
	for _, tc := range []struct {
		p    string
		want Fields
	}{
		{`{"t":5,"E":300}`, Fields{E: 300, First: 5, Last: 5, HasSeq: true}},
		{`{"t":-3,"E":70000}`, Fields{E: 70000, First: -3, Last: -3, HasSeq: true}},
		{`{"t":5.5,"E":1}`, Fields{E: 1}},
		{`{"t":"5","E":1}`, Fields{E: 1}},
	} {
		if !ScanMsgpack(encode(t, tc.p, codec.Msgpack), KindTrade, &f) || f != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.p, f, tc.want)
		}
	}
	big := []byte{0x81, 0xa1, 't', 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if !ScanMsgpack(big, KindTrade, &f) || f.HasSeq {
		t.Errorf("uint64 max id: %+v", f)
	}
}

func TestScanMsgpackAllocs(t *testing.T) {
	for _, fr := range frames {
		k := streamKind(t, fr.stream)
		for _, e := range binaryEncodings {
			p := encode(t, combined(fr.stream, fr.raw), e)
			prefix := MsgpackPrefix(fr.stream)
			var f Fields
			allocs := testing.AllocsPerRun(100, func() {
				_, data, _ := SplitCombinedMsgpack(p)
				ScanMsgpack(data, k, &f)
				data, _ = SplitPrefixedMsgpack(p, prefix)
				ScanMsgpack(data, k, &f)
			})
			if allocs != 0 {
				t.Errorf("%s %v: %v allocs per split and scan, want 0", fr.name, e, allocs)
			}
		}
	}
}

// FuzzScanMsgpack: any bytes are scanned and split without a panic or bytes
// from outside the input; and a JSON event that transcodes scans, in msgpack
// and packed, to exactly what Scan finds in the JSON.
func FuzzScanMsgpack(f *testing.F) {
	for _, fr := range frames {
		f.Add([]byte(fr.raw), uint8(streamKind(f, fr.stream)))
		f.Add(encode(f, combined(fr.stream, fr.raw), codec.Packed), uint8(streamKind(f, fr.stream)))
	}
	f.Add([]byte(`{"k":{"t":1,"f":-1,"L":-0,"x":true},"k":[1]}`), uint8(KindKline))
	f.Add([]byte(`[{"t":1,"E":2},{"t":"x"}]`), uint8(KindTrade))
	f.Add([]byte(`{"U":1,"u":2,"U":3,"b":[["1.5","2.25"]],"a":[]}`), uint8(KindDepthDiff))
	f.Fuzz(func(t *testing.T, p []byte, kind uint8) {
		k := Kind(int(kind) % numKinds)
		var got Fields
		ScanMsgpack(p, k, &got)
		if stream, data, ok := SplitCombinedMsgpack(p); ok && (!within(p, stream) || !within(p, data)) {
			t.Fatalf("SplitCombinedMsgpack(% x) returned bytes outside its input", p)
		}
		if !json.Valid(p) {
			return
		}
		var want Fields
		wok := Scan(p, k, &want)
		for _, e := range binaryEncodings {
			m, err := codec.Append(nil, p, e)
			if err != nil {
				continue // escapes: the generators write none
			}
			ok := ScanMsgpack(m, k, &got)
			if ok != wok || ok && got != want {
				t.Fatalf("%v of %q (%v): got %+v %v, Scan %+v %v", e, p, k, got, ok, want, wok)
			}
		}
	})
}

func BenchmarkScanMsgpack(b *testing.B) {
	for _, fr := range frames {
		if strings.HasPrefix(fr.name, "serverShutdown") {
			continue
		}
		k := streamKind(b, fr.stream)
		for _, e := range binaryEncodings {
			comb := encode(b, combined(fr.stream, fr.raw), e)
			prefix := MsgpackPrefix(fr.stream)
			b.Run(fmt.Sprintf("%s/%v", strings.ReplaceAll(fr.name, " ", "_"), e), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(comb)))
				var f Fields
				for b.Loop() {
					data, ok := SplitPrefixedMsgpack(comb, prefix)
					if !ok || !ScanMsgpack(data, k, &f) {
						b.Fatal("scan failed")
					}
				}
			})
		}
	}
}
