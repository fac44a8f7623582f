package binance

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestTopSymbols(t *testing.T) {
	ts := []Ticker24h{
		{Symbol: "USDCUSDT", QuoteVolume: "9000000000"}, // stablecoin: excluded however large
		{Symbol: "FDUSDUSDT", QuoteVolume: "8000000000"},
		{Symbol: "EURUSDT", QuoteVolume: "7000000000"}, // fiat
		{Symbol: "BTCUSDT", QuoteVolume: "2000000000.5"},
		{Symbol: "ETHBTC", QuoteVolume: "5000000000"}, // other quote
		{Symbol: "BTCFDUSD", QuoteVolume: "6000000000"},
		{Symbol: "ETHUSDT", QuoteVolume: "1000000000"},
		{Symbol: "SOLUSDT", QuoteVolume: "1000000000"}, // tie with ETH: by name
		{Symbol: "USDT", QuoteVolume: "1"},             // no base asset
		{Symbol: "PEPEUSDT", QuoteVolume: "30"},
	}
	for _, tc := range []struct {
		n     int
		quote string
		want  []string
		err   string
	}{
		{n: 1, quote: "USDT", want: []string{"btcusdt"}},
		{n: 3, quote: "USDT", want: []string{"btcusdt", "ethusdt", "solusdt"}},
		{n: 4, quote: "usdt", want: []string{"btcusdt", "ethusdt", "solusdt", "pepeusdt"}},
		{n: 1, quote: "BTC", want: []string{"ethbtc"}},
		{n: 5, quote: "USDT", err: "want the top 5 USDT markets, the exchange lists only 4"},
	} {
		got, err := TopSymbols(ts, tc.n, tc.quote)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("top %d %s: err %v, want %q", tc.n, tc.quote, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("top %d %s: %v %v, want %v", tc.n, tc.quote, got, err, tc.want)
		}
	}
	if _, err := TopSymbols([]Ticker24h{{Symbol: "XUSDT", QuoteVolume: "lots"}}, 1, "USDT"); err == nil || !strings.Contains(err.Error(), "XUSDT") {
		t.Errorf("bad quoteVolume: %v", err)
	}
}

func TestFetchTickersErrorsNameTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":-1003,"msg":"Too many requests"}`, http.StatusTeapot)
	}))
	defer srv.Close()
	_, err := FetchTickers24h(context.Background(), srv.Client(), srv.URL+"/")
	want := srv.URL + "/api/v3/ticker/24hr: status 418"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Too many requests") {
		t.Errorf("err %v, want it to contain %q and the body", err, want)
	}
	// A closed port: the error names the URL too.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	_, err = FetchTickers24h(context.Background(), http.DefaultClient, "http://"+addr)
	if err == nil || !strings.Contains(err.Error(), "get http://"+addr+"/api/v3/ticker/24hr") {
		t.Errorf("closed port: %v", err)
	}
}
