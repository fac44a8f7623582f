package binance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wssoak/wssoak/internal/limit"
)

// Ticker24h is the part of one element of GET /api/v3/ticker/24hr that symbol
// selection needs. Binance sends numbers as JSON strings.
type Ticker24h struct {
	Symbol      string `json:"symbol"`
	LastPrice   string `json:"lastPrice"`
	Volume      string `json:"volume"`
	QuoteVolume string `json:"quoteVolume"`
	Count       int64  `json:"count"`
}

// StableAssets are the base assets whose <asset><quote> pairs TopSymbols
// skips: stablecoins and fiat currencies. Their volume is conversion between
// two dollars (or a dollar and a euro), not a market anyone subscribes to for
// price action, and on Binance several of them rank among the top pairs by
// quote volume. The list is matched against the base asset exactly.
var StableAssets = []string{
	"USDC", "FDUSD", "TUSD", "BUSD", "DAI", "USDP", "USDS", "USDE", "PYUSD", "USD1", "RLUSD", "XUSD", "BFUSD", "AEUR", "EURI",
	"EUR", "GBP", "TRY", "BRL", "ARS", "JPY", "MXN", "PLN", "RON", "UAH", "ZAR", "COP", "CZK",
}

// TopSymbols returns the n symbols quoted in quote (e.g. "USDT") with the
// highest 24 h quote volume, in lowercase, highest first. Pairs whose base
// asset is in StableAssets are excluded; ties are broken by symbol name so
// the same answer gives the same list.
func TopSymbols(tickers []Ticker24h, n int, quote string) ([]string, error) {
	quote = strings.ToUpper(quote)
	type cand struct {
		sym string
		qv  float64
	}
	var cs []cand
	for _, t := range tickers {
		base, ok := strings.CutSuffix(t.Symbol, quote)
		if !ok || base == "" || slices.Contains(StableAssets, base) {
			continue
		}
		qv, err := strconv.ParseFloat(t.QuoteVolume, 64)
		if err != nil {
			return nil, fmt.Errorf("ticker %s: bad quoteVolume %q", t.Symbol, t.QuoteVolume)
		}
		cs = append(cs, cand{strings.ToLower(t.Symbol), qv})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		switch {
		case a.qv > b.qv:
			return -1
		case a.qv < b.qv:
			return 1
		}
		return strings.Compare(a.sym, b.sym)
	})
	if len(cs) < n {
		return nil, fmt.Errorf("want the top %d %s markets, the exchange lists only %d (stablecoin and fiat pairs excluded)", n, quote, len(cs))
	}
	out := make([]string, n)
	for i := range out {
		out[i] = cs[i].sym
	}
	return out, nil
}

// FetchTickers24h gets GET <base>/api/v3/ticker/24hr. Errors name the URL.
func FetchTickers24h(ctx context.Context, client *http.Client, base string) ([]Ticker24h, error) {
	u := strings.TrimRight(base, "/") + "/api/v3/ticker/24hr"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := limit.ReadAll(resp.Body, "get "+u, limit.RESTAnswer)
	if errors.As(err, new(*limit.TooLargeError)) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("get %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: status %s: %s", u, resp.Status, strings.TrimSpace(string(body[:min(len(body), 200)])))
	}
	var ts []Ticker24h
	if err := json.Unmarshal(body, &ts); err != nil {
		return nil, fmt.Errorf("get %s: decode: %w", u, err)
	}
	return ts, nil
}
