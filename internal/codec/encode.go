package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/tinylib/msgp/msgp"
)

// Append appends the JSON event p encoded as e: p itself for JSON, else its
// msgpack or packed form (see the package comment). p is one JSON value as
// the generators write it: a Binance payload, a combined-stream wrapper
// {"stream":…,"data":…}, or an array of events. It does not allocate beyond
// dst's growth.
func Append(dst, p []byte, e Encoding) ([]byte, error) {
	switch e {
	case JSON:
		return append(dst, p...), nil
	case Msgpack, Packed:
	default:
		return dst, fmt.Errorf("append: %v", e)
	}
	t := transcoder{p: p, packed: e == Packed}
	t.ws()
	out, err := t.value(dst, nil)
	if err != nil {
		return dst, fmt.Errorf("%v: %w", e, err)
	}
	t.ws()
	if t.i != len(p) {
		return dst, fmt.Errorf("%v: trailing bytes at %d", e, t.i)
	}
	return out, nil
}

// IsLevelKey reports whether a packed message holds the value of key as
// float32 levels (when that value is an array of [price, size] pairs): the
// depth kinds' sides.
func IsLevelKey(key []byte) bool {
	switch string(key) {
	case "b", "a", "bids", "asks":
		return true
	}
	return false
}

// LevelSize is the bytes a level takes in a packed message: price and size
// as little-endian float32.
const LevelSize = 8

// maxHeader is the most bytes a msgpack map or array header takes.
const maxHeader = 5

type transcoder struct {
	p      []byte
	i      int
	packed bool
}

func (t *transcoder) errf(what string) error { return fmt.Errorf("%s at %d", what, t.i) }

func (t *transcoder) ws() {
	for t.i < len(t.p) {
		switch t.p[t.i] {
		case ' ', '\t', '\n', '\r':
			t.i++
		default:
			return
		}
	}
}

// value appends the msgpack form of the JSON value at t.i. key is the map key
// it is the value of (nil in an array or at the top).
func (t *transcoder) value(dst, key []byte) ([]byte, error) {
	if t.i >= len(t.p) {
		return dst, t.errf("unexpected end")
	}
	switch b := t.p[t.i]; {
	case b == '{':
		return t.object(dst)
	case b == '[':
		if t.packed && key != nil && IsLevelKey(key) {
			if out, ok := t.levels(dst); ok {
				return out, nil
			}
		}
		return t.array(dst)
	case b == '"':
		s, err := t.str()
		if err != nil {
			return dst, err
		}
		if isDecimal(s) {
			if f, ok := parseDecimal(s); ok {
				return msgp.AppendFloat64(dst, f), nil
			}
		}
		return appendStr(dst, s), nil
	case b == 't':
		return t.lit(dst, "true", msgp.AppendBool(dst, true))
	case b == 'f':
		return t.lit(dst, "false", msgp.AppendBool(dst, false))
	case b == 'n':
		return t.lit(dst, "null", msgp.AppendNil(dst))
	case b == '-' || b >= '0' && b <= '9':
		start := t.i
		num, isInt := t.numberText()
		if isInt {
			if v, err := strconv.ParseInt(string(num), 10, 64); err == nil {
				return msgp.AppendInt64(dst, v), nil
			}
		}
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			return dst, fmt.Errorf("number %q at %d", num, start)
		}
		return msgp.AppendFloat64(dst, f), nil
	}
	return dst, t.errf("unexpected byte")
}

// numberText reads a bare number's text (a '-' or digit at t.i), and
// whether it has only digits (an integer's form).
func (t *transcoder) numberText() (num []byte, isInt bool) {
	start := t.i
	t.i++
	isInt = true
	for t.i < len(t.p) {
		c := t.p[t.i]
		if c >= '0' && c <= '9' {
			t.i++
			continue
		}
		if c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			isInt = false
			t.i++
			continue
		}
		break
	}
	return t.p[start:t.i], isInt
}

func (t *transcoder) lit(dst []byte, s string, out []byte) ([]byte, error) {
	if len(t.p)-t.i < len(s) || string(t.p[t.i:t.i+len(s)]) != s {
		return dst, t.errf("bad literal")
	}
	t.i += len(s)
	return out, nil
}

// str consumes a JSON string without escapes (the generators write none)
// and returns its content.
func (t *transcoder) str() ([]byte, error) {
	start := t.i + 1
	for j := start; j < len(t.p); j++ {
		switch t.p[j] {
		case '"':
			t.i = j + 1
			return t.p[start:j], nil
		case '\\':
			return nil, fmt.Errorf("escaped string at %d", j)
		}
	}
	return nil, t.errf("unterminated string")
}

func appendStr(dst, s []byte) []byte {
	n := len(s)
	switch {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n < 1<<8:
		dst = append(dst, 0xd9, byte(n))
	case n < 1<<16:
		dst = append(dst, 0xda, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, s...)
}

// isDecimal reports whether s is a decimal as Binance quotes prices and
// quantities: digits, a point, digits, with an optional minus.
func isDecimal(s []byte) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	dot := -1
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	return dot > 0 && dot < len(s)-1
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseDecimal is strconv.ParseFloat for a decimal s (isDecimal), with the
// exact fast path for the usual case: when the digits, point removed, are an
// integer m below 2^53 and there are at most 22 decimals, m and 10^d are
// exact float64s and their quotient is correctly rounded, as ParseFloat's
// result is. Anything else goes to ParseFloat.
func parseDecimal(s []byte) (float64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	var m uint64
	decimals, seen := 0, false
	for _, c := range digits {
		if c == '.' {
			seen = true
			continue
		}
		if m >= 1<<53/10 {
			m = 1 << 53 // too many digits for the fast path
			break
		}
		m = m*10 + uint64(c-'0')
		if seen {
			decimals++
		}
	}
	if m < 1<<53 && decimals < len(pow10) {
		f := float64(m) / pow10[decimals]
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(string(s), 64)
	return f, err == nil
}

// open leaves room for a container's header, whose count is known only at
// its end; close writes it and closes the gap.
func open(dst []byte) ([]byte, int) {
	at := len(dst)
	return append(dst, make([]byte, maxHeader)...), at
}

func closeHeader(dst []byte, at int, n uint32, isMap bool) []byte {
	var hdr [maxHeader]byte
	var h []byte
	if isMap {
		h = msgp.AppendMapHeader(hdr[:0], n)
	} else {
		h = msgp.AppendArrayHeader(hdr[:0], n)
	}
	copy(dst[at:], h)
	gap := maxHeader - len(h)
	if gap == 0 {
		return dst
	}
	copy(dst[at+len(h):], dst[at+maxHeader:])
	return dst[:len(dst)-gap]
}

func (t *transcoder) object(dst []byte) ([]byte, error) {
	t.i++ // '{'
	dst, at := open(dst)
	var n uint32
	t.ws()
	if t.i < len(t.p) && t.p[t.i] == '}' {
		t.i++
		return closeHeader(dst, at, 0, true), nil
	}
	for {
		t.ws()
		if t.i >= len(t.p) || t.p[t.i] != '"' {
			return dst, t.errf("want a key")
		}
		key, err := t.str()
		if err != nil {
			return dst, err
		}
		dst = appendStr(dst, key)
		t.ws()
		if t.i >= len(t.p) || t.p[t.i] != ':' {
			return dst, t.errf("want ':'")
		}
		t.i++
		t.ws()
		if dst, err = t.value(dst, key); err != nil {
			return dst, err
		}
		n++
		t.ws()
		if t.i < len(t.p) && t.p[t.i] == ',' {
			t.i++
			continue
		}
		if t.i < len(t.p) && t.p[t.i] == '}' {
			t.i++
			return closeHeader(dst, at, n, true), nil
		}
		return dst, t.errf("want ',' or '}'")
	}
}

func (t *transcoder) array(dst []byte) ([]byte, error) {
	t.i++ // '['
	dst, at := open(dst)
	var n uint32
	t.ws()
	if t.i < len(t.p) && t.p[t.i] == ']' {
		t.i++
		return closeHeader(dst, at, 0, false), nil
	}
	for {
		t.ws()
		var err error
		if dst, err = t.value(dst, nil); err != nil {
			return dst, err
		}
		n++
		t.ws()
		if t.i < len(t.p) && t.p[t.i] == ',' {
			t.i++
			continue
		}
		if t.i < len(t.p) && t.p[t.i] == ']' {
			t.i++
			return closeHeader(dst, at, n, false), nil
		}
		return dst, t.errf("want ',' or ']'")
	}
}

// levels appends the array of [price, size] pairs at t.i (quoted decimals or
// bare numbers) as one msgpack bin of little-endian float32 pairs. ok is false, with t and dst as they were,
// when the array is anything else (then it is written as msgpack).
func (t *transcoder) levels(dst []byte) ([]byte, bool) {
	start, base := t.i, len(dst)
	// The bin header's size is known at the end: leave room for the
	// largest (bin32) and close the gap after.
	dst = append(dst, 0, 0, 0, 0, 0)
	body := len(dst)
	if !t.pairs(func() bool {
		f, ok := t.levelNumber()
		if ok {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f)))
		}
		return ok
	}) {
		t.i = start
		return dst[:base], false
	}
	n := len(dst) - body
	var hdr [maxHeader]byte
	h := msgp.AppendBytesHeader(hdr[:0], uint32(n))
	copy(dst[base:], h)
	if gap := maxHeader - len(h); gap > 0 {
		copy(dst[base+len(h):], dst[body:])
		dst = dst[:len(dst)-gap]
	}
	return dst, true
}

// pairs walks the array of [price, size] pairs whose '[' is at t.i to its
// ']', calling number at each of a pair's two values (it reads the value,
// or reports false). false: the array is anything else, t.i somewhere in
// it (the caller puts it back).
func (t *transcoder) pairs(number func() bool) bool {
	t.i++ // '['
	t.ws()
	if t.i < len(t.p) && t.p[t.i] == ']' {
		t.i++
		return true
	}
	for {
		t.ws()
		if t.i >= len(t.p) || t.p[t.i] != '[' {
			return false
		}
		t.i++
		for k := range 2 {
			t.ws()
			if !number() {
				return false
			}
			t.ws()
			if k == 0 {
				if t.i >= len(t.p) || t.p[t.i] != ',' {
					return false
				}
				t.i++
			}
		}
		if t.i >= len(t.p) || t.p[t.i] != ']' {
			return false
		}
		t.i++
		t.ws()
		if t.i < len(t.p) && t.p[t.i] == ',' {
			t.i++
			continue
		}
		if t.i < len(t.p) && t.p[t.i] == ']' {
			t.i++
			return true
		}
		return false
	}
}

// levelNumber reads a level's price or size: a quoted decimal (Binance's
// books) or a bare number (the seed's).
func (t *transcoder) levelNumber() (float64, bool) {
	if t.i < len(t.p) && t.p[t.i] == '"' {
		s, err := t.str()
		if err != nil || !isDecimal(s) {
			return 0, false
		}
		return parseDecimal(s)
	}
	start := t.i
	for t.i < len(t.p) && (t.p[t.i] >= '0' && t.p[t.i] <= '9' || t.p[t.i] == '.' || t.p[t.i] == '-' || t.p[t.i] == 'e' || t.p[t.i] == 'E' || t.p[t.i] == '+') {
		t.i++
	}
	f, err := strconv.ParseFloat(string(t.p[start:t.i]), 64)
	return f, t.i > start && err == nil
}

// Levels calls fn with each level of a packed side (the bin's content), in
// order. It returns false if side is not a whole number of levels.
func Levels(side []byte, fn func(price, size float32)) bool {
	if len(side)%LevelSize != 0 {
		return false
	}
	for i := 0; i < len(side); i += LevelSize {
		fn(math.Float32frombits(binary.LittleEndian.Uint32(side[i:])),
			math.Float32frombits(binary.LittleEndian.Uint32(side[i+4:])))
	}
	return true
}
