package binance

import (
	"github.com/tinylib/msgp/msgp"
)

// This file is scan.go for events in msgpack (and packed, whose depth levels
// are bins the scanner skips): the same fields, the same rules, no
// allocation. The events are the JSON ones as maps with the same keys (see
// internal/codec).

// SplitCombinedMsgpack is SplitCombined for a msgpack combined-stream
// payload, a map {"stream": <str>, "data": <any>}: the name and the data's
// bytes, both subslices of p. Keys may come in any order and others are
// skipped; a repeated key counts by its last occurrence.
func SplitCombinedMsgpack(p []byte) (stream, data []byte, ok bool) {
	n, b, err := msgp.ReadMapHeaderBytes(p)
	if err != nil {
		return nil, nil, false
	}
	var haveStream bool
	for range n {
		var key []byte
		if key, b, err = msgp.ReadMapKeyZC(b); err != nil {
			return nil, nil, false
		}
		switch string(key) {
		case "stream":
			if msgp.NextType(b) == msgp.StrType {
				if stream, b, err = msgp.ReadStringZC(b); err != nil {
					return nil, nil, false
				}
				haveStream = true
				continue
			}
			stream, haveStream = nil, false
			if b, err = msgp.Skip(b); err != nil {
				return nil, nil, false
			}
		case "data":
			start := b
			if b, err = msgp.Skip(b); err != nil {
				return nil, nil, false
			}
			data = start[:len(start)-len(b)]
		default:
			if b, err = msgp.Skip(b); err != nil {
				return nil, nil, false
			}
		}
	}
	if len(b) != 0 || !haveStream || data == nil {
		return nil, nil, false
	}
	return stream, data, true
}

// MsgpackPrefix is how a msgpack combined payload of stream name starts in
// the shape the encoders write it: a two-entry map, "stream", the name,
// "data"; the data is everything after it.
func MsgpackPrefix(name string) []byte {
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendString(b, "stream")
	b = msgp.AppendString(b, name)
	return msgp.AppendString(b, "data")
}

// SplitPrefixedMsgpack is SplitPrefixed for msgpack: when p starts with
// prefix (MsgpackPrefix of the stream expected), the data is the rest of p.
// It is false whenever p does not (call SplitCombinedMsgpack then).
func SplitPrefixedMsgpack(p, prefix []byte) (data []byte, ok bool) {
	if len(prefix) == 0 || len(p) <= len(prefix) || string(p[:len(prefix)]) != string(prefix) {
		return nil, false
	}
	return p[len(prefix):], true
}

// ScanMsgpack is Scan for a msgpack event: it fills f from p, an event map
// of kind k (or an array of them, whose first element is scanned), by the
// same rules. A value that is not a msgpack integer in int64 range (a float,
// a string, a bin) leaves its field zero, as a non-integer does in JSON. It
// does not allocate.
func ScanMsgpack(p []byte, k Kind, f *Fields) bool {
	*f = Fields{}
	b := p
	var err error
	if msgp.NextType(b) == msgp.ArrayType {
		var n uint32
		if n, b, err = msgp.ReadArrayHeaderBytes(b); err != nil {
			return false
		}
		for i := range n {
			if i == 0 && msgp.NextType(b) == msgp.MapType {
				var done bool
				if b, done = scanMsgpackEvent(b, k, f); b == nil {
					return false
				}
				if done {
					return true
				}
				continue
			}
			if b, err = msgp.Skip(b); err != nil {
				return false
			}
		}
		return len(b) == 0
	}
	if msgp.NextType(b) != msgp.MapType {
		return false
	}
	var done bool
	if b, done = scanMsgpackEvent(b, k, f); b == nil {
		return false
	}
	return done || len(b) == 0
}

// empty is what scanMsgpackEvent returns for "nothing left" (nil means failure).
var empty = []byte{}

// rest is b, or empty when b is nil (a success that consumed everything).
func rest(b []byte) []byte {
	if b == nil {
		return empty
	}
	return b
}

// scanMsgpackEvent scans one event map at b and returns what follows it (nil
// if it is malformed), and whether it stopped early with every field needed.
func scanMsgpackEvent(b []byte, k Kind, f *Fields) ([]byte, bool) {
	n, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return nil, false
	}
	var have, seen uint8
	need := needs(k)
	for range n {
		var key []byte
		if key, b, err = msgp.ReadMapKeyZC(b); err != nil {
			return nil, false
		}
		switch {
		case seen&haveE0 == 0 && string(key) == "e":
			seen |= haveE0
			if msgp.NextType(b) == msgp.StrType {
				var s []byte
				if s, b, err = msgp.ReadStringZC(b); err != nil {
					return nil, false
				}
				f.Shutdown = string(s) == "serverShutdown"
			} else if b, err = msgp.Skip(b); err != nil {
				return nil, false
			}
		case seen&haveE == 0 && string(key) == "E":
			seen |= haveE
			var ok bool
			if f.E, _, b, ok = msgpackInt(b); !ok {
				return nil, false
			}
		case k == KindKline && seen&haveK == 0 && string(key) == "k":
			seen |= haveK
			if msgp.NextType(b) == msgp.MapType {
				if b = scanKlineMsgpack(b, f, &have); b == nil {
					return nil, false
				}
			} else if b, err = msgp.Skip(b); err != nil {
				return nil, false
			}
		default:
			bits := seqKey(k, key, false) &^ seen
			if bits == 0 {
				if b, err = msgp.Skip(b); err != nil {
					return nil, false
				}
				break
			}
			seen |= bits
			v, isInt, nb, ok := msgpackInt(b)
			if !ok {
				return nil, false
			}
			b = nb
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
			f.HasSeq = have == haveFirst|haveLast
			return rest(b), true
		}
	}
	f.HasSeq = have == haveFirst|haveLast
	return rest(b), false
}

// scanKlineMsgpack scans the kline map "k": t open time, f first and L last
// trade id, x closed. It returns what follows, nil if malformed.
func scanKlineMsgpack(b []byte, f *Fields, have *uint8) []byte {
	n, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return nil
	}
	const kt, kx = 1 << 5, 1 << 6
	var seen uint8
	for range n {
		var key []byte
		if key, b, err = msgp.ReadMapKeyZC(b); err != nil {
			return nil
		}
		ok := true
		switch {
		case seen&kt == 0 && string(key) == "t":
			seen |= kt
			f.KlineOpen, _, b, ok = msgpackInt(b)
		case seen&haveFirst == 0 && string(key) == "f":
			seen |= haveFirst
			var isInt bool
			f.First, isInt, b, ok = msgpackInt(b)
			if isInt {
				*have |= haveFirst
			}
		case seen&haveLast == 0 && string(key) == "L":
			seen |= haveLast
			var isInt bool
			f.Last, isInt, b, ok = msgpackInt(b)
			if isInt {
				*have |= haveLast
			}
		case seen&kx == 0 && string(key) == "x":
			seen |= kx
			if msgp.NextType(b) == msgp.BoolType {
				f.KlineClosed, b, err = msgp.ReadBoolBytes(b)
			} else {
				b, err = msgp.Skip(b)
			}
			ok = err == nil
		default:
			b, err = msgp.Skip(b)
			ok = err == nil
		}
		if !ok {
			return nil
		}
	}
	return rest(b)
}

// msgpackInt consumes any value. If it is an integer within int64 range it
// is returned with isInt true; anything else is skipped and yields 0, false.
// ok is false only if the value is malformed.
func msgpackInt(b []byte) (v int64, isInt bool, o []byte, ok bool) {
	switch msgp.NextType(b) {
	case msgp.IntType, msgp.UintType:
		if v, o, err := msgp.ReadInt64Bytes(b); err == nil {
			return v, true, o, true
		}
	}
	o, err := msgp.Skip(b)
	return 0, false, o, err == nil
}
