package binance

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/wssoak/wssoak/internal/codec"
)

// FuzzMpRead holds the scanner's msgpack reader to tinylib/msgp's on any
// bytes: the same values, the same rest, the same failures (tinylib's depth
// limit aside).
func FuzzMpRead(f *testing.F) {
	for _, fr := range frames {
		m, _ := codec.Append(nil, []byte(combined(fr.stream, fr.raw)), codec.Packed)
		f.Add(m)
	}
	for _, p := range [][]byte{{0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0}, {0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0xc7, 1, 5, 0},
		{0xd8, 1}, {0xdf, 0, 0, 0, 2, 1, 2, 3, 4}, {0xc4, 3, 'a', 'b', 'c'}, {0xc1}, {0xc3, 0xc2}, {0xdd, 0xff, 0xff, 0xff, 0xff}} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		rest, ok := mpSkip(p)
		want, err := msgp.Skip(p)
		if errors.Is(err, msgp.ErrRecursion) {
			return
		}
		if ok != (err == nil) || ok && len(rest) != len(want) {
			t.Fatalf("mpSkip(% x) = %d left, %v; msgp %d left, %v", p, len(rest), ok, len(want), err)
		}
		if n, r, ok := mpMap(p); ok {
			wn, wr, err := msgp.ReadMapHeaderBytes(p)
			if err != nil || int(wn) != n || len(wr) != len(r) {
				t.Fatalf("mpMap(% x) = %d, %d left; msgp %d, %d left, %v", p, n, len(r), wn, len(wr), err)
			}
		} else if msgp.NextType(p) == msgp.MapType {
			if _, _, err := msgp.ReadMapHeaderBytes(p); err == nil {
				t.Fatalf("mpMap(% x) failed, msgp reads it", p)
			}
		}
		if n, r, ok := mpArray(p); ok {
			wn, wr, err := msgp.ReadArrayHeaderBytes(p)
			if err != nil || int(wn) != n || len(wr) != len(r) {
				t.Fatalf("mpArray(% x) = %d, %d left; msgp %d, %d left, %v", p, n, len(r), wn, len(wr), err)
			}
		}
		s, r, ok := mpStr(p, true)
		ws, wr, err := msgp.ReadMapKeyZC(p)
		if ok != (err == nil) || ok && (!bytes.Equal(s, ws) || len(r) != len(wr)) {
			t.Fatalf("mpStr(% x) = %q, %v; msgp %q, %v", p, s, ok, ws, err)
		}
		if mpIsStr(p) != (msgp.NextType(p) == msgp.StrType) || mpIsMap(p) != (msgp.NextType(p) == msgp.MapType) ||
			mpIsArray(p) != (msgp.NextType(p) == msgp.ArrayType) {
			t.Fatalf("type of % x: str %v map %v array %v; msgp %v", p, mpIsStr(p), mpIsMap(p), mpIsArray(p), msgp.NextType(p))
		}
		v, isInt, r, ok := mpInt(p)
		switch typ := msgp.NextType(p); {
		case typ == msgp.IntType || typ == msgp.UintType:
			wv, wr, err := msgp.ReadInt64Bytes(p)
			if err == nil && (!ok || !isInt || v != wv || len(r) != len(wr)) {
				t.Fatalf("mpInt(% x) = %d %v %v; msgp %d", p, v, isInt, ok, wv)
			}
			if err != nil && isInt {
				t.Fatalf("mpInt(% x) = %d, msgp: %v", p, v, err)
			}
		case isInt:
			t.Fatalf("mpInt(% x) = %d of a %v", p, v, typ)
		}
	})
}

func BenchmarkMpSkip(b *testing.B) {
	m, _ := codec.Append(nil, []byte(combined(frames[0].stream, frames[0].raw)), codec.Msgpack)
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			mpSkip(m)
		}
	})
	b.Run("tinylib", func(b *testing.B) {
		for b.Loop() {
			_, _ = msgp.Skip(m)
		}
	})
}
