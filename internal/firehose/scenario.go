package firehose

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/wssoak/wssoak/internal/binance"
)

// Scenario is one kind of traffic the firehose sends: its streams, and the
// payload size (bytes, with the combined-stream wrapper) it aims at. The sizes
// are those of the benchmark soak bench reproduces, its KB read as KiB.
type Scenario struct {
	Name    string   // as given on a command line: aggTrade, kline, depth20, depth, tickerArr, mix
	Streams []string // stream names, in the order the messages cycle through them
	Target  int      // aimed payload size in bytes (the mean over the messages)
	About   string
	Levels  int // depth diffs: levels a side; 0: the depth scenario's 145
}

// scenarios are the firehose's scenarios, in the order of the benchmark table.
var scenarios = []Scenario{
	{"aggTrade", []string{"btcusdt@aggTrade"}, 205, "aggTrade of one market, ~0.2 KB", 0},
	{"kline", []string{"ethbtc@kline_1m"}, 307, "kline updates of one market, ~0.3 KB", 0},
	// depth20 is the exception: 40 levels of 8-decimal strings take 1,120 bytes
	// before any key, so a Binance-shaped depth20 cannot be the benchmark's
	// 1.0 KB; this one, of a market with short prices, is the smallest there is.
	{"depth20", []string{"ethbtc@depth20"}, 1200, "20-level partial book of one market, ~1.2 KB", 0},
	{"depth", []string{"btcusdt@depth"}, 9318, "diff depth of one market, ~145 levels a side, ~9.1 KB", 0},
	{"tickerArr", []string{"!ticker@arr"}, 464794, "!ticker@arr (retired by Binance, generated all the same), ~450 KB", 0},
	{"mix", mixStreams(), 205, "trade, aggTrade, bookTicker and kline of 20 markets on one connection, ~0.2 KB", 0},
}

// mixSymbols are the markets of the mix scenario.
var mixSymbols = []string{
	"btcusdt", "ethusdt", "bnbusdt", "solusdt", "xrpusdt", "adausdt", "dogeusdt", "trxusdt", "linkusdt", "avaxusdt",
	"dotusdt", "ltcusdt", "bchusdt", "uniusdt", "atomusdt", "etcusdt", "xlmusdt", "filusdt", "nearusdt", "aptusdt",
}

func mixStreams() []string {
	var out []string
	for _, kind := range []string{"trade", "aggTrade", "bookTicker", "kline_1m"} {
		for _, s := range mixSymbols {
			out = append(out, s+"@"+kind)
		}
	}
	return out
}

// DefaultN is a message count of about 40 MB of sc's payloads (at least 10).
func DefaultN(sc Scenario) int { return max(10, 41_000_000/sc.Target) }

// Scenarios returns every scenario, in table order.
func Scenarios() []Scenario { return append([]Scenario(nil), scenarios...) }

// Names returns the scenario names, in table order.
func Names() []string {
	out := make([]string, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.Name
	}
	return out
}

// Lookup returns the scenario called name: one of Names, or a sized one
// (SizedName).
func Lookup(name string) (Scenario, error) {
	for _, s := range scenarios {
		if s.Name == name {
			return s, nil
		}
	}
	if name == SeedBook.Name {
		return SeedBook, nil
	}
	if n, ok := sizedBytes(name); ok {
		return Sized(n)
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(Names(), ", "))
}

// weight is how many messages a stream sends per round of its scenario: in
// the mix the trades and book tickers of a busy market outnumber its kline
// updates.
func weight(name string) int {
	switch {
	case strings.HasSuffix(name, "@bookTicker"):
		return 3
	case strings.HasSuffix(name, "@trade"), strings.HasSuffix(name, "@aggTrade"):
		return 2
	}
	return 1
}

// gen produces the payloads of one stream: each call of next appends the next
// event (without wrapper) and advances its sequence ids.
type gen interface {
	next(dst []byte, wallMS int64) []byte
}

func newGen(sc Scenario, name string, r *rand.Rand) (gen, error) {
	sym, kind, ok := strings.Cut(name, "@")
	if !ok {
		return nil, fmt.Errorf("stream %q: no kind", name)
	}
	m := newMarket(sym, r)
	id := 1_000_000_000 + r.Int64N(4_000_000_000)
	switch kind {
	case "arr":
		return newTickerArr(r), nil
	case "trade":
		return &tradeGen{sym: strings.ToUpper(sym), m: m, t: id, r: r}, nil
	case "aggTrade":
		return &aggGen{sym: strings.ToUpper(sym), m: m, a: id / 2, l: id, r: r}, nil
	case "bookTicker":
		return &bookGen{sym: strings.ToUpper(sym), m: m, u: id * 10, r: r}, nil
	case "kline_1m":
		return &klineGen{sym: strings.ToUpper(sym), m: m, l: id / 10, r: r}, nil
	case "depth20":
		return &partialGen{m: m, id: id * 10, levels: 20, r: r}, nil
	case "depth":
		levels := 145
		if sc.Levels > 0 {
			levels = sc.Levels
		}
		return &diffGen{sym: strings.ToUpper(sym), m: m, u: id * 10, levels: levels, r: r}, nil
	case "ticker@arr":
		return newTickerArr(r), nil
	case "book":
		return &seedBookGen{r: r}, nil
	}
	return nil, fmt.Errorf("stream %q: no generator", name)
}

// market is a synthetic instrument: a mid price doing a random walk on its
// tick grid, quantities around a typical size. Fixed point, 1e-8 units.
type market struct {
	mid, tick, qty int64
}

var markets = map[string]market{
	"btcusdt": {67000_00000000, 1000000, 1000000}, "ethusdt": {3500_00000000, 1000000, 5000000},
	"ethbtc": {3512000, 1000, 30000000},
}

func newMarket(sym string, r *rand.Rand) market {
	if m, ok := markets[sym]; ok {
		return m
	}
	mid := int64(float64(1e8) * (0.1 + 100*r.Float64()))
	tick := int64(1)
	for tick*100_000 < mid {
		tick *= 10
	}
	return market{mid: mid - mid%tick, tick: tick, qty: max(1, int64(200e16/float64(mid)))}
}

func (m *market) walk(r *rand.Rand) {
	m.mid += m.tick * int64(r.IntN(5)-2)
	m.mid = max(m.mid, 1000*m.tick)
}

// amount is a quantity between a tenth of the typical size and three times it.
func (m *market) amount(r *rand.Rand) int64 { return max(1, m.qty/10+r.Int64N(3*m.qty)) }

func head(dst []byte, event string, wallMS int64, sym string) []byte {
	dst = append(dst, `{"e":"`...)
	dst = append(dst, event...)
	dst = append(dst, `","E":`...)
	dst = strconv.AppendInt(dst, wallMS, 10)
	return binance.AppendStrField(dst, "s", sym)
}

type tradeGen struct {
	sym string
	m   market
	t   int64
	r   *rand.Rand
}

func (g *tradeGen) next(dst []byte, wallMS int64) []byte {
	g.t++
	g.m.walk(g.r)
	dst = head(dst, "trade", wallMS, g.sym)
	dst = binance.AppendIntField(dst, "t", g.t)
	dst = binance.AppendDecField(dst, "p", g.m.mid)
	dst = binance.AppendDecField(dst, "q", g.m.amount(g.r))
	dst = binance.AppendIntField(dst, "T", wallMS-int64(g.r.IntN(3)))
	dst = binance.AppendBoolField(dst, "m", g.r.IntN(2) == 0)
	dst = binance.AppendBoolField(dst, "M", true)
	return append(dst, '}')
}

type aggGen struct {
	sym  string
	m    market
	a, l int64
	r    *rand.Rand
}

func (g *aggGen) next(dst []byte, wallMS int64) []byte {
	g.a++
	f := g.l + 1
	g.l = f + int64(g.r.IntN(3))
	g.m.walk(g.r)
	dst = head(dst, "aggTrade", wallMS, g.sym)
	dst = binance.AppendIntField(dst, "a", g.a)
	dst = binance.AppendDecField(dst, "p", g.m.mid)
	dst = binance.AppendDecField(dst, "q", g.m.amount(g.r))
	dst = binance.AppendIntField(dst, "f", f)
	dst = binance.AppendIntField(dst, "l", g.l)
	dst = binance.AppendIntField(dst, "T", wallMS-int64(g.r.IntN(3)))
	dst = binance.AppendBoolField(dst, "m", g.r.IntN(2) == 0)
	dst = binance.AppendBoolField(dst, "M", true)
	return append(dst, '}')
}

type bookGen struct {
	sym string
	m   market
	u   int64
	r   *rand.Rand
}

func (g *bookGen) next(dst []byte, _ int64) []byte {
	g.u += 1 + g.r.Int64N(5) // book ids advance with gaps, by design
	g.m.walk(g.r)
	dst = append(dst, `{"u":`...)
	dst = strconv.AppendInt(dst, g.u, 10)
	dst = binance.AppendStrField(dst, "s", g.sym)
	dst = binance.AppendDecField(dst, "b", g.m.mid)
	dst = binance.AppendDecField(dst, "B", g.m.amount(g.r)*4)
	dst = binance.AppendDecField(dst, "a", g.m.mid+g.m.tick)
	dst = binance.AppendDecField(dst, "A", g.m.amount(g.r)*4)
	return append(dst, '}')
}

// klineGen sends updates of one-minute klines: klineUpdates updates per kline,
// the last one final (x true); the trade ids (f..L) grow with every update and
// the next kline starts at the last one's L + 1.
type klineGen struct {
	sym      string
	m        market
	open     int64 // open time, ms; 0 before the first update
	f, l     int64 // trade ids of the current kline; f == 0: no trade yet
	updates  int
	o, h, lo int64
	vol, n   int64
	r        *rand.Rand
}

const klineUpdates = 30

func (g *klineGen) next(dst []byte, wallMS int64) []byte {
	if g.open == 0 || g.updates == klineUpdates {
		if g.open == 0 {
			g.open = wallMS - wallMS%60000
		} else {
			g.open += 60000
		}
		g.updates, g.f, g.o, g.h, g.lo, g.vol, g.n = 0, g.l+1, g.m.mid, g.m.mid, g.m.mid, 0, 0
	}
	g.updates++
	trades := 1 + g.r.Int64N(3)
	g.l += trades
	g.n += trades
	g.m.walk(g.r)
	g.h, g.lo = max(g.h, g.m.mid), min(g.lo, g.m.mid)
	g.vol += g.m.amount(g.r)
	quote := g.vol / 1e4 * (g.m.mid / 1e4) / 1
	dst = head(dst, "kline", wallMS, g.sym)
	dst = append(binance.AppendKey(dst, "k"), `{"t":`...)
	dst = strconv.AppendInt(dst, g.open, 10)
	dst = binance.AppendIntField(dst, "T", g.open+59999)
	dst = binance.AppendStrField(dst, "s", g.sym)
	dst = binance.AppendStrField(dst, "i", "1m")
	dst = binance.AppendIntField(dst, "f", g.f)
	dst = binance.AppendIntField(dst, "L", g.l)
	dst = binance.AppendDecField(dst, "o", g.o)
	dst = binance.AppendDecField(dst, "c", g.m.mid)
	dst = binance.AppendDecField(dst, "h", g.h)
	dst = binance.AppendDecField(dst, "l", g.lo)
	dst = binance.AppendDecField(dst, "v", g.vol)
	dst = binance.AppendIntField(dst, "n", g.n)
	dst = binance.AppendBoolField(dst, "x", g.updates == klineUpdates)
	dst = binance.AppendDecField(dst, "q", quote)
	dst = binance.AppendDecField(dst, "V", g.vol/2)
	dst = binance.AppendDecField(dst, "Q", quote/2)
	dst = binance.AppendStrField(dst, "B", "0")
	return append(dst, '}', '}')
}

type level = binance.Level

// partialGen sends partial books (depth<N>): lastUpdateId strictly increasing.
type partialGen struct {
	m          market
	id         int64
	levels     int
	bids, asks []level
	r          *rand.Rand
}

func (g *partialGen) next(dst []byte, _ int64) []byte {
	g.id += 1 + g.r.Int64N(60)
	g.m.walk(g.r)
	g.bids, g.asks = g.bids[:0], g.asks[:0]
	pb, pa := g.m.mid, g.m.mid+g.m.tick
	for range g.levels {
		g.bids = append(g.bids, level{P: pb, Q: g.m.amount(g.r)})
		g.asks = append(g.asks, level{P: pa, Q: g.m.amount(g.r)})
		pb -= g.m.tick * (1 + g.r.Int64N(2))
		pa += g.m.tick * (1 + g.r.Int64N(2))
	}
	dst = append(dst, `{"lastUpdateId":`...)
	dst = strconv.AppendInt(dst, g.id, 10)
	dst = binance.AppendLevels(binance.AppendKey(dst, "bids"), g.bids)
	dst = binance.AppendLevels(binance.AppendKey(dst, "asks"), g.asks)
	return append(dst, '}')
}

// diffGen sends depth diffs: U = previous u + 1, levels a side, about a fifth
// of them removals (quantity 0).
type diffGen struct {
	sym        string
	m          market
	u          int64
	levels     int
	bids, asks []level
	r          *rand.Rand
}

func (g *diffGen) next(dst []byte, wallMS int64) []byte {
	first := g.u + 1
	g.u += int64(g.levels) + g.r.Int64N(int64(g.levels))
	g.m.walk(g.r)
	g.bids, g.asks = g.bids[:0], g.asks[:0]
	for i := range g.levels {
		off := int64(i+1) * g.m.tick
		qb, qa := g.m.amount(g.r), g.m.amount(g.r)
		if g.r.IntN(5) == 0 {
			qb = 0
		}
		if g.r.IntN(5) == 0 {
			qa = 0
		}
		g.bids = append(g.bids, level{P: g.m.mid - off, Q: qb})
		g.asks = append(g.asks, level{P: g.m.mid + off, Q: qa})
	}
	dst = head(dst, "depthUpdate", wallMS, g.sym)
	dst = binance.AppendIntField(dst, "U", first)
	dst = binance.AppendIntField(dst, "u", g.u)
	dst = binance.AppendLevels(binance.AppendKey(dst, "b"), g.bids)
	dst = binance.AppendLevels(binance.AppendKey(dst, "a"), g.asks)
	return append(dst, '}')
}

// tickerArr sends the 24 h tickers of tickerSymbols markets in one array.
type tickerArr struct {
	syms   []string
	ms     []market
	fs, ls []int64
	r      *rand.Rand
}

const tickerSymbols = 1190

func newTickerArr(r *rand.Rand) *tickerArr {
	t := &tickerArr{r: r}
	quotes := []string{"USDT", "BTC", "FDUSD", "USDC", "TRY", "EUR"}
	for i := range tickerSymbols {
		base := strings.ToUpper(strconv.FormatInt(int64(36*36+i*7), 36)) // synthetic 3-letter bases
		sym := base + quotes[i%len(quotes)]
		t.syms = append(t.syms, sym)
		t.ms = append(t.ms, newMarket(strings.ToLower(sym), r))
		id := 1_000_000 + r.Int64N(1_000_000_000)
		t.fs, t.ls = append(t.fs, id), append(t.ls, id+r.Int64N(100_000))
	}
	return t
}

func (t *tickerArr) next(dst []byte, wallMS int64) []byte {
	dst = append(dst, '[')
	for i, sym := range t.syms {
		if i > 0 {
			dst = append(dst, ',')
		}
		m := &t.ms[i]
		o := m.mid
		m.walk(t.r)
		t.fs[i]++
		t.ls[i] += 1 + t.r.Int64N(50)
		vol := m.amount(t.r) * 1000
		dst = head(dst, "24hrTicker", wallMS, sym)
		dst = binance.AppendDecField(dst, "p", m.mid-o)
		dst = binance.AppendKey(dst, "P")
		dst = append(dst, `"0.015"`...)
		dst = binance.AppendDecField(dst, "w", m.mid)
		dst = binance.AppendDecField(dst, "x", o)
		dst = binance.AppendDecField(dst, "c", m.mid)
		dst = binance.AppendDecField(dst, "Q", m.amount(t.r))
		dst = binance.AppendDecField(dst, "b", m.mid-m.tick)
		dst = binance.AppendDecField(dst, "B", m.amount(t.r))
		dst = binance.AppendDecField(dst, "a", m.mid)
		dst = binance.AppendDecField(dst, "A", m.amount(t.r))
		dst = binance.AppendDecField(dst, "o", o)
		dst = binance.AppendDecField(dst, "h", m.mid+m.tick)
		dst = binance.AppendDecField(dst, "l", o-m.tick)
		dst = binance.AppendDecField(dst, "v", vol)
		dst = binance.AppendDecField(dst, "q", vol/1e4*(m.mid/1e4))
		dst = binance.AppendIntField(dst, "O", wallMS-86400000)
		dst = binance.AppendIntField(dst, "C", wallMS)
		dst = binance.AppendIntField(dst, "F", t.fs[i])
		dst = binance.AppendIntField(dst, "L", t.ls[i])
		dst = binance.AppendIntField(dst, "n", t.ls[i]-t.fs[i]+1)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
