package replay

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
)

// A generator produces the events of one stream. step mutates its state for
// an event at wall time wall (Unix ns) and reports whether the tick emits
// anything; render is pure: it only formats the state left by the last step.
// All randomness is drawn in step, in event order, from the stream's own
// source, so the content of a stream depends on (Seed, name, schedule) only.
type generator interface {
	step(r *rand.Rand, wall int64) bool
	render(dst []byte, micro bool) []byte
	seq() int64
}

// genEnv is what generators need from the configuration.
type genEnv struct {
	tradeRate float64 // trades per virtual second behind klines and tickers
	symbols   []string
}

// newGenerator returns the generator of st, or nil when the stream is served silently.
func newGenerator(st binance.Stream, r *rand.Rand, env genEnv) generator {
	if st.Retired {
		return nil
	}
	period := st.Period.Seconds()
	switch st.Kind {
	case binance.KindTrade:
		return &tradeGen{sym: upper(st.Symbol), m: newMarket(st.Symbol, r), t: startID(r), event: "trade", maker: true}
	case binance.KindBlockTrade:
		return &tradeGen{sym: upper(st.Symbol), m: newMarket(st.Symbol, r), t: startID(r) / 1000, event: "blockTrade"}
	case binance.KindAggTrade:
		g := &aggTradeGen{sym: upper(st.Symbol), m: newMarket(st.Symbol, r), a: startID(r) / 2}
		g.l = startID(r)
		return g
	case binance.KindBookTicker:
		return &bookTickerGen{sym: upper(st.Symbol), m: newMarket(st.Symbol, r), u: startID(r) * 10}
	case binance.KindDepthDiff:
		return &depthDiffGen{sym: upper(st.Symbol), m: newMarket(st.Symbol, r), u: startID(r) * 10, fast: st.Period < time.Second}
	case binance.KindDepthPartial:
		return &depthPartialGen{m: newMarket(st.Symbol, r), id: startID(r) * 10, levels: st.Levels}
	case binance.KindKline:
		g := &klineGen{sym: upper(st.Symbol), iv: st.Interval, m: newMarket(st.Symbol, r), lastID: startID(r), perTick: env.tradeRate * period}
		if strings.HasSuffix(st.Name, "@+08:00") {
			g.offset = 8 * 3600 * 1000
		}
		return g
	case binance.KindTicker, binance.KindMiniTicker, binance.KindWindowTicker:
		g := &tickerGen{kind: st.Kind, window: st.Interval, dt: period, rate: env.tradeRate}
		g.ts = []*tickerState{newTickerState(st.Symbol, r, env.tradeRate, windowOf(st))}
		return g
	case binance.KindMiniTickerArr, binance.KindWindowTickerArr:
		kind := binance.KindMiniTicker
		if st.Kind == binance.KindWindowTickerArr {
			kind = binance.KindWindowTicker
		}
		g := &tickerGen{kind: kind, window: st.Interval, dt: period, rate: env.tradeRate, array: true}
		for _, s := range env.symbols {
			g.ts = append(g.ts, newTickerState(s, r, env.tradeRate, windowOf(st)))
		}
		return g
	case binance.KindAvgPrice:
		return &avgPriceGen{sym: upper(st.Symbol), m: newMarket(st.Symbol, r)}
	case binance.KindReferencePrice:
		return &refPriceGen{sym: upper(st.Symbol), m: newMarket(st.Symbol, r)}
	}
	return nil
}

func windowOf(st binance.Stream) time.Duration {
	switch st.Interval {
	case "1h":
		return time.Hour
	case "4h":
		return 4 * time.Hour
	}
	return 24 * time.Hour
}

func upper(s string) string { return strings.ToUpper(s) }

func startID(r *rand.Rand) int64 { return 1_000_000_000 + r.Int64N(4_000_000_000) }

// market is a synthetic instrument: a mid price doing a random walk on its tick grid.
// Prices and quantities are fixed point in 1e-8 units.
type market struct {
	mid, tick, lot, typQty int64
}

var basePrices = map[string]float64{
	"btcusdt": 67000, "ethusdt": 3500, "bnbusdt": 600, "solusdt": 150, "xrpusdt": 0.6,
	"adausdt": 0.45, "dogeusdt": 0.12, "trxusdt": 0.12, "linkusdt": 14, "avaxusdt": 30,
	"dotusdt": 6, "ltcusdt": 80, "bchusdt": 400, "uniusdt": 8, "atomusdt": 7,
	"etcusdt": 22, "xlmusdt": 0.1, "filusdt": 4, "nearusdt": 5, "aptusdt": 9,
}

func newMarket(sym string, r *rand.Rand) market {
	base, ok := basePrices[sym]
	if !ok {
		base = math.Pow(10, -2+6*r.Float64())
	}
	mid := int64(base * (1 + 0.01*r.NormFloat64()) * 1e8)
	if mid < 100 {
		mid = 100
	}
	m := market{mid: mid, tick: pow10Below(mid / 1_000_000)}
	m.typQty = int64(200e16 / float64(mid)) // ~200 quote units per fill
	if m.typQty < 1 {
		m.typQty = 1
	}
	m.lot = pow10Below(m.typQty / 100)
	m.mid -= m.mid % m.tick
	return m
}

func pow10Below(v int64) int64 {
	p := int64(1)
	for p*10 <= v {
		p *= 10
	}
	return p
}

// walk moves the mid price by about sqrt(steps) ticks.
func (m *market) walk(r *rand.Rand, steps float64) {
	m.mid += m.tick * int64(math.Round(r.NormFloat64()*2*math.Sqrt(steps)))
	if m.mid < 1000*m.tick {
		m.mid = 1000 * m.tick
	}
}

func (m *market) qty(r *rand.Rand) int64 {
	q := int64(r.ExpFloat64()*float64(m.typQty)) / m.lot * m.lot
	if q < m.lot {
		q = m.lot
	}
	return q
}

// notional returns qty*price in 1e-8 units.
func notional(qty, price int64) int64 { return int64(float64(qty) * float64(price) / 1e8) }

func poisson(r *rand.Rand, mean float64) int64 {
	switch {
	case mean <= 0:
		return 0
	case mean < 30:
		l, k, p := math.Exp(-mean), int64(0), 1.0
		for {
			p *= r.Float64()
			if p <= l {
				return k
			}
			k++
		}
	}
	v := math.Round(mean + math.Sqrt(mean)*r.NormFloat64())
	if v < 0 {
		return 0
	}
	return int64(v)
}

// --- formatting ---

// appendTS appends a wall time (Unix ns) in ms or µs.
func appendTS(dst []byte, ns int64, micro bool) []byte {
	if micro {
		return strconv.AppendInt(dst, ns/1e3, 10)
	}
	return strconv.AppendInt(dst, ns/1e6, 10)
}

func appendTSField(dst []byte, key string, ns int64, micro bool) []byte {
	return appendTS(binance.AppendKey(dst, key), ns, micro)
}

// appendHead appends `{"e":"<event>","E":<time>,"s":"<sym>"`.
func appendHead(dst []byte, event string, wall int64, micro bool, sym string) []byte {
	dst = append(dst, `{"e":"`...)
	dst = append(dst, event...)
	dst = append(dst, `","E":`...)
	dst = appendTS(dst, wall, micro)
	return binance.AppendStrField(dst, "s", sym)
}

// --- trade, blockTrade ---

type tradeGen struct {
	sym, event string
	maker      bool // emit m and M (trade); blockTrade has neither
	m          market
	wall, tt   int64
	t          int64
	p, q       int64
	buyerMaker bool
}

func (g *tradeGen) step(r *rand.Rand, wall int64) bool {
	g.t++
	g.m.walk(r, 1)
	g.p, g.q = g.m.mid, g.m.qty(r)
	g.buyerMaker = r.IntN(2) == 0
	g.wall, g.tt = wall, wall-int64(r.IntN(3))*int64(time.Millisecond)
	return true
}

func (g *tradeGen) render(dst []byte, micro bool) []byte {
	dst = appendHead(dst, g.event, g.wall, micro, g.sym)
	dst = binance.AppendIntField(dst, "t", g.t)
	dst = binance.AppendDecField(dst, "p", g.p)
	dst = binance.AppendDecField(dst, "q", g.q)
	dst = appendTSField(dst, "T", g.tt, micro)
	if g.maker {
		dst = binance.AppendBoolField(dst, "m", g.buyerMaker)
		dst = binance.AppendBoolField(dst, "M", true)
	}
	return append(dst, '}')
}

func (g *tradeGen) seq() int64 { return g.t }

// --- aggTrade ---

type aggTradeGen struct {
	sym        string
	m          market
	wall, tt   int64
	a, f, l    int64
	p, q       int64
	buyerMaker bool
}

func (g *aggTradeGen) step(r *rand.Rand, wall int64) bool {
	g.a++
	g.f = g.l + 1
	g.l = g.f
	for g.l-g.f < 20 && r.IntN(3) == 0 {
		g.l++
	}
	g.m.walk(r, 1)
	g.p = g.m.mid
	g.q = 0
	for i := g.f; i <= g.l; i++ {
		g.q += g.m.qty(r)
	}
	g.buyerMaker = r.IntN(2) == 0
	g.wall, g.tt = wall, wall-int64(r.IntN(3))*int64(time.Millisecond)
	return true
}

func (g *aggTradeGen) render(dst []byte, micro bool) []byte {
	dst = appendHead(dst, "aggTrade", g.wall, micro, g.sym)
	dst = binance.AppendIntField(dst, "a", g.a)
	dst = binance.AppendDecField(dst, "p", g.p)
	dst = binance.AppendDecField(dst, "q", g.q)
	dst = binance.AppendIntField(dst, "f", g.f)
	dst = binance.AppendIntField(dst, "l", g.l)
	dst = appendTSField(dst, "T", g.tt, micro)
	dst = binance.AppendBoolField(dst, "m", g.buyerMaker)
	dst = binance.AppendBoolField(dst, "M", true)
	return append(dst, '}')
}

func (g *aggTradeGen) seq() int64 { return g.a }

// --- bookTicker ---

type bookTickerGen struct {
	sym          string
	m            market
	u            int64
	b, bq, a, aq int64
}

func (g *bookTickerGen) step(r *rand.Rand, _ int64) bool {
	g.u += 1 + int64(r.ExpFloat64()*5) // book ids advance with skips
	g.m.walk(r, 0.5)
	spread := g.m.tick * (1 + int64(r.IntN(2)))
	g.b, g.a = g.m.mid, g.m.mid+spread
	g.bq, g.aq = g.m.qty(r)*4, g.m.qty(r)*4
	return true
}

func (g *bookTickerGen) render(dst []byte, _ bool) []byte {
	dst = append(dst, `{"u":`...)
	dst = strconv.AppendInt(dst, g.u, 10)
	dst = binance.AppendStrField(dst, "s", g.sym)
	dst = binance.AppendDecField(dst, "b", g.b)
	dst = binance.AppendDecField(dst, "B", g.bq)
	dst = binance.AppendDecField(dst, "a", g.a)
	dst = binance.AppendDecField(dst, "A", g.aq)
	return append(dst, '}')
}

func (g *bookTickerGen) seq() int64 { return g.u }

// --- depth ---

type level = binance.Level

type depthDiffGen struct {
	sym    string
	fast   bool
	m      market
	wall   int64
	uFirst int64
	u      int64
	bids   []level
	asks   []level
}

func (g *depthDiffGen) step(r *rand.Rand, wall int64) bool {
	if g.fast && r.IntN(30) == 0 {
		return false // the book did not change in this 100 ms
	}
	n := 1 + r.IntN(40)
	if !g.fast {
		n = 20 + r.IntN(300)
	}
	g.m.walk(r, float64(n)/10)
	g.uFirst, g.u = g.u+1, g.u+int64(n)
	g.wall = wall
	maxLevels := 8
	if !g.fast {
		maxLevels = 30
	}
	g.bids = g.sideLevels(r, g.bids[:0], -1, maxLevels)
	g.asks = g.sideLevels(r, g.asks[:0], +1, maxLevels)
	if len(g.bids)+len(g.asks) == 0 {
		g.bids = append(g.bids, level{P: g.m.mid, Q: g.m.qty(r)})
	}
	return true
}

func (g *depthDiffGen) sideLevels(r *rand.Rand, ls []level, dir int64, maxLevels int) []level {
	k := r.IntN(maxLevels + 1)
	off := int64(0)
	for range k {
		off += 1 + int64(r.IntN(3))
		q := g.m.qty(r) * int64(1+r.IntN(8))
		if r.IntN(5) == 0 {
			q = 0 // level removed
		}
		p := g.m.mid + dir*off*g.m.tick
		if dir > 0 {
			p += g.m.tick
		}
		ls = append(ls, level{P: p, Q: q})
	}
	return ls
}

func (g *depthDiffGen) render(dst []byte, micro bool) []byte {
	dst = appendHead(dst, "depthUpdate", g.wall, micro, g.sym)
	dst = binance.AppendIntField(dst, "U", g.uFirst)
	dst = binance.AppendIntField(dst, "u", g.u)
	dst = binance.AppendLevels(binance.AppendKey(dst, "b"), g.bids)
	dst = binance.AppendLevels(binance.AppendKey(dst, "a"), g.asks)
	return append(dst, '}')
}

func (g *depthDiffGen) seq() int64 { return g.u }

type depthPartialGen struct {
	m          market
	levels     int
	id         int64
	bids, asks []level
}

func (g *depthPartialGen) step(r *rand.Rand, _ int64) bool {
	g.id += 1 + r.Int64N(60)
	g.m.walk(r, 1)
	g.bids, g.asks = g.bids[:0], g.asks[:0]
	pb, pa := g.m.mid, g.m.mid+g.m.tick
	for range g.levels {
		g.bids = append(g.bids, level{P: pb, Q: g.m.qty(r) * int64(1+r.IntN(10))})
		g.asks = append(g.asks, level{P: pa, Q: g.m.qty(r) * int64(1+r.IntN(10))})
		pb -= g.m.tick * (1 + int64(r.IntN(2)))
		pa += g.m.tick * (1 + int64(r.IntN(2)))
	}
	return true
}

func (g *depthPartialGen) render(dst []byte, _ bool) []byte {
	dst = append(dst, `{"lastUpdateId":`...)
	dst = strconv.AppendInt(dst, g.id, 10)
	dst = binance.AppendLevels(binance.AppendKey(dst, "bids"), g.bids)
	dst = binance.AppendLevels(binance.AppendKey(dst, "asks"), g.asks)
	return append(dst, '}')
}

func (g *depthPartialGen) seq() int64 { return g.id }

// --- kline ---

type klineGen struct {
	sym, iv string
	offset  int64 // ms added before aligning windows (UTC+8 variant)
	m       market
	perTick float64 // mean trades per tick
	lastID  int64   // last trade id handed out

	wall         int64
	open         bool
	t0, t1       int64 // window [t0, t1) in ms
	f, l, n      int64
	o, c, h, lo  int64
	v, q, tv, tq int64
	closed       bool // the last step emitted the final update of its kline
}

var klineMS = map[string]int64{
	"1s": 1e3, "1m": 60e3, "3m": 180e3, "5m": 300e3, "15m": 900e3, "30m": 1800e3,
	"1h": 3600e3, "2h": 7200e3, "4h": 14400e3, "6h": 21600e3, "8h": 28800e3, "12h": 43200e3,
	"1d": 86400e3, "3d": 259200e3, "1w": 604800e3,
}

// klineWindow returns the [open, close) window in ms containing ms.
func klineWindow(ms int64, iv string, offset int64) (int64, int64) {
	local := ms + offset
	switch iv {
	case "1M":
		t := time.UnixMilli(local).UTC()
		first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return first.UnixMilli() - offset, first.AddDate(0, 1, 0).UnixMilli() - offset
	case "1w":
		const monday = 4 * 86400e3 // 1970-01-05 was a Monday
		w := klineMS[iv]
		open := floorDiv(local-monday, w)*w + monday
		return open - offset, open + w - offset
	}
	w := klineMS[iv]
	open := floorDiv(local, w) * w
	return open - offset, open + w - offset
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func (g *klineGen) step(r *rand.Rand, wall int64) bool {
	ms := wall / 1e6
	if !g.open || g.closed {
		g.t0, g.t1 = klineWindow(ms, g.iv, g.offset)
		g.open, g.closed = true, false
		g.n, g.v, g.q, g.tv, g.tq = 0, 0, 0, 0, 0
		g.o, g.c, g.h, g.lo = g.m.mid, g.m.mid, g.m.mid, g.m.mid
		g.f = g.lastID + 1
	}
	trades := 1 + poisson(r, g.perTick)
	for range min(trades, 8) {
		g.m.walk(r, float64(trades)/8)
		g.h, g.lo = max(g.h, g.m.mid), min(g.lo, g.m.mid)
	}
	g.c = g.m.mid
	vol := g.m.typQty * trades * int64(50+r.IntN(100)) / 100
	buy := vol * int64(30+r.IntN(41)) / 100
	g.v, g.q = g.v+vol, g.q+notional(vol, g.c)
	g.tv, g.tq = g.tv+buy, g.tq+notional(buy, g.c)
	g.n += trades
	g.lastID += trades
	g.l = g.lastID
	g.wall = wall
	g.closed = ms >= g.t1
	return true
}

func (g *klineGen) render(dst []byte, micro bool) []byte {
	dst = appendHead(dst, "kline", g.wall, micro, g.sym)
	dst = append(dst, `,"k":{"t":`...)
	t, T := g.t0, g.t1-1
	if micro {
		t, T = g.t0*1000, g.t1*1000-1
	}
	dst = strconv.AppendInt(dst, t, 10)
	dst = binance.AppendIntField(dst, "T", T)
	dst = binance.AppendStrField(dst, "s", g.sym)
	dst = binance.AppendStrField(dst, "i", g.iv)
	dst = binance.AppendIntField(dst, "f", g.f)
	dst = binance.AppendIntField(dst, "L", g.l)
	dst = binance.AppendDecField(dst, "o", g.o)
	dst = binance.AppendDecField(dst, "c", g.c)
	dst = binance.AppendDecField(dst, "h", g.h)
	dst = binance.AppendDecField(dst, "l", g.lo)
	dst = binance.AppendDecField(dst, "v", g.v)
	dst = binance.AppendIntField(dst, "n", g.n)
	dst = binance.AppendBoolField(dst, "x", g.closed)
	dst = binance.AppendDecField(dst, "q", g.q)
	dst = binance.AppendDecField(dst, "V", g.tv)
	dst = binance.AppendDecField(dst, "Q", g.tq)
	dst = binance.AppendStrField(dst, "B", "0")
	return append(dst, '}', '}')
}

func (g *klineGen) seq() int64 { return g.l }

// --- tickers ---

type tickerState struct {
	sym                      string
	m                        market
	open, high, low, prev    int64
	lastQty, vol, quote      int64
	first, last              int64
	bid, bidQty, ask, askQty int64
	changed                  bool
}

func newTickerState(sym string, r *rand.Rand, rate float64, window time.Duration) *tickerState {
	t := &tickerState{sym: upper(sym), m: newMarket(sym, r)}
	t.open = t.m.mid + t.m.tick*int64(r.NormFloat64()*float64(t.m.mid/t.m.tick)/50)
	if t.open <= 0 {
		t.open = t.m.mid
	}
	t.prev = t.open - t.m.tick*int64(r.IntN(5))
	t.high, t.low = max(t.open, t.m.mid)+t.m.tick*int64(r.IntN(500)), min(t.open, t.m.mid)-t.m.tick*int64(r.IntN(500))
	t.low = max(t.low, t.m.tick)
	count := int64(math.Max(1, rate*window.Seconds()))
	t.vol = count * t.m.typQty
	t.quote = notional(t.vol, t.m.mid)
	t.last = startID(r)
	t.first = t.last - count + 1
	return t
}

func (t *tickerState) step(r *rand.Rand, rate, dt float64) {
	n := poisson(r, rate*dt)
	t.m.walk(r, 1+float64(n)/4)
	t.high, t.low = max(t.high, t.m.mid), min(t.low, t.m.mid)
	t.last += n
	t.first += poisson(r, rate*dt) // trades leaving the rolling window
	if t.first > t.last {
		t.first = t.last
	}
	t.lastQty = t.m.qty(r)
	t.vol += t.lastQty*n - t.m.typQty*n/2 + t.m.typQty*int64(r.IntN(3))
	t.vol = max(t.vol, t.m.typQty)
	t.quote = notional(t.vol, (t.open+t.m.mid)/2)
	t.bid, t.ask = t.m.mid, t.m.mid+t.m.tick
	t.bidQty, t.askQty = t.m.qty(r)*3, t.m.qty(r)*3
}

type tickerGen struct {
	kind   binance.Kind // KindTicker, KindMiniTicker or KindWindowTicker
	window string       // "1h", "4h", "1d" for window tickers
	array  bool
	dt     float64 // virtual seconds per tick
	rate   float64
	wall   int64
	ts     []*tickerState
}

func (g *tickerGen) step(r *rand.Rand, wall int64) bool {
	g.wall = wall
	some := false
	for _, t := range g.ts {
		t.changed = !g.array || r.IntN(8) != 0
		if t.changed {
			t.step(r, g.rate, g.dt)
			some = true
		}
	}
	if !some && len(g.ts) > 0 {
		g.ts[0].changed = true
		g.ts[0].step(r, g.rate, g.dt)
	}
	return len(g.ts) > 0
}

func (g *tickerGen) render(dst []byte, micro bool) []byte {
	if !g.array {
		return g.renderOne(dst, g.ts[0], micro)
	}
	dst = append(dst, '[')
	first := true
	for _, t := range g.ts {
		if !t.changed {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = g.renderOne(dst, t, micro)
	}
	return append(dst, ']')
}

func (g *tickerGen) renderOne(dst []byte, t *tickerState, micro bool) []byte {
	c := t.m.mid
	switch g.kind {
	case binance.KindMiniTicker:
		dst = appendHead(dst, "24hrMiniTicker", g.wall, micro, t.sym)
		dst = binance.AppendDecField(dst, "c", c)
		dst = binance.AppendDecField(dst, "o", t.open)
		dst = binance.AppendDecField(dst, "h", t.high)
		dst = binance.AppendDecField(dst, "l", t.low)
		dst = binance.AppendDecField(dst, "v", t.vol)
		dst = binance.AppendDecField(dst, "q", t.quote)
		return append(dst, '}')
	case binance.KindWindowTicker:
		dst = appendHead(dst, g.window+"Ticker", g.wall, micro, t.sym)
		dst = binance.AppendDecField(dst, "p", c-t.open)
		dst = appendPct(dst, c, t.open)
		dst = binance.AppendDecField(dst, "o", t.open)
		dst = binance.AppendDecField(dst, "h", t.high)
		dst = binance.AppendDecField(dst, "l", t.low)
		dst = binance.AppendDecField(dst, "c", c)
		dst = binance.AppendDecField(dst, "w", (t.open+t.high+t.low+c)/4)
		dst = binance.AppendDecField(dst, "v", t.vol)
		dst = binance.AppendDecField(dst, "q", t.quote)
		win := int64(86400e9)
		switch g.window {
		case "1h":
			win = 3600e9
		case "4h":
			win = 4 * 3600e9
		}
		open := (g.wall - win) / 60e9 * 60e9 // aligned to a minute: the window may be up to 59,999 ms wider
		dst = appendTSField(dst, "O", open, micro)
		dst = appendTSField(dst, "C", g.wall, micro)
		dst = binance.AppendIntField(dst, "F", t.first)
		dst = binance.AppendIntField(dst, "L", t.last)
		dst = binance.AppendIntField(dst, "n", t.last-t.first+1)
		return append(dst, '}')
	}
	dst = appendHead(dst, "24hrTicker", g.wall, micro, t.sym)
	dst = binance.AppendDecField(dst, "p", c-t.open)
	dst = appendPct(dst, c, t.open)
	dst = binance.AppendDecField(dst, "w", (t.open+t.high+t.low+c)/4)
	dst = binance.AppendDecField(dst, "x", t.prev)
	dst = binance.AppendDecField(dst, "c", c)
	dst = binance.AppendDecField(dst, "Q", t.lastQty)
	dst = binance.AppendDecField(dst, "b", t.bid)
	dst = binance.AppendDecField(dst, "B", t.bidQty)
	dst = binance.AppendDecField(dst, "a", t.ask)
	dst = binance.AppendDecField(dst, "A", t.askQty)
	dst = binance.AppendDecField(dst, "o", t.open)
	dst = binance.AppendDecField(dst, "h", t.high)
	dst = binance.AppendDecField(dst, "l", t.low)
	dst = binance.AppendDecField(dst, "v", t.vol)
	dst = binance.AppendDecField(dst, "q", t.quote)
	dst = appendTSField(dst, "O", g.wall-86400e9, micro)
	dst = appendTSField(dst, "C", g.wall, micro)
	dst = binance.AppendIntField(dst, "F", t.first)
	dst = binance.AppendIntField(dst, "L", t.last)
	dst = binance.AppendIntField(dst, "n", t.last-t.first+1)
	return append(dst, '}')
}

// appendPct appends the "P" field: change in percent with 3 decimals, quoted.
func appendPct(dst []byte, c, o int64) []byte {
	dst = binance.AppendKey(dst, "P")
	dst = append(dst, '"')
	dst = strconv.AppendFloat(dst, float64(c-o)*100/float64(o), 'f', 3, 64)
	return append(dst, '"')
}

func (g *tickerGen) seq() int64 { return 0 }

// --- avgPrice, referencePrice ---

type avgPriceGen struct {
	sym      string
	m        market
	wall, tt int64
	avg      int64
}

func (g *avgPriceGen) step(r *rand.Rand, wall int64) bool {
	g.m.walk(r, 2)
	g.avg = g.m.mid + g.m.tick*int64(r.IntN(7)-3)
	g.wall, g.tt = wall, wall-int64(r.IntN(200))*int64(time.Millisecond)
	return true
}

func (g *avgPriceGen) render(dst []byte, micro bool) []byte {
	dst = appendHead(dst, "avgPrice", g.wall, micro, g.sym)
	dst = binance.AppendStrField(dst, "i", "5m")
	dst = binance.AppendDecField(dst, "w", g.avg)
	dst = appendTSField(dst, "T", g.tt, micro)
	return append(dst, '}')
}

func (g *avgPriceGen) seq() int64 { return 0 }

type refPriceGen struct {
	sym  string
	m    market
	wall int64
}

func (g *refPriceGen) step(r *rand.Rand, wall int64) bool {
	g.m.walk(r, 2)
	g.wall = wall
	return true
}

func (g *refPriceGen) render(dst []byte, micro bool) []byte {
	dst = append(dst, `{"e":"referencePrice"`...)
	dst = binance.AppendStrField(dst, "s", g.sym)
	dst = binance.AppendDecField(dst, "r", g.m.mid)
	dst = appendTSField(dst, "t", g.wall, micro)
	return append(dst, '}')
}

func (g *refPriceGen) seq() int64 { return 0 }
