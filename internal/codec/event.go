package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/tinylib/msgp/msgp"
)

// Event is a message held as values: what a server keeps of an event before
// it sends it (numbers as numbers, not text), decoded once from the JSON a
// generator wrote (DecodeEvent). AppendEvent encodes it in any encoding, so
// that a sender that encodes each message as it sends it pays what each
// format costs: JSON formats its numbers, msgpack writes them as they are,
// packed writes a book's levels as float32 pairs. Every encoding gives the
// bytes the pre-encoded path gives (the JSON itself, Append's msgpack and
// packed).
type Event struct{ vals []val }

// The kinds of val.
const (
	kObject  = iota // n members follow, each a key then a value
	kArray          // n values follow
	kLevels         // an array of n [price, size] pairs that packed writes as float32 pairs; 2n number vals follow
	kKey            // s
	kString         // s, written as it is
	kDecimal        // a quoted decimal ("67123.45000000"): f with prec decimals
	kInt            // i
	kFloat          // a bare number that is not an integer: f, shortest form
	kRaw            // a bare number no other kind reproduces: s as it is (JSON), f (binary)
	kTrue
	kFalse
	kNull
)

type val struct {
	kind uint8
	prec uint8 // kDecimal: decimals
	n    int   // kObject, kArray, kLevels: members
	s    []byte
	f    float64
	i    int64
}

// DecodeEvent holds the JSON value p as an Event (p is not kept). It takes
// what the generators write: no string escapes.
func DecodeEvent(p []byte) (Event, error) {
	d := eventDecoder{t: transcoder{p: bytes.Clone(p)}}
	d.t.ws()
	if err := d.value(nil); err != nil {
		return Event{}, err
	}
	d.t.ws()
	if d.t.i != len(d.t.p) {
		return Event{}, fmt.Errorf("event: trailing bytes at %d", d.t.i)
	}
	return Event{vals: d.vals}, nil
}

type eventDecoder struct {
	t    transcoder
	vals []val
}

func (d *eventDecoder) value(key []byte) error {
	t := &d.t
	if t.i >= len(t.p) {
		return t.errf("unexpected end")
	}
	switch b := t.p[t.i]; {
	case b == '{':
		return d.container(kObject, '}')
	case b == '[':
		if key != nil && IsLevelKey(key) && d.levels() {
			return nil
		}
		return d.container(kArray, ']')
	case b == '"':
		s, err := t.str()
		if err != nil {
			return err
		}
		d.vals = append(d.vals, decimalOrString(s))
		return nil
	case b == 't':
		_, err := t.lit(nil, "true", nil)
		d.vals = append(d.vals, val{kind: kTrue})
		return err
	case b == 'f':
		_, err := t.lit(nil, "false", nil)
		d.vals = append(d.vals, val{kind: kFalse})
		return err
	case b == 'n':
		_, err := t.lit(nil, "null", nil)
		d.vals = append(d.vals, val{kind: kNull})
		return err
	case b == '-' || b >= '0' && b <= '9':
		v, err := d.number()
		d.vals = append(d.vals, v)
		return err
	}
	return t.errf("unexpected byte")
}

// decimalOrString is a quoted string's val: a decimal when formatting its
// float64 gives its text back, else the string.
func decimalOrString(s []byte) val {
	if isDecimal(s) {
		if f, ok := parseDecimal(s); ok {
			prec := len(s) - bytes.IndexByte(s, '.') - 1
			var buf [64]byte
			if prec < 256 && bytes.Equal(strconv.AppendFloat(buf[:0], f, 'f', prec, 64), s) {
				return val{kind: kDecimal, f: f, prec: uint8(prec)}
			}
		}
	}
	return val{kind: kString, s: s}
}

// number reads a bare number: an integer, a float whose shortest form is
// its text, or raw.
func (d *eventDecoder) number() (val, error) {
	t := &d.t
	start := t.i
	num, isInt := t.numberText()
	if isInt {
		if v, err := strconv.ParseInt(string(num), 10, 64); err == nil && strconv.FormatInt(v, 10) == string(num) {
			return val{kind: kInt, i: v}, nil
		}
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return val{}, fmt.Errorf("number %q at %d", num, start)
	}
	if !isInt && strconv.FormatFloat(f, 'f', -1, 64) == string(num) {
		return val{kind: kFloat, f: f}, nil
	}
	return val{kind: kRaw, s: num, f: f}, nil
}

// container reads an object or an array; its val's n is set at its end.
func (d *eventDecoder) container(kind uint8, end byte) error {
	t := &d.t
	t.i++
	at := len(d.vals)
	d.vals = append(d.vals, val{kind: kind})
	t.ws()
	if t.i < len(t.p) && t.p[t.i] == end {
		t.i++
		return nil
	}
	for {
		t.ws()
		var key []byte
		if kind == kObject {
			if t.i >= len(t.p) || t.p[t.i] != '"' {
				return t.errf("want a key")
			}
			var err error
			if key, err = t.str(); err != nil {
				return err
			}
			d.vals = append(d.vals, val{kind: kKey, s: key})
			t.ws()
			if t.i >= len(t.p) || t.p[t.i] != ':' {
				return t.errf("want ':'")
			}
			t.i++
			t.ws()
		}
		if err := d.value(key); err != nil {
			return err
		}
		d.vals[at].n++
		t.ws()
		if t.i < len(t.p) && t.p[t.i] == ',' {
			t.i++
			continue
		}
		if t.i < len(t.p) && t.p[t.i] == end {
			t.i++
			return nil
		}
		return t.errf("want ',' or the end")
	}
}

// levels reads an array of [price, size] pairs (quoted decimals, as
// Binance's books, or bare numbers, as the seed's) as kLevels; false, with
// nothing consumed, for any other array.
func (d *eventDecoder) levels() bool {
	t := &d.t
	start, base := t.i, len(d.vals)
	d.vals = append(d.vals, val{kind: kLevels})
	numbers := 0
	if !t.pairs(func() bool {
		var v val
		switch {
		case t.i < len(t.p) && t.p[t.i] == '"':
			s, err := t.str()
			if err != nil {
				return false
			}
			if v = decimalOrString(s); v.kind != kDecimal {
				return false
			}
		case t.i < len(t.p) && (t.p[t.i] == '-' || t.p[t.i] >= '0' && t.p[t.i] <= '9'):
			var err error
			if v, err = d.number(); err != nil {
				return false
			}
		default:
			return false
		}
		d.vals = append(d.vals, v)
		numbers++
		return true
	}) {
		t.i, d.vals = start, d.vals[:base]
		return false
	}
	d.vals[base].n = numbers / 2
	return true
}

// AppendEvent appends ev encoded as e.
func AppendEvent(dst []byte, ev Event, e Encoding) ([]byte, error) {
	if len(ev.vals) == 0 {
		return dst, fmt.Errorf("append event: empty")
	}
	w := eventWriter{vals: ev.vals, enc: e}
	switch e {
	case JSON:
		return w.json(dst), nil
	case Msgpack, Packed:
		return w.msgpack(dst), nil
	}
	return dst, fmt.Errorf("append event: %v", e)
}

type eventWriter struct {
	vals []val
	i    int
	enc  Encoding
}

// json appends the value at w.i as JSON.
func (w *eventWriter) json(dst []byte) []byte {
	v := &w.vals[w.i]
	w.i++
	switch v.kind {
	case kObject, kArray, kLevels:
		open, end := byte('['), byte(']')
		if v.kind == kObject {
			open, end = '{', '}'
		}
		dst = append(dst, open)
		for k := range v.n {
			if k > 0 {
				dst = append(dst, ',')
			}
			switch v.kind {
			case kObject:
				dst = append(append(append(dst, '"'), w.vals[w.i].s...), '"', ':')
				w.i++
				dst = w.json(dst)
			case kArray:
				dst = w.json(dst)
			default: // a level
				dst = append(dst, '[')
				dst = w.json(dst)
				dst = append(dst, ',')
				dst = w.json(dst)
				dst = append(dst, ']')
			}
		}
		return append(dst, end)
	case kString, kKey:
		return append(append(append(dst, '"'), v.s...), '"')
	case kDecimal:
		return append(strconv.AppendFloat(append(dst, '"'), v.f, 'f', int(v.prec), 64), '"')
	case kInt:
		return strconv.AppendInt(dst, v.i, 10)
	case kFloat:
		return strconv.AppendFloat(dst, v.f, 'f', -1, 64)
	case kRaw:
		return append(dst, v.s...)
	case kTrue:
		return append(dst, "true"...)
	case kFalse:
		return append(dst, "false"...)
	}
	return append(dst, "null"...)
}

// msgpack appends the value at w.i as msgpack (packed: levels as float32
// pairs in a bin).
func (w *eventWriter) msgpack(dst []byte) []byte {
	v := &w.vals[w.i]
	w.i++
	switch v.kind {
	case kObject:
		dst = msgp.AppendMapHeader(dst, uint32(v.n))
		for range v.n {
			dst = appendStr(dst, w.vals[w.i].s)
			w.i++
			dst = w.msgpack(dst)
		}
		return dst
	case kArray:
		dst = msgp.AppendArrayHeader(dst, uint32(v.n))
		for range v.n {
			dst = w.msgpack(dst)
		}
		return dst
	case kLevels:
		if w.enc == Packed {
			dst = msgp.AppendBytesHeader(dst, uint32(v.n*LevelSize))
			for range 2 * v.n {
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(w.vals[w.i].number())))
				w.i++
			}
			return dst
		}
		dst = msgp.AppendArrayHeader(dst, uint32(v.n))
		for range v.n {
			dst = msgp.AppendArrayHeader(dst, 2)
			dst = w.msgpack(dst)
			dst = w.msgpack(dst)
		}
		return dst
	case kKey, kString:
		return appendStr(dst, v.s)
	case kDecimal, kFloat, kRaw:
		return msgp.AppendFloat64(dst, v.f)
	case kInt:
		return msgp.AppendInt64(dst, v.i)
	case kTrue:
		return msgp.AppendBool(dst, true)
	case kFalse:
		return msgp.AppendBool(dst, false)
	}
	return msgp.AppendNil(dst)
}

// number is a numeric val's value.
func (v *val) number() float64 {
	if v.kind == kInt {
		return float64(v.i)
	}
	return v.f
}
