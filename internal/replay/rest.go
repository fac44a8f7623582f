package replay

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
)

// The REST side of the replay server: the two Spot endpoints a soak needs
// before it subscribes, in Binance's JSON shapes.
//
//   - GET /api/v3/ticker/24hr: every symbol of Config.Symbols plus restExtras
//     (stablecoin, fiat and non-USDT pairs, so that symbol selection has
//     something to exclude), each with a quoteVolume that is a function of the
//     seed and the symbol only.
//   - GET /api/v3/depth?symbol=&limit=: a book snapshot whose lastUpdateId is
//     the id just before the first event of <symbol>@depth@100ms, so a client
//     that applies the diff stream to it finds U = lastUpdateId+1.

// restExtras are listed by the ticker endpoint besides Config.Symbols. The
// stablecoin pairs get the highest volumes, as they do on Binance.
var restExtras = []string{"usdcusdt", "fdusdusdt", "tusdusdt", "eurusdt", "ethbtc", "bnbbtc", "btcfdusd"}

// serveREST serves the REST endpoints; it returns false for other paths.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/api/v3/ticker/24hr":
		s.serveTicker24h(w, r)
	case "/api/v3/depth":
		s.serveDepth(w, r)
	default:
		return false
	}
	return true
}

// restError answers like Binance: {"code":-1121,"msg":"Invalid symbol."}.
func restError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "msg": msg})
}

func (s *Server) restRand(name string) *rand.Rand {
	f := fnv.New64a()
	f.Write([]byte("rest/" + name))
	return rand.New(rand.NewPCG(uint64(s.cfg.Seed), f.Sum64()))
}

type ticker24h struct {
	Symbol             string `json:"symbol"`
	PriceChange        string `json:"priceChange"`
	PriceChangePercent string `json:"priceChangePercent"`
	WeightedAvgPrice   string `json:"weightedAvgPrice"`
	PrevClosePrice     string `json:"prevClosePrice"`
	LastPrice          string `json:"lastPrice"`
	LastQty            string `json:"lastQty"`
	BidPrice           string `json:"bidPrice"`
	BidQty             string `json:"bidQty"`
	AskPrice           string `json:"askPrice"`
	AskQty             string `json:"askQty"`
	OpenPrice          string `json:"openPrice"`
	HighPrice          string `json:"highPrice"`
	LowPrice           string `json:"lowPrice"`
	Volume             string `json:"volume"`
	QuoteVolume        string `json:"quoteVolume"`
	OpenTime           int64  `json:"openTime"`
	CloseTime          int64  `json:"closeTime"`
	FirstID            int64  `json:"firstId"`
	LastID             int64  `json:"lastId"`
	Count              int64  `json:"count"`
}

func dec(v int64) string { return strings.Trim(string(binance.AppendDec(nil, v)), `"`) }

// tickerOf is a plausible, deterministic 24 h ticker of sym.
func (s *Server) tickerOf(sym string) ticker24h {
	r := s.restRand(sym)
	m := newMarket(sym, r)
	// Quote volume: log-uniform over 1e5 … 1e9, stablecoins above every market.
	qv := math.Pow(10, 5+4*r.Float64())
	if strings.HasPrefix(sym, "usdc") || strings.HasPrefix(sym, "fdusd") || strings.HasPrefix(sym, "tusd") {
		qv *= 100
	}
	last := m.mid
	open := last + m.tick*int64(r.NormFloat64()*200)
	open = max(open, m.tick)
	vol := int64(qv / float64(last) * 1e16) // base units in 1e-8: qv*1e8 / (last/1e8)
	count := 1000 + r.Int64N(2_000_000)
	first := startID(r)
	now := time.Now().UnixMilli()
	return ticker24h{
		Symbol:             strings.ToUpper(sym),
		PriceChange:        dec(last - open),
		PriceChangePercent: strconv.FormatFloat(100*float64(last-open)/float64(open), 'f', 3, 64),
		WeightedAvgPrice:   dec((last + open) / 2),
		PrevClosePrice:     dec(open),
		LastPrice:          dec(last),
		LastQty:            dec(m.qty(r)),
		BidPrice:           dec(last - m.tick),
		BidQty:             dec(m.qty(r)),
		AskPrice:           dec(last),
		AskQty:             dec(m.qty(r)),
		OpenPrice:          dec(open),
		HighPrice:          dec(max(last, open) + 10*m.tick),
		LowPrice:           dec(max(min(last, open)-10*m.tick, m.tick)),
		Volume:             dec(vol),
		QuoteVolume:        strconv.FormatFloat(qv, 'f', 8, 64),
		OpenTime:           now - 24*3600*1000,
		CloseTime:          now,
		FirstID:            first,
		LastID:             first + count - 1,
		Count:              count,
	}
}

func (s *Server) serveTicker24h(w http.ResponseWriter, r *http.Request) {
	syms := append(append([]string(nil), s.cfg.Symbols...), restExtras...)
	if q := r.URL.Query().Get("symbol"); q != "" {
		syms = []string{strings.ToLower(q)}
	}
	out := make([]ticker24h, 0, len(syms))
	seen := map[string]bool{}
	for _, sym := range syms {
		if !seen[sym] {
			seen[sym] = true
			out = append(out, s.tickerOf(sym))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("symbol") != "" {
		_ = json.NewEncoder(w).Encode(out[0])
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Server) serveDepth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sym := strings.ToLower(q.Get("symbol"))
	if sym == "" {
		restError(w, http.StatusBadRequest, -1102, "Mandatory parameter 'symbol' was not sent, was empty/null, or malformed.")
		return
	}
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			restError(w, http.StatusBadRequest, -1100, "Illegal characters found in parameter 'limit'; legal range is '^[0-9]{1,20}$'.")
			return
		}
		limit = min(n, 5000)
	}
	st, err := binance.ParseStream(sym + "@depth@100ms")
	if err != nil || st.Kind != binance.KindDepthDiff {
		restError(w, http.StatusBadRequest, -1121, "Invalid symbol.")
		return
	}
	// The same random source and generator as the stream's topic (hub.newTopic).
	f := fnv.New64a()
	f.Write([]byte(st.Name))
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), f.Sum64()))
	g := newGenerator(st, rng, genEnv{tradeRate: s.cfg.Rates["trade"], symbols: s.cfg.Symbols}).(*depthDiffGen)
	lr := s.restRand("depth/" + sym)
	var b []byte
	b = append(b, `{"lastUpdateId":`...)
	b = strconv.AppendInt(b, g.u, 10)
	side := func(key string, dir int64) {
		ls := make([]level, limit)
		for i := range ls {
			p := g.m.mid + dir*int64(i)*g.m.tick
			if dir > 0 {
				p += g.m.tick
			}
			ls[i] = level{P: max(p, g.m.tick), Q: g.m.qty(lr)}
		}
		b = binance.AppendLevels(binance.AppendKey(b, key), ls)
	}
	side("bids", -1)
	side("asks", 1)
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
