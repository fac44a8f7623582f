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
	n, b, ok := mpMap(p)
	if !ok {
		return nil, nil, false
	}
	var haveStream bool
	for range n {
		var key []byte
		if key, b, ok = mpStr(b, true); !ok {
			return nil, nil, false
		}
		switch string(key) {
		case "stream":
			if mpIsStr(b) {
				if stream, b, ok = mpStr(b, false); !ok {
					return nil, nil, false
				}
				haveStream = true
				continue
			}
			stream, haveStream = nil, false
			if b, ok = mpSkip(b); !ok {
				return nil, nil, false
			}
		case "data":
			start := b
			if b, ok = mpSkip(b); !ok {
				return nil, nil, false
			}
			data = start[:len(start)-len(b)]
		default:
			if b, ok = mpSkip(b); !ok {
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
	var ok bool
	if mpIsArray(b) {
		var n int
		if n, b, ok = mpArray(b); !ok {
			return false
		}
		for i := range n {
			if i == 0 && mpIsMap(b) {
				var done bool
				if b, done, ok = scanMsgpackEvent(b, k, f); !ok {
					return false
				}
				if done {
					return true
				}
				continue
			}
			if b, ok = mpSkip(b); !ok {
				return false
			}
		}
		return len(b) == 0
	}
	if !mpIsMap(b) {
		return false
	}
	var done bool
	if b, done, ok = scanMsgpackEvent(b, k, f); !ok {
		return false
	}
	return done || len(b) == 0
}

// scanMsgpackEvent scans one event map at b and returns what follows it,
// whether it stopped early with every field needed, and false if the map is
// malformed.
func scanMsgpackEvent(b []byte, k Kind, f *Fields) (rest []byte, done, ok bool) {
	n, b, ok := mpMap(b)
	if !ok {
		return nil, false, false
	}
	var have, seen uint8
	need := needs(k)
	for range n {
		var key []byte
		if key, b, ok = mpStr(b, true); !ok {
			return nil, false, false
		}
		switch {
		case seen&haveE0 == 0 && string(key) == "e":
			seen |= haveE0
			if mpIsStr(b) {
				var s []byte
				if s, b, ok = mpStr(b, false); !ok {
					return nil, false, false
				}
				f.Shutdown = string(s) == "serverShutdown"
			} else if b, ok = mpSkip(b); !ok {
				return nil, false, false
			}
		case seen&haveE == 0 && string(key) == "E":
			seen |= haveE
			if f.E, _, b, ok = mpInt(b); !ok {
				return nil, false, false
			}
		case k == KindKline && seen&haveK == 0 && string(key) == "k":
			seen |= haveK
			if mpIsMap(b) {
				if b, ok = scanKlineMsgpack(b, f, &have); !ok {
					return nil, false, false
				}
			} else if b, ok = mpSkip(b); !ok {
				return nil, false, false
			}
		default:
			bits := seqKey(k, key, false) &^ seen
			if bits == 0 {
				if b, ok = mpSkip(b); !ok {
					return nil, false, false
				}
				break
			}
			seen |= bits
			var v int64
			var isInt bool
			if v, isInt, b, ok = mpInt(b); !ok {
				return nil, false, false
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
			f.HasSeq = have == haveFirst|haveLast
			return b, true, true
		}
	}
	f.HasSeq = have == haveFirst|haveLast
	return b, false, true
}

// scanKlineMsgpack scans the kline map "k": t open time, f first and L last
// trade id, x closed. It returns what follows, and false if malformed.
func scanKlineMsgpack(b []byte, f *Fields, have *uint8) ([]byte, bool) {
	n, b, ok := mpMap(b)
	if !ok {
		return nil, false
	}
	const kt, kx = 1 << 5, 1 << 6
	var seen uint8
	for range n {
		var key []byte
		if key, b, ok = mpStr(b, true); !ok {
			return nil, false
		}
		switch {
		case seen&kt == 0 && string(key) == "t":
			seen |= kt
			f.KlineOpen, _, b, ok = mpInt(b)
		case seen&haveFirst == 0 && string(key) == "f":
			seen |= haveFirst
			var isInt bool
			f.First, isInt, b, ok = mpInt(b)
			if isInt {
				*have |= haveFirst
			}
		case seen&haveLast == 0 && string(key) == "L":
			seen |= haveLast
			var isInt bool
			f.Last, isInt, b, ok = mpInt(b)
			if isInt {
				*have |= haveLast
			}
		case seen&kx == 0 && string(key) == "x":
			seen |= kx
			f.KlineClosed, _, b, ok = mpBool(b)
		default:
			b, ok = mpSkip(b)
		}
		if !ok {
			return nil, false
		}
	}
	return b, true
}
