package codec_test

// The measurement behind the choice of msgpack library: encode and decode of
// two of our events (aggTrade, a 20-level book) as typed Go values, with
// github.com/tinylib/msgp (append/read functions on byte slices, the code its
// generator writes, here by hand) and github.com/vmihailenco/msgpack/v5
// (reflection, with a reused encoder and decoder). Run with
//   go test ./internal/codec/ -run X -bench Library -benchmem

import (
	"bytes"
	"testing"

	"github.com/tinylib/msgp/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

type aggEvent struct {
	Event     string  `msgpack:"e"`
	EventTime int64   `msgpack:"E"`
	Symbol    string  `msgpack:"s"`
	AggID     int64   `msgpack:"a"`
	Price     float64 `msgpack:"p"`
	Qty       float64 `msgpack:"q"`
	First     int64   `msgpack:"f"`
	Last      int64   `msgpack:"l"`
	TradeTime int64   `msgpack:"T"`
	Maker     bool    `msgpack:"m"`
	Ignore    bool    `msgpack:"M"`
}

type bookEvent struct {
	LastUpdateID int64        `msgpack:"lastUpdateId"`
	Bids         [][2]float64 `msgpack:"bids"`
	Asks         [][2]float64 `msgpack:"asks"`
}

func sampleAgg() aggEvent {
	return aggEvent{"aggTrade", 1791000000123, "BTCUSDT", 2039485721, 67012.13, 0.01834, 3102938471, 3102938473, 1791000000121, true, true}
}

func sampleBook() bookEvent {
	b := bookEvent{LastUpdateID: 71234567890}
	for i := range 20 {
		b.Bids = append(b.Bids, [2]float64{0.03512 - float64(i)*0.00001, 0.3 + float64(i)*0.1})
		b.Asks = append(b.Asks, [2]float64{0.03513 + float64(i)*0.00001, 1.7 - float64(i)*0.05})
	}
	return b
}

func (a *aggEvent) appendMsg(b []byte) []byte {
	b = msgp.AppendMapHeader(b, 11)
	b = msgp.AppendFloat64(msgp.AppendString(msgp.AppendInt64(msgp.AppendString(
		msgp.AppendString(msgp.AppendString(msgp.AppendInt64(msgp.AppendString(
			msgp.AppendString(msgp.AppendString(b, "e"), a.Event), "E"), a.EventTime), "s"), a.Symbol),
		"a"), a.AggID), "p"), a.Price)
	b = msgp.AppendInt64(msgp.AppendString(msgp.AppendInt64(msgp.AppendString(
		msgp.AppendFloat64(msgp.AppendString(b, "q"), a.Qty), "f"), a.First), "l"), a.Last)
	b = msgp.AppendBool(msgp.AppendString(msgp.AppendBool(msgp.AppendString(
		msgp.AppendInt64(msgp.AppendString(b, "T"), a.TradeTime), "m"), a.Maker), "M"), a.Ignore)
	return b
}

func (a *aggEvent) readMsg(b []byte) (err error) {
	var n uint32
	if n, b, err = msgp.ReadMapHeaderBytes(b); err != nil {
		return err
	}
	for range n {
		var k, s []byte
		if k, b, err = msgp.ReadMapKeyZC(b); err != nil {
			return err
		}
		switch string(k) {
		case "e":
			s, b, err = msgp.ReadStringZC(b)
			if string(s) != a.Event { // reuse the string while it does not change
				a.Event = string(s)
			}
		case "s":
			s, b, err = msgp.ReadStringZC(b)
			if string(s) != a.Symbol {
				a.Symbol = string(s)
			}
		case "E":
			a.EventTime, b, err = msgp.ReadInt64Bytes(b)
		case "a":
			a.AggID, b, err = msgp.ReadInt64Bytes(b)
		case "p":
			a.Price, b, err = msgp.ReadFloat64Bytes(b)
		case "q":
			a.Qty, b, err = msgp.ReadFloat64Bytes(b)
		case "f":
			a.First, b, err = msgp.ReadInt64Bytes(b)
		case "l":
			a.Last, b, err = msgp.ReadInt64Bytes(b)
		case "T":
			a.TradeTime, b, err = msgp.ReadInt64Bytes(b)
		case "m":
			a.Maker, b, err = msgp.ReadBoolBytes(b)
		case "M":
			a.Ignore, b, err = msgp.ReadBoolBytes(b)
		default:
			b, err = msgp.Skip(b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func appendSide(b []byte, side [][2]float64) []byte {
	b = msgp.AppendArrayHeader(b, uint32(len(side)))
	for _, l := range side {
		b = msgp.AppendFloat64(msgp.AppendFloat64(msgp.AppendArrayHeader(b, 2), l[0]), l[1])
	}
	return b
}

func (d *bookEvent) appendMsg(b []byte) []byte {
	b = msgp.AppendInt64(msgp.AppendString(msgp.AppendMapHeader(b, 3), "lastUpdateId"), d.LastUpdateID)
	b = appendSide(msgp.AppendString(b, "bids"), d.Bids)
	return appendSide(msgp.AppendString(b, "asks"), d.Asks)
}

func readSide(b []byte, side [][2]float64) ([][2]float64, []byte, error) {
	n, b, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return side, b, err
	}
	side = side[:0]
	for range n {
		var l [2]float64
		if _, b, err = msgp.ReadArrayHeaderBytes(b); err != nil {
			return side, b, err
		}
		if l[0], b, err = msgp.ReadFloat64Bytes(b); err != nil {
			return side, b, err
		}
		if l[1], b, err = msgp.ReadFloat64Bytes(b); err != nil {
			return side, b, err
		}
		side = append(side, l)
	}
	return side, b, nil
}

func (d *bookEvent) readMsg(b []byte) (err error) {
	var n uint32
	if n, b, err = msgp.ReadMapHeaderBytes(b); err != nil {
		return err
	}
	for range n {
		var k []byte
		if k, b, err = msgp.ReadMapKeyZC(b); err != nil {
			return err
		}
		switch string(k) {
		case "lastUpdateId":
			d.LastUpdateID, b, err = msgp.ReadInt64Bytes(b)
		case "bids":
			d.Bids, b, err = readSide(b, d.Bids)
		case "asks":
			d.Asks, b, err = readSide(b, d.Asks)
		default:
			b, err = msgp.Skip(b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TestLibrariesAgree checks that both libraries write bytes the other reads
// back to the same value, so the benchmark compares the same work.
func TestLibrariesAgree(t *testing.T) {
	a, d := sampleAgg(), sampleBook()
	var a2 aggEvent
	if err := msgpack.Unmarshal(a.appendMsg(nil), &a2); err != nil || a2 != a {
		t.Fatalf("vmihailenco read of msgp bytes: %v %+v", err, a2)
	}
	enc, err := msgpack.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	var d2 bookEvent
	if err := d2.readMsg(enc); err != nil || d2.LastUpdateID != d.LastUpdateID || len(d2.Asks) != 20 || d2.Asks[19] != d.Asks[19] {
		t.Fatalf("msgp read of vmihailenco bytes: %v %+v", err, d2)
	}
}

func BenchmarkLibrary(b *testing.B) {
	agg, book := sampleAgg(), sampleBook()
	type event struct {
		name   string
		v      any
		append func([]byte) []byte
		fresh  func() (any, func([]byte) error)
	}
	events := []event{
		{"aggTrade", &agg, agg.appendMsg, func() (any, func([]byte) error) { var e aggEvent; return &e, e.readMsg }},
		{"depth20", &book, book.appendMsg, func() (any, func([]byte) error) { var e bookEvent; return &e, e.readMsg }},
	}
	for _, ev := range events {
		enc := ev.append(nil)
		b.Run(ev.name+"/encode/tinylib", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = ev.append(buf[:0])
			}
		})
		b.Run(ev.name+"/encode/vmihailenco", func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			e := msgpack.NewEncoder(&buf)
			for b.Loop() {
				buf.Reset()
				if err := e.Encode(ev.v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(ev.name+"/decode/tinylib", func(b *testing.B) {
			b.ReportAllocs()
			_, read := ev.fresh()
			for b.Loop() {
				if err := read(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(ev.name+"/decode/vmihailenco", func(b *testing.B) {
			b.ReportAllocs()
			v, _ := ev.fresh()
			r := bytes.NewReader(enc)
			d := msgpack.NewDecoder(r)
			for b.Loop() {
				r.Reset(enc)
				if err := d.Decode(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
