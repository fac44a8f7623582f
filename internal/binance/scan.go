package binance

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// This file scans the few fields the soak needs (event time, sequence ids,
// kline identity, shutdown notice) out of one event payload without decoding
// it: one pass over the bytes, no allocation. It is on the per-message path of
// every worker, so it must cost less than the library that delivered the frame.

// SplitCombined splits a combined-stream payload {"stream":"<name>","data":<payload>}
// into the stream name and the data bytes, both subslices of p (no copy). Keys
// may come in any order and other keys are skipped; a repeated key counts by
// its last occurrence. ok is false if p is not a JSON object holding a string
// "stream" and a "data" value, or if the name contains a JSON escape (stream
// names never need one, and a raw escaped name would not equal the decoded one).
func SplitCombined(p []byte) (stream, data []byte, ok bool) {
	if stream, data, ok = splitUsual(p); ok {
		return stream, data, ok
	}
	c := cursor{p: p}
	c.ws()
	if !c.byte('{') {
		return nil, nil, false
	}
	c.ws()
	if c.byte('}') {
		return nil, nil, false
	}
	var haveStream bool
	for {
		key, kesc, kok := c.str()
		if !kok {
			return nil, nil, false
		}
		c.ws()
		if !c.byte(':') {
			return nil, nil, false
		}
		c.ws()
		switch {
		case keyIs(key, kesc, "stream"):
			start := c.i
			s, esc, sok := c.str()
			if !sok {
				c.i = start
				if !c.skip() {
					return nil, nil, false
				}
				stream, haveStream = nil, false
				break
			}
			stream, haveStream = s, !esc
		case keyIs(key, kesc, "data"):
			start := c.i
			if !c.skip() {
				return nil, nil, false
			}
			data = p[start:c.i]
		default:
			if !c.skip() {
				return nil, nil, false
			}
		}
		c.ws()
		if c.byte(',') {
			c.ws()
			continue
		}
		if !c.byte('}') {
			return nil, nil, false
		}
		break
	}
	c.ws()
	if c.i != len(p) || !haveStream || data == nil {
		return nil, nil, false
	}
	return stream, data, true
}

// splitUsual is the fast path of SplitCombined for the shape Binance writes:
// {"stream":"<name>","data":<payload>} in that key order, compact. The data is
// everything between "data": and the wrapper's closing brace; its own end is
// not looked for (Scan reads what it needs from its start), which saves a walk
// over the whole payload on every message.
func splitUsual(p []byte) (stream, data []byte, ok bool) {
	const head, mid = `{"stream":"`, `","data":`
	if len(p) < len(head)+len(mid)+2 || string(p[:len(head)]) != head {
		return nil, nil, false
	}
	rest := p[len(head):]
	q := bytes.IndexByte(rest, '"')
	if q <= 0 || bytes.IndexByte(rest[:q], '\\') >= 0 || len(rest)-q < len(mid)+2 || string(rest[q:q+len(mid)]) != mid {
		return nil, nil, false
	}
	if data, ok = usualData(p, len(head)+q+len(mid)); !ok {
		return nil, nil, false
	}
	return rest[:q], data, true
}

// usualData is the data of a payload in the usual shape, from p[start:] (just
// after "data":) to the wrapper's closing brace, trailing whitespace aside: an
// object or an array, not looked into.
func usualData(p []byte, start int) (data []byte, ok bool) {
	end := len(p) - 1
	for end > 0 && (p[end] == ' ' || p[end] == '\n' || p[end] == '\r' || p[end] == '\t') {
		end--
	}
	if end < start || p[end] != '}' {
		return nil, false
	}
	d := p[start:end]
	if len(d) < 2 || !(d[0] == '{' && d[len(d)-1] == '}' || d[0] == '[' && d[len(d)-1] == ']') {
		return nil, false
	}
	return d, true
}

// CombinedPrefix is how a combined payload of stream name starts in the shape
// Binance writes it: {"stream":"<name>","data":. Names with a quote or a
// backslash have none (nil).
func CombinedPrefix(name string) []byte {
	if strings.ContainsAny(name, `"\`) {
		return nil
	}
	return []byte(`{"stream":"` + name + `","data":`)
}

// SplitPrefixed is SplitCombined for a payload expected to be of the stream
// whose CombinedPrefix is prefix: when p starts with prefix and ok is true,
// data is what SplitCombined returns (and the stream its name). It is false
// whenever p does not start with prefix (call SplitCombined then), and costs
// one comparison instead of finding the name.
func SplitPrefixed(p, prefix []byte) (data []byte, ok bool) {
	if len(prefix) == 0 || len(p) < len(prefix)+2 || string(p[:len(prefix)]) != string(prefix) {
		return nil, false
	}
	return usualData(p, len(prefix))
}

// Fields holds the values Scan finds in one event payload (the raw payload, or
// the data part of a combined one). A field that is absent, or whose value is
// not of the expected JSON type (an integer in int64 range, a boolean, a
// string), is left zero/false.
type Fields struct {
	E           int64 // event time as found (ms or µs); 0 if absent
	First       int64 // first sequence id: trade t, aggTrade a, depth diff U, kline k.f, bookTicker u, depthN lastUpdateId
	Last        int64 // last sequence id: trade t, aggTrade a, depth diff u, kline k.L, bookTicker u, depthN lastUpdateId
	HasSeq      bool  // First and Last were both found
	KlineOpen   int64 // kline k.t (open time), so repeated updates of one kline are recognised
	KlineClosed bool  // kline k.x
	Shutdown    bool  // payload is {"e":"serverShutdown",...}
}

// Scan fills f from payload p of a stream of kind k. It does not allocate.
// Keys may come in any order; nested objects, arrays and strings are skipped
// as units, so a "t" inside "k":{...} is not taken for the trade id and text
// inside a string value is never taken for a key. A key repeated at one level
// counts by its first occurrence. Scan stops as soon as it holds every field
// the kind has (event time, both sequence ends, the kline's fields): the rest
// of the payload, often the bulk of it (depth levels, ticker arrays), is
// neither read nor validated. For an array payload (!miniTicker@arr,
// !ticker_<w>@arr) the first element is scanned. The event type "e" and event
// time "E" are read for every kind, so a serverShutdown notice is recognised
// on any stream. Scan returns false, with f in an unspecified state, if p is
// not a JSON object (or array) it can scan.
func Scan(p []byte, k Kind, f *Fields) bool {
	*f = Fields{}
	c := cursor{p: p}
	c.ws()
	if c.i < len(p) && p[c.i] == '[' {
		c.i++
		c.ws()
		if c.byte(']') {
			c.ws()
			return c.i == len(p)
		}
		for first := true; ; first = false {
			if first && c.i < len(p) && p[c.i] == '{' {
				if !scanEvent(&c, k, f) {
					return false
				}
				if c.done {
					return true
				}
			} else if !c.skip() {
				return false
			}
			c.ws()
			if c.byte(',') {
				c.ws()
				continue
			}
			if !c.byte(']') {
				return false
			}
			break
		}
	} else if !scanEvent(&c, k, f) {
		return false
	}
	if c.done {
		return true
	}
	c.ws()
	return c.i == len(p)
}

// Presence bits of the fields, so that HasSeq means "both ends found" and
// Scan knows when it has everything.
const (
	haveFirst = 1 << iota
	haveLast
	haveE
	haveE0 // "e"
	haveK  // the kline object
)

// needs is the set of fields after which Scan stops reading a payload of kind k.
func needs(k Kind) uint8 {
	var n uint8
	if k.HasEventTime() {
		n |= haveE
	}
	switch k.Seq() {
	case SeqNone:
	case SeqKline:
		n |= haveK
	default:
		n |= haveFirst | haveLast
	}
	if n == 0 {
		return 0xff // nothing to stop for: read it all
	}
	return n
}

// scanEvent scans one event object at c and leaves c after its closing brace.
func scanEvent(c *cursor, k Kind, f *Fields) bool {
	if !c.byte('{') {
		return false
	}
	c.ws()
	if c.byte('}') {
		return true
	}
	var have, seen uint8 // seen: keys met (first occurrence wins); have: sequence ends found as integers
	need := needs(k)
	for {
		key, kesc, ok := c.shortKey()
		if !ok {
			if key, kesc, ok = c.str(); !ok {
				return false
			}
			c.ws()
			if !c.byte(':') {
				return false
			}
		}
		c.ws()
		switch {
		case seen&haveE0 == 0 && keyIs(key, kesc, "e"):
			seen |= haveE0
			start := c.i
			if s, esc, sok := c.str(); sok {
				f.Shutdown = keyIs(s, esc, "serverShutdown")
			} else {
				c.i = start
				if !c.skip() {
					return false
				}
			}
		case seen&haveE == 0 && keyIs(key, kesc, "E"):
			seen |= haveE
			f.E, _, ok = c.intValue()
			if !ok {
				return false
			}
		case k == KindKline && seen&haveK == 0 && keyIs(key, kesc, "k"):
			seen |= haveK
			if c.i < len(c.p) && c.p[c.i] == '{' {
				// With every other field already found, the kline's last
				// wanted field ("x") ends the scan: its rest is not walked.
				if !scanKline(c, f, &have, seen&need == need) {
					return false
				}
			} else if !c.skip() {
				return false
			}
		default:
			bits := seqKey(k, key, kesc) &^ seen
			if bits == 0 {
				if !c.skip() {
					return false
				}
				break
			}
			seen |= bits
			v, isInt, ok := c.intValue()
			if !ok {
				return false
			}
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
			c.done = true
			f.HasSeq = have == haveFirst|haveLast
			return true
		}
		c.ws()
		if c.byte(',') {
			c.ws()
			continue
		}
		if !c.byte('}') {
			return false
		}
		break
	}
	f.HasSeq = have == haveFirst|haveLast
	return true
}

// seqKey reports which ends of the sequence range key carries for kind k.
func seqKey(k Kind, key []byte, esc bool) uint8 {
	switch k {
	case KindTrade, KindBlockTrade:
		if keyIs(key, esc, "t") {
			return haveFirst | haveLast
		}
	case KindAggTrade:
		if keyIs(key, esc, "a") {
			return haveFirst | haveLast
		}
	case KindDepthDiff:
		if keyIs(key, esc, "U") {
			return haveFirst
		}
		if keyIs(key, esc, "u") {
			return haveLast
		}
	case KindBookTicker:
		if keyIs(key, esc, "u") {
			return haveFirst | haveLast
		}
	case KindDepthPartial:
		if keyIs(key, esc, "lastUpdateId") {
			return haveFirst | haveLast
		}
	}
	return 0
}

// scanKline scans the kline object "k":{...}: t open time, f first and L last
// trade id, x closed. When last (the event needs nothing else), it stops at
// the fourth of them and marks the scan done.
func scanKline(c *cursor, f *Fields, have *uint8, last bool) bool {
	c.i++ // '{'
	c.ws()
	if c.byte('}') {
		return true
	}
	const kt, kx = 1 << 5, 1 << 6 // beside haveFirst and haveLast
	var seen uint8
	for {
		key, kesc, ok := c.shortKey()
		if !ok {
			if key, kesc, ok = c.str(); !ok {
				return false
			}
			c.ws()
			if !c.byte(':') {
				return false
			}
		}
		c.ws()
		switch {
		case seen&kt == 0 && keyIs(key, kesc, "t"):
			seen |= kt
			f.KlineOpen, _, ok = c.intValue()
		case seen&haveFirst == 0 && keyIs(key, kesc, "f"):
			seen |= haveFirst
			var isInt bool
			f.First, isInt, ok = c.intValue()
			if isInt {
				*have |= haveFirst
			}
		case seen&haveLast == 0 && keyIs(key, kesc, "L"):
			seen |= haveLast
			var isInt bool
			f.Last, isInt, ok = c.intValue()
			if isInt {
				*have |= haveLast
			}
		case seen&kx == 0 && keyIs(key, kesc, "x"):
			seen |= kx
			f.KlineClosed, ok = c.boolValue()
		default:
			ok = c.skip()
		}
		if !ok {
			return false
		}
		if last && seen == kt|haveFirst|haveLast|kx {
			c.done = true
			return true
		}
		c.ws()
		if c.byte(',') {
			c.ws()
			continue
		}
		return c.byte('}')
	}
}

// cursor walks a JSON text. Its methods advance i past what they consume.
type cursor struct {
	p    []byte
	i    int
	done bool // Scan has every field it needs and stopped early
}

func (c *cursor) ws() {
	if c.i < len(c.p) && c.p[c.i] > ' ' {
		return // compact JSON: the usual case
	}
	for c.i < len(c.p) {
		switch c.p[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// byte consumes b if it is next.
func (c *cursor) byte(b byte) bool {
	if c.i < len(c.p) && c.p[c.i] == b {
		c.i++
		return true
	}
	return false
}

// str consumes a string and returns its raw content (between the quotes) and
// whether the content holds an escape.
func (c *cursor) str() (raw []byte, esc, ok bool) {
	if c.i >= len(c.p) || c.p[c.i] != '"' {
		return nil, false, false
	}
	p, start := c.p, c.i+1
	for i := start; i < len(p); i++ {
		switch p[i] {
		case '"':
			c.i = i + 1
			return p[start:i], esc, true
		case '\\':
			esc = true
			i++ // the escaped byte cannot end the string
		}
	}
	return nil, false, false
}

// shortKey consumes a one-byte key and its colon written compactly ("e":),
// the usual form of an event's keys, as str, ws and byte(':') would; ok is
// false, and nothing consumed, for anything else.
func (c *cursor) shortKey() (raw []byte, esc, ok bool) {
	i := c.i
	if i+4 > len(c.p) || c.p[i] != '"' || c.p[i+2] != '"' || c.p[i+3] != ':' || c.p[i+1] == '"' || c.p[i+1] == '\\' {
		return nil, false, false
	}
	c.i = i + 4
	return c.p[i+1 : i+2], false, true
}

// intValue consumes any value. If it is a JSON integer within int64 range, it
// is returned with isInt true; any other value (a fraction, an exponent,
// null, a string, a container) is skipped and yields 0, false. ok is false
// only if the value is malformed.
func (c *cursor) intValue() (v int64, isInt, ok bool) {
	start := c.i
	i := c.i
	neg := i < len(c.p) && c.p[i] == '-'
	if neg {
		i++
	}
	digits := i
	u, i := DigitRun(c.p, i) // wraps past 19 digits: overflow below catches it
	n := i - digits
	overflow := n > 19 || n == 19 && u > 1<<63
	plain := n > 0 && !(n > 1 && c.p[digits] == '0') && !overflow &&
		(i == len(c.p) || c.p[i] != '.' && c.p[i] != 'e' && c.p[i] != 'E') &&
		(neg || u <= 1<<63-1)
	if !plain {
		c.i = start
		return 0, false, c.skip()
	}
	c.i = i
	if neg {
		return int64(-u), true, true // -u wraps to MinInt64 for u == 1<<63
	}
	return int64(u), true, true
}

// DigitRun returns the value of the run of ASCII digits at p[i:] and the
// index after it; the value wraps past 19 digits. It reads eight digits at a
// time where eight follow (event times and ids have 13 to 16).
func DigitRun(p []byte, i int) (u uint64, end int) {
	for ; i+8 <= len(p); i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		if w&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 || (w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 {
			break
		}
		u = u*1e8 + eightDigits(w)
	}
	for ; i < len(p); i++ {
		d := p[i] - '0' // bytes below '0' wrap above 9
		if d > 9 {
			break
		}
		u = u*10 + uint64(d)
	}
	return u, i
}

// eightDigits is the value of eight ASCII digits loaded little-endian (the
// first digit in the lowest byte): pairs, then fours, then all eight.
func eightDigits(w uint64) uint64 {
	w -= 0x3030303030303030
	w = (w*10 + w>>8) & 0x00FF00FF00FF00FF
	w = (w*100 + w>>16) & 0x0000FFFF0000FFFF
	return (w*10000 + w>>32) & 0xFFFFFFFF
}

// boolValue consumes any value and reports whether it is the literal true.
func (c *cursor) boolValue() (v, ok bool) {
	start := c.i
	if !c.skip() {
		return false, false
	}
	return c.i-start == 4 && c.p[start] == 't', true
}

// skip consumes one value of any type. Containers are skipped by counting
// brackets outside strings; their inner structure is not validated.
func (c *cursor) skip() bool {
	if c.i >= len(c.p) {
		return false
	}
	switch b := c.p[c.i]; {
	case b == '"':
		_, _, ok := c.str()
		return ok
	case b == '{' || b == '[':
		depth := 0
		for i := c.i; i < len(c.p); i++ {
			switch c.p[i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					c.i = i + 1
					return true
				}
			case '"':
				c.i = i
				if _, _, ok := c.str(); !ok {
					return false
				}
				i = c.i - 1
			}
		}
		return false
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case b == '-' || b >= '0' && b <= '9':
		i := c.i + 1
		for ; i < len(c.p); i++ {
			switch c.p[i] {
			case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.', 'e', 'E', '+', '-':
				continue
			}
			break
		}
		c.i = i
		return true
	}
	return false
}

func (c *cursor) literal(s string) bool {
	if len(c.p)-c.i >= len(s) && string(c.p[c.i:c.i+len(s)]) == s {
		c.i += len(s)
		return true
	}
	return false
}

// keyIs reports whether the raw string content raw, which holds escapes if
// esc, decodes to the ASCII string want. It is small enough to be inlined, so
// the comparison with a constant want compiles to a few instructions.
func keyIs(raw []byte, esc bool, want string) bool {
	if !esc {
		return string(raw) == want
	}
	return escapedIs(raw, want)
}

// escapedIs is keyIs for content that holds escapes.
func escapedIs(raw []byte, want string) bool {
	j := 0
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if b == '\\' {
			if i+1 >= len(raw) {
				return false
			}
			i++
			switch raw[i] {
			case '"', '\\', '/':
				b = raw[i]
			case 'b':
				b = '\b'
			case 'f':
				b = '\f'
			case 'n':
				b = '\n'
			case 'r':
				b = '\r'
			case 't':
				b = '\t'
			case 'u':
				if i+4 >= len(raw) {
					return false
				}
				var r rune
				for _, h := range raw[i+1 : i+5] {
					r <<= 4
					switch {
					case h >= '0' && h <= '9':
						r |= rune(h - '0')
					case h >= 'a' && h <= 'f':
						r |= rune(h - 'a' + 10)
					case h >= 'A' && h <= 'F':
						r |= rune(h - 'A' + 10)
					default:
						return false
					}
				}
				if r >= 0x80 {
					return false // want is ASCII
				}
				b = byte(r)
				i += 4
			default:
				return false
			}
		}
		if j >= len(want) || want[j] != b {
			return false
		}
		j++
	}
	return j == len(want)
}
