package binance

import "encoding/binary"

// A minimal msgpack reader for the scanner: the few reads it needs, written
// for the hot path (no error values, no interfaces; each returns what
// follows the value, and ok false for malformed or short input). Its test
// holds it to tinylib/msgp's readers on arbitrary bytes.

// mpMap reads a map header.
func mpMap(b []byte) (n int, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	switch c := b[0]; {
	case c&0xf0 == 0x80:
		return int(c & 0x0f), b[1:], true
	case c == 0xde && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:])), b[3:], true
	case c == 0xdf && len(b) >= 5:
		return int(binary.BigEndian.Uint32(b[1:])), b[5:], true
	}
	return 0, nil, false
}

// mpArray reads an array header.
func mpArray(b []byte) (n int, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	switch c := b[0]; {
	case c&0xf0 == 0x90:
		return int(c & 0x0f), b[1:], true
	case c == 0xdc && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:])), b[3:], true
	case c == 0xdd && len(b) >= 5:
		return int(binary.BigEndian.Uint32(b[1:])), b[5:], true
	}
	return 0, nil, false
}

// mpStr reads a str (or, with bin true, a str or a bin, as a map key may be).
func mpStr(b []byte, bin bool) (s, rest []byte, ok bool) {
	if len(b) == 0 {
		return nil, nil, false
	}
	var n, h int
	switch c := b[0]; {
	case c&0xe0 == 0xa0:
		n, h = int(c&0x1f), 1
	case (c == 0xd9 || bin && c == 0xc4) && len(b) >= 2:
		n, h = int(b[1]), 2
	case (c == 0xda || bin && c == 0xc5) && len(b) >= 3:
		n, h = int(binary.BigEndian.Uint16(b[1:])), 3
	case (c == 0xdb || bin && c == 0xc6) && len(b) >= 5:
		n, h = int(binary.BigEndian.Uint32(b[1:])), 5
	default:
		return nil, nil, false
	}
	if len(b)-h < n {
		return nil, nil, false
	}
	return b[h : h+n], b[h+n:], true
}

// mpIsStr reports whether the next value is a str.
func mpIsStr(b []byte) bool {
	return len(b) > 0 && (b[0]&0xe0 == 0xa0 || b[0] >= 0xd9 && b[0] <= 0xdb)
}

// mpIsMap reports whether the next value is a map.
func mpIsMap(b []byte) bool {
	return len(b) > 0 && (b[0]&0xf0 == 0x80 || b[0] == 0xde || b[0] == 0xdf)
}

// mpIsArray reports whether the next value is an array.
func mpIsArray(b []byte) bool {
	return len(b) > 0 && (b[0]&0xf0 == 0x90 || b[0] == 0xdc || b[0] == 0xdd)
}

// mpInt consumes any value. If it is an integer within int64 range it is
// returned with isInt true; anything else is skipped and yields 0, false.
// ok is false only if the value is malformed.
func mpInt(b []byte) (v int64, isInt bool, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, false, nil, false
	}
	c := b[0]
	switch {
	case c <= 0x7f:
		return int64(c), true, b[1:], true
	case c >= 0xe0:
		return int64(int8(c)), true, b[1:], true
	}
	var size int
	switch c {
	case 0xcc, 0xd0:
		size = 1
	case 0xcd, 0xd1:
		size = 2
	case 0xce, 0xd2:
		size = 4
	case 0xcf, 0xd3:
		size = 8
	default:
		rest, ok = mpSkip(b)
		return 0, false, rest, ok
	}
	if len(b) < 1+size {
		return 0, false, nil, false
	}
	p := b[1 : 1+size]
	switch c {
	case 0xcc:
		v = int64(p[0])
	case 0xd0:
		v = int64(int8(p[0]))
	case 0xcd:
		v = int64(binary.BigEndian.Uint16(p))
	case 0xd1:
		v = int64(int16(binary.BigEndian.Uint16(p)))
	case 0xce:
		v = int64(binary.BigEndian.Uint32(p))
	case 0xd2:
		v = int64(int32(binary.BigEndian.Uint32(p)))
	case 0xcf:
		u := binary.BigEndian.Uint64(p)
		if u > 1<<63-1 {
			return 0, false, b[1+size:], true // beyond int64: not an id
		}
		v = int64(u)
	case 0xd3:
		v = int64(binary.BigEndian.Uint64(p))
	}
	return v, true, b[1+size:], true
}

// mpBool consumes any value and reports whether it is the boolean true
// (isBool false, and v false, for anything else).
func mpBool(b []byte) (v, isBool bool, rest []byte, ok bool) {
	if len(b) > 0 && (b[0] == 0xc2 || b[0] == 0xc3) {
		return b[0] == 0xc3, true, b[1:], true
	}
	rest, ok = mpSkip(b)
	return false, false, rest, ok
}

// mpSkip consumes one value of any type, containers whole.
func mpSkip(b []byte) (rest []byte, ok bool) {
	for pending := 1; pending > 0; pending-- {
		if len(b) == 0 {
			return nil, false
		}
		c := b[0]
		var size, items int // bytes of this value's head and body; items it contains
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
			size = 1
		case c&0xf0 == 0x80:
			size, items = 1, 2*int(c&0x0f)
		case c&0xf0 == 0x90:
			size, items = 1, int(c&0x0f)
		case c&0xe0 == 0xa0:
			size = 1 + int(c&0x1f)
		default:
			var n int
			var ok bool
			if size, items, n, ok = mpHead(b); !ok {
				return nil, false
			}
			size += n
		}
		if len(b) < size {
			return nil, false
		}
		b = b[size:]
		pending += items
	}
	return b, true
}

// mpHead is mpSkip's table for the lead bytes above 0xc3: the head's size,
// the items a container holds, the body's length, for a value at b.
func mpHead(b []byte) (head, items, body int, ok bool) {
	c := b[0]
	u8 := func() (int, bool) {
		if len(b) < 2 {
			return 0, false
		}
		return int(b[1]), true
	}
	u16 := func() (int, bool) {
		if len(b) < 3 {
			return 0, false
		}
		return int(binary.BigEndian.Uint16(b[1:])), true
	}
	u32 := func() (int, bool) {
		if len(b) < 5 {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(b[1:])), true
	}
	var n int
	switch c {
	case 0xcc, 0xd0:
		return 2, 0, 0, true
	case 0xcd, 0xd1:
		return 3, 0, 0, true
	case 0xce, 0xd2, 0xca:
		return 5, 0, 0, true
	case 0xcf, 0xd3, 0xcb:
		return 9, 0, 0, true
	case 0xd4:
		return 3, 0, 0, true
	case 0xd5:
		return 4, 0, 0, true
	case 0xd6:
		return 6, 0, 0, true
	case 0xd7:
		return 10, 0, 0, true
	case 0xd8:
		return 18, 0, 0, true
	case 0xc4, 0xd9:
		n, ok = u8()
		return 2, 0, n, ok
	case 0xc5, 0xda:
		n, ok = u16()
		return 3, 0, n, ok
	case 0xc6, 0xdb:
		n, ok = u32()
		return 5, 0, n, ok
	case 0xc7: // ext8: length, type, data
		n, ok = u8()
		return 3, 0, n, ok
	case 0xc8:
		n, ok = u16()
		return 4, 0, n, ok
	case 0xc9:
		n, ok = u32()
		return 6, 0, n, ok
	case 0xdc:
		n, ok = u16()
		return 3, n, 0, ok
	case 0xdd:
		n, ok = u32()
		return 5, n, 0, ok
	case 0xde:
		n, ok = u16()
		return 3, 2 * n, 0, ok
	case 0xdf:
		n, ok = u32()
		return 5, 2 * n, 0, ok
	}
	return 0, 0, 0, false // 0xc1: never used
}
