package bench

import (
	"encoding/json"
	"strings"

	"github.com/wssoak/wssoak/internal/transport"
)

// The typed events of the decode path: every field a Binance payload of the
// kind carries, as a user's code would declare it.

type aggTrade struct {
	Event     string `json:"e"`
	EventTime int64  `json:"E"`
	Symbol    string `json:"s"`
	AggID     int64  `json:"a"`
	Price     string `json:"p"`
	Qty       string `json:"q"`
	First     int64  `json:"f"`
	Last      int64  `json:"l"`
	TradeTime int64  `json:"T"`
	Maker     bool   `json:"m"`
	Ignore    bool   `json:"M"`
}

type trade struct {
	Event     string `json:"e"`
	EventTime int64  `json:"E"`
	Symbol    string `json:"s"`
	ID        int64  `json:"t"`
	Price     string `json:"p"`
	Qty       string `json:"q"`
	TradeTime int64  `json:"T"`
	Maker     bool   `json:"m"`
	Ignore    bool   `json:"M"`
}

type bookTicker struct {
	UpdateID int64  `json:"u"`
	Symbol   string `json:"s"`
	Bid      string `json:"b"`
	BidQty   string `json:"B"`
	Ask      string `json:"a"`
	AskQty   string `json:"A"`
}

type kline struct {
	Event     string `json:"e"`
	EventTime int64  `json:"E"`
	Symbol    string `json:"s"`
	K         struct {
		Start    int64  `json:"t"`
		End      int64  `json:"T"`
		Symbol   string `json:"s"`
		Interval string `json:"i"`
		First    int64  `json:"f"`
		Last     int64  `json:"L"`
		Open     string `json:"o"`
		Close    string `json:"c"`
		High     string `json:"h"`
		Low      string `json:"l"`
		Volume   string `json:"v"`
		Trades   int64  `json:"n"`
		Closed   bool   `json:"x"`
		Quote    string `json:"q"`
		TakerBuy string `json:"V"`
		TakerQ   string `json:"Q"`
	} `json:"k"`
}

type depthPartial struct {
	LastUpdateID int64       `json:"lastUpdateId"`
	Bids         [][2]string `json:"bids"`
	Asks         [][2]string `json:"asks"`
}

type depthDiff struct {
	Event     string      `json:"e"`
	EventTime int64       `json:"E"`
	Symbol    string      `json:"s"`
	First     int64       `json:"U"`
	Final     int64       `json:"u"`
	Bids      [][2]string `json:"b"`
	Asks      [][2]string `json:"a"`
}

type ticker struct {
	Event       string `json:"e"`
	EventTime   int64  `json:"E"`
	Symbol      string `json:"s"`
	Change      string `json:"p"`
	ChangePct   string `json:"P"`
	Weighted    string `json:"w"`
	PrevClose   string `json:"x"`
	Last        string `json:"c"`
	LastQty     string `json:"Q"`
	Bid         string `json:"b"`
	BidQty      string `json:"B"`
	Ask         string `json:"a"`
	AskQty      string `json:"A"`
	Open        string `json:"o"`
	High        string `json:"h"`
	Low         string `json:"l"`
	Volume      string `json:"v"`
	QuoteVolume string `json:"q"`
	OpenTime    int64  `json:"O"`
	CloseTime   int64  `json:"C"`
	FirstID     int64  `json:"F"`
	LastID      int64  `json:"L"`
	Count       int64  `json:"n"`
}

// seedBook is seed 003's order book (the firehose's book scenario): its
// numbers are JSON numbers, decoded as float64.
type seedBook struct {
	Type   string       `json:"type"`
	Symbol string       `json:"symbol"`
	Seq    int64        `json:"seq"`
	TS     float64      `json:"ts"`
	Bids   [][2]float64 `json:"bids"`
	Asks   [][2]float64 `json:"asks"`
}

// envelope is a combined-stream message with its payload left raw.
type envelope struct {
	Stream string          `json:"stream"`
	Data   json.RawMessage `json:"data"`
}

// decoder is the full path plus decoding each message into its typed event.
type decoder struct {
	next transport.Handler
	env  envelope
	errs int64       // messages that did not decode
	bin  *binDecoder // binary messages (msgpack, packed)
	// one value per kind, reused as a user's loop would
	agg   aggTrade
	tr    trade
	book  bookTicker
	kl    kline
	part  depthPartial
	diff  depthDiff
	ticks []ticker
	seed  seedBook
}

func (d *decoder) OnMessage(text bool, p []byte) {
	d.next.OnMessage(text, p)
	if !text {
		if d.bin == nil {
			d.bin = newBinDecoder()
		}
		if err := d.bin.decode(p); err != nil {
			d.errs++
		}
		return
	}
	d.env.Data = d.env.Data[:0]
	if err := json.Unmarshal(p, &d.env); err != nil {
		d.errs++
		return
	}
	var v any
	_, kind, _ := strings.Cut(d.env.Stream, "@")
	switch kind {
	case "aggTrade":
		v = &d.agg
	case "trade":
		v = &d.tr
	case "bookTicker":
		v = &d.book
	case "depth":
		v = &d.diff
	case "ticker@arr", "arr":
		v = &d.ticks
	case "book":
		v = &d.seed
	default:
		switch {
		case strings.HasPrefix(kind, "kline_"):
			v = &d.kl
		case strings.HasPrefix(kind, "depth"):
			v = &d.part
		default:
			d.errs++
			return
		}
	}
	if err := json.Unmarshal(d.env.Data, v); err != nil {
		d.errs++
	}
}

func (d *decoder) OnPing(p []byte) { d.next.OnPing(p) }
func (d *decoder) OnPong(p []byte) { d.next.OnPong(p) }
