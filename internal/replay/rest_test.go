package replay

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %q", url, err, body)
	}
	return resp.StatusCode
}

func TestRESTTicker24h(t *testing.T) {
	syms := []string{"btcusdt", "ethusdt", "solusdt", "pepeusdt"}
	a := startServer(t, Config{Replay: wire.Replay{Seed: 3, Symbols: syms}})
	b := startServer(t, Config{Replay: wire.Replay{Seed: 3, Symbols: syms}})
	c := startServer(t, Config{Replay: wire.Replay{Seed: 4, Symbols: syms}})
	var raw []map[string]any
	if st := getJSON(t, "http://"+a.Addr()+"/api/v3/ticker/24hr", &raw); st != 200 {
		t.Fatalf("status %d", st)
	}
	if len(raw) != len(syms)+len(restExtras) {
		t.Fatalf("%d tickers, want %d", len(raw), len(syms)+len(restExtras))
	}
	// Binance's shape: numbers as strings, ids and times as numbers.
	wantKeys := []string{"askPrice", "askQty", "bidPrice", "bidQty", "closeTime", "count", "firstId", "highPrice",
		"lastId", "lastPrice", "lastQty", "lowPrice", "openPrice", "openTime", "prevClosePrice", "priceChange",
		"priceChangePercent", "quoteVolume", "symbol", "volume", "weightedAvgPrice"}
	for _, tk := range raw {
		var ks []string
		for k := range tk {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		if !reflect.DeepEqual(ks, wantKeys) {
			t.Fatalf("keys %v, want %v", ks, wantKeys)
		}
		qv, err := strconv.ParseFloat(tk["quoteVolume"].(string), 64)
		if err != nil || qv < 1e5 {
			t.Errorf("%v: quoteVolume %v", tk["symbol"], tk["quoteVolume"])
		}
		if _, ok := tk["count"].(float64); !ok {
			t.Errorf("count is %T, want a number", tk["count"])
		}
	}
	var ta, tb, tc []binance.Ticker24h
	getJSON(t, "http://"+a.Addr()+"/api/v3/ticker/24hr", &ta)
	getJSON(t, "http://"+b.Addr()+"/api/v3/ticker/24hr", &tb)
	getJSON(t, "http://"+c.Addr()+"/api/v3/ticker/24hr", &tc)
	vols := func(ts []binance.Ticker24h) (out []string) {
		for _, x := range ts {
			out = append(out, x.Symbol+"="+x.QuoteVolume)
		}
		return out
	}
	if !reflect.DeepEqual(vols(ta), vols(tb)) {
		t.Errorf("same seed, different volumes:\n%v\n%v", vols(ta), vols(tb))
	}
	if reflect.DeepEqual(vols(ta), vols(tc)) {
		t.Errorf("another seed, same volumes: %v", vols(ta))
	}
	// The stablecoin pairs rank first by volume, and selection skips them.
	top, err := binance.TopSymbols(ta, len(syms), "USDT")
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(top)); !reflect.DeepEqual(got, slices.Sorted(slices.Values(syms))) {
		t.Errorf("top %d USDT: %v, want the server's symbols %v", len(syms), top, syms)
	}
	for _, x := range ta {
		if strings.HasPrefix(x.Symbol, "USDC") {
			for _, y := range ta {
				qx, _ := strconv.ParseFloat(x.QuoteVolume, 64)
				qy, _ := strconv.ParseFloat(y.QuoteVolume, 64)
				if slices.Contains(syms, strings.ToLower(y.Symbol)) && qy >= qx {
					t.Errorf("%s volume %v not above %s %v: exclusion untested", x.Symbol, qx, y.Symbol, qy)
				}
			}
		}
	}
	var one binance.Ticker24h
	getJSON(t, "http://"+a.Addr()+"/api/v3/ticker/24hr?symbol=ETHUSDT", &one)
	if i := slices.IndexFunc(ta, func(x binance.Ticker24h) bool { return x.Symbol == "ETHUSDT" }); i < 0 || one.QuoteVolume != ta[i].QuoteVolume {
		t.Errorf("?symbol=ETHUSDT: %+v", one)
	}
}

func TestRESTDepth(t *testing.T) {
	start := time.Now().Add(300 * time.Millisecond)
	s := startServer(t, Config{Replay: wire.Replay{Seed: 5, Symbols: []string{"btcusdt"}, Start: start}})
	var snap struct {
		LastUpdateID int64       `json:"lastUpdateId"`
		Bids         [][2]string `json:"bids"`
		Asks         [][2]string `json:"asks"`
	}
	if st := getJSON(t, "http://"+s.Addr()+"/api/v3/depth?symbol=BTCUSDT&limit=5", &snap); st != 200 {
		t.Fatalf("status %d", st)
	}
	if len(snap.Bids) != 5 || len(snap.Asks) != 5 || snap.LastUpdateID <= 0 {
		t.Fatalf("snapshot %+v", snap)
	}
	bid, _ := strconv.ParseFloat(snap.Bids[0][0], 64)
	ask, _ := strconv.ParseFloat(snap.Asks[0][0], 64)
	if !(bid > 10000 && bid < ask) {
		t.Errorf("best bid %v, best ask %v: want a plausible BTC book", bid, ask)
	}
	// The diff stream continues the snapshot: its first U is lastUpdateId+1.
	cl := dial(t, s, "/ws/btcusdt@depth@100ms", "t/0/0")
	msg := next(t, cl, 5*time.Second)
	if u := field(t, msg, "U"); u != snap.LastUpdateID+1 {
		t.Errorf("first diff U %d, snapshot lastUpdateId %d: want U = lastUpdateId+1", u, snap.LastUpdateID)
	}
	var e struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
	if st := getJSON(t, "http://"+s.Addr()+"/api/v3/depth", &e); st != 400 || e.Code != -1102 {
		t.Errorf("no symbol: %d %+v", st, e)
	}
	if st := getJSON(t, "http://"+s.Addr()+"/api/v3/depth?symbol=BTC-USDT", &e); st != 400 || e.Code != -1121 {
		t.Errorf("bad symbol: %d %+v", st, e)
	}
}
