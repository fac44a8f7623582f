package binance

import "strconv"

// The writers below build Binance-shaped JSON by appending to a buffer, as
// the replay server and the firehose generate their events: no reflection,
// no allocation beyond the buffer's growth.

// AppendDec appends v, in units of 1e-8, as Binance writes prices and
// quantities: a quoted decimal with 8 decimals ("60000.13000000").
func AppendDec(dst []byte, v int64) []byte {
	dst = append(dst, '"')
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	dst = strconv.AppendInt(dst, v/1e8, 10)
	frac := v % 1e8
	dst = append(dst, '.')
	for d := int64(1e7); d > 0; d /= 10 {
		dst = append(dst, byte('0'+frac/d%10))
	}
	return append(dst, '"')
}

// AppendKey appends `,"key":`, the start of a field after the first.
func AppendKey(dst []byte, key string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// AppendStrField appends `,"key":"v"` (v is written as is: no escaping).
func AppendStrField(dst []byte, key, v string) []byte {
	dst = AppendKey(dst, key)
	dst = append(dst, '"')
	dst = append(dst, v...)
	return append(dst, '"')
}

// AppendIntField appends `,"key":v`.
func AppendIntField(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(AppendKey(dst, key), v, 10)
}

// AppendDecField appends `,"key":"<AppendDec of v>"`.
func AppendDecField(dst []byte, key string, v int64) []byte {
	return AppendDec(AppendKey(dst, key), v)
}

// AppendBoolField appends `,"key":true` or false.
func AppendBoolField(dst []byte, key string, v bool) []byte {
	return strconv.AppendBool(AppendKey(dst, key), v)
}

// Level is one price level of a book, price and quantity in 1e-8 units.
type Level struct{ P, Q int64 }

// AppendLevels appends levels as Binance's [["price","qty"],…].
func AppendLevels(dst []byte, ls []Level) []byte {
	dst = append(dst, '[')
	for i, l := range ls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = AppendDec(dst, l.P)
		dst = append(dst, ',')
		dst = AppendDec(dst, l.Q)
		dst = append(dst, ']')
	}
	return append(dst, ']')
}
