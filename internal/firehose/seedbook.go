package firehose

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
)

// SeedBook is the order book seed 003 measured its encodings on: a few
// header fields and 20 levels a side of [price, size] as short JSON
// decimals (prices of two decimals near 60,000, sizes of four), where
// msgpack's 9-byte doubles come out larger than the text. It is not one of
// the default table's scenarios (its stream is no Binance stream: the full
// path counts its messages, with no sequence to follow); a bench names it.
var SeedBook = Scenario{Name: "book", Streams: []string{"btcusd@book"}, Target: 830,
	About: "seed 003's order book: a header and 20 levels a side of short decimals, ~0.8 KB"}

// seedBookGen writes the seed's tick(i):
//
//	{"type":"book","symbol":"BTC-USD","seq":1000000+i,"ts":1791000000.123+i/1000,
//	 "bids":[[round(60000-k*0.5+r,2),round(r*3,4)] for k in 20],"asks":[… 60000+k*0.5 …]}
//
// the floats as the seed's compact json.dumps writes them (appendPyFloat).
type seedBookGen struct {
	i int64
	r *rand.Rand
}

func (g *seedBookGen) next(dst []byte, _ int64) []byte {
	dst = append(dst, `{"type":"book","symbol":"BTC-USD","seq":`...)
	dst = strconv.AppendInt(dst, 1_000_000+g.i, 10)
	dst = append(dst, `,"ts":`...)
	dst = appendPyFloat(dst, round(1791000000.123+float64(g.i)/1000, 3))
	for side, sign := range [2]float64{-1, 1} {
		dst = append(dst, [2]string{`,"bids":[`, `,"asks":[`}[side]...)
		for k := range 20 {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = appendPyFloat(dst, round(60000+sign*float64(k)*0.5+g.r.Float64(), 2))
			dst = append(dst, ',')
			dst = appendPyFloat(dst, round(g.r.Float64()*3, 4))
			dst = append(dst, ']')
		}
		dst = append(dst, ']')
	}
	g.i++
	return append(dst, '}')
}

// appendPyFloat appends f as Python's json.dumps writes a float: the
// shortest form, with ".0" when it has no point (60000.0, never 60000).
func appendPyFloat(dst []byte, f float64) []byte {
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
	if bytes.IndexByte(dst[n:], '.') < 0 {
		dst = append(dst, ".0"...)
	}
	return dst
}

// round is x rounded to d decimals, as Python's round.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
