// Package binance knows the Binance Spot market-stream names, their cadences,
// the fields that carry event time and sequence ids, and the rules by which a
// gap, a duplicate or a reordering is recognised.
package binance

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind is the type of a market stream.
type Kind uint8

// Stream kinds. KindUnknown is a syntactically valid name that Binance does not
// (or no longer) serve: the server acknowledges it and sends nothing.
const (
	KindUnknown Kind = iota
	KindTrade
	KindAggTrade
	KindKline
	KindMiniTicker
	KindMiniTickerArr
	KindTicker
	KindWindowTicker
	KindWindowTickerArr
	KindBookTicker
	KindAvgPrice
	KindDepthDiff
	KindDepthPartial
	KindReferencePrice
	KindBlockTrade
	// KindTickerArr is !ticker@arr, an array of 24hrTicker events. Binance
	// retired it (the stream is Retired: the replay server sends nothing and
	// the soak expects nothing); the bench's firehose still serves it, and a
	// kind of its own lets the scanner stop after the first element's E
	// instead of walking the whole ~450 KB array.
	KindTickerArr
)

var kindNames = [...]string{
	KindUnknown:         "unknown",
	KindTrade:           "trade",
	KindAggTrade:        "aggTrade",
	KindKline:           "kline",
	KindMiniTicker:      "miniTicker",
	KindMiniTickerArr:   "miniTickerArr",
	KindTicker:          "ticker",
	KindWindowTicker:    "windowTicker",
	KindWindowTickerArr: "windowTickerArr",
	KindBookTicker:      "bookTicker",
	KindAvgPrice:        "avgPrice",
	KindDepthDiff:       "depth",
	KindDepthPartial:    "depthN",
	KindReferencePrice:  "referencePrice",
	KindBlockTrade:      "blockTrade",
	KindTickerArr:       "tickerArr",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Seq is the sequence rule of a stream kind.
type Seq uint8

// Sequence rules.
const (
	SeqNone       Seq = iota // no sequence field (tickers, avgPrice)
	SeqContiguous            // one id, next = prev + 1 (trade t, blockTrade t)
	SeqAgg                   // aggTrade: a = prev a + 1 (f/l = trade id range)
	SeqRange                 // depth diff: U = prev u + 1
	SeqKline                 // kline: k.f..k.L trade-id ranges; same open time repeats
	SeqMonotonic             // strictly increasing, gaps by design (bookTicker u, depthN lastUpdateId)
)

func (s Seq) String() string {
	return [...]string{"none", "contiguous", "agg", "range", "kline", "monotonic"}[s]
}

// Stream is a parsed stream name.
type Stream struct {
	Name     string // as given, e.g. "btcusdt@depth20@100ms"
	Kind     Kind
	Symbol   string        // lowercase symbol; empty for market-wide "!" streams
	Interval string        // kline interval or ticker window ("1m", "1h"); empty otherwise
	Levels   int           // depth levels for KindDepthPartial (5, 10, 20)
	Period   time.Duration // update cadence; 0 for real-time streams
	Retired  bool          // a name Binance retired (served silently)
}

// RealTime reports whether the stream pushes on every market event rather than on a cadence.
func (s Stream) RealTime() bool { return s.Period == 0 && s.Kind != KindUnknown }

// Seq returns the sequence rule of the stream.
func (s Stream) Seq() Seq { return s.Kind.Seq() }

// Seq returns the sequence rule of the kind.
func (k Kind) Seq() Seq {
	switch k {
	case KindTrade, KindBlockTrade:
		return SeqContiguous
	case KindAggTrade:
		return SeqAgg
	case KindDepthDiff:
		return SeqRange
	case KindKline:
		return SeqKline
	case KindBookTicker, KindDepthPartial:
		return SeqMonotonic
	}
	return SeqNone
}

// HasEventTime reports whether payloads of the kind carry an event time E.
func (k Kind) HasEventTime() bool {
	switch k {
	case KindBookTicker, KindDepthPartial, KindReferencePrice, KindUnknown:
		return false
	}
	return true
}

var klineIntervals = map[string]time.Duration{
	"1s": time.Second, "1m": 2 * time.Second, "3m": 2 * time.Second, "5m": 2 * time.Second,
	"15m": 2 * time.Second, "30m": 2 * time.Second, "1h": 2 * time.Second, "2h": 2 * time.Second,
	"4h": 2 * time.Second, "6h": 2 * time.Second, "8h": 2 * time.Second, "12h": 2 * time.Second,
	"1d": 2 * time.Second, "3d": 2 * time.Second, "1w": 2 * time.Second, "1M": 2 * time.Second,
}

var tickerWindows = map[string]bool{"1h": true, "4h": true, "1d": true}

// SyntaxError is a stream name that Binance would reject with "invalid stream".
type SyntaxError struct{ Name, Why string }

func (e *SyntaxError) Error() string { return fmt.Sprintf("invalid stream %q: %s", e.Name, e.Why) }

// ParseStream parses a stream name. A syntactically invalid name returns a
// *SyntaxError. A well-formed name that is not a known stream returns a Stream
// of KindUnknown and no error: Binance acknowledges such names and stays silent.
func ParseStream(name string) (Stream, error) {
	st := Stream{Name: name}
	if name == "" {
		return st, &SyntaxError{name, "empty name"}
	}
	pos := 0 // in characters, not bytes
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '@' || c == '_' || c == '!' || c == '+' || c == ':') {
			if c == utf8.RuneError && !strings.HasPrefix(name[i:], "\uFFFD") {
				return st, &SyntaxError{name, fmt.Sprintf("byte %#x (not UTF-8) at %d", name[i], pos)}
			}
			return st, &SyntaxError{name, fmt.Sprintf("character %q at %d", c, pos)}
		}
		pos++
	}
	if name[0] == '!' {
		return parseMarketWide(st)
	}
	at := strings.IndexByte(name, '@')
	if at <= 0 || at == len(name)-1 {
		return st, &SyntaxError{name, "want <symbol>@<type>"}
	}
	sym, rest := name[:at], name[at+1:]
	for i := 0; i < len(sym); i++ {
		c := sym[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return st, &SyntaxError{name, "symbol must be letters and digits"}
		}
	}
	if strings.ContainsAny(sym, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return st, nil // valid syntax, but Binance serves lowercase symbols only: silent
	}
	st.Symbol = sym
	parseTyped(&st, rest)
	return st, nil
}

func parseTyped(st *Stream, rest string) {
	switch rest {
	case "trade":
		st.Kind = KindTrade
	case "aggTrade":
		st.Kind = KindAggTrade
	case "miniTicker":
		st.Kind, st.Period = KindMiniTicker, time.Second
	case "ticker":
		st.Kind, st.Period = KindTicker, time.Second
	case "bookTicker":
		st.Kind = KindBookTicker
	case "avgPrice":
		st.Kind, st.Period = KindAvgPrice, time.Second
	case "depth":
		st.Kind, st.Period = KindDepthDiff, time.Second
	case "depth@100ms":
		st.Kind, st.Period = KindDepthDiff, 100*time.Millisecond
	case "referencePrice":
		st.Kind, st.Period = KindReferencePrice, time.Second
	case "blockTrade":
		st.Kind = KindBlockTrade
	case "depth5", "depth10", "depth20":
		st.Kind, st.Period, st.Levels = KindDepthPartial, time.Second, levels(rest)
	case "depth5@100ms", "depth10@100ms", "depth20@100ms":
		st.Kind, st.Period, st.Levels = KindDepthPartial, 100*time.Millisecond, levels(rest)
	default:
		if iv, ok := strings.CutPrefix(rest, "kline_"); ok {
			iv = strings.TrimSuffix(iv, "@+08:00")
			if p, ok := klineIntervals[iv]; ok {
				st.Kind, st.Period, st.Interval = KindKline, p, iv
			}
			return
		}
		if w, ok := strings.CutPrefix(rest, "ticker_"); ok && tickerWindows[w] {
			st.Kind, st.Period, st.Interval = KindWindowTicker, time.Second, w
		}
	}
}

func levels(s string) int {
	switch {
	case strings.HasPrefix(s, "depth5"):
		return 5
	case strings.HasPrefix(s, "depth10"):
		return 10
	}
	return 20
}

func parseMarketWide(st Stream) (Stream, error) {
	switch st.Name {
	case "!miniTicker@arr":
		st.Kind, st.Period = KindMiniTickerArr, time.Second
	case "!ticker_1h@arr", "!ticker_4h@arr", "!ticker_1d@arr":
		st.Kind, st.Period = KindWindowTickerArr, time.Second
		st.Interval = strings.TrimSuffix(strings.TrimPrefix(st.Name, "!ticker_"), "@arr")
	case "!ticker@arr":
		st.Kind, st.Period, st.Retired = KindTickerArr, time.Second, true
	case "!bookTicker":
		st.Retired = true
	default:
		if len(st.Name) < 2 {
			return st, &SyntaxError{st.Name, "empty market-wide name"}
		}
	}
	return st, nil
}
