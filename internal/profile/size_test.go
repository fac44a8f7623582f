package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symbolsProfile is a profile listing n symbols, one per line from line 4,
// with one group of the given stream templates (line n+5 names the group).
func symbolsProfile(n int, templates ...string) string {
	var b strings.Builder
	b.WriteString("name: big\nduration: 1m\nsymbols:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - s%dusdt\n", i)
	}
	fmt.Fprintf(&b, "groups:\n  - name: g\n    streams: ['%s']\n", strings.Join(templates, "', '"))
	return b.String()
}

// 80,000 symbols load, are checked for duplicates (one is found with the line
// of its first listing) and expand to one stream each.
func TestLoadManySymbols(t *testing.T) {
	const n = 80_000
	text := symbolsProfile(n, "{symbol}@trade")
	p, err := Parse("big.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Symbols) != n {
		t.Fatalf("%d symbols, want %d", len(p.Symbols), n)
	}
	groups, err := p.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || len(groups[0].Streams) != n || groups[0].Streams[n-1].Name != fmt.Sprintf("s%dusdt@trade", n-1) {
		t.Fatalf("expanded to %d groups, first of %d streams; want 1 of %d", len(groups), len(groups[0].Streams), n)
	}
	// The same list with symbol 1234 listed again at its end (line n+4).
	dup := strings.Replace(text, "groups:", "  - s1234usdt\ngroups:", 1)
	want := fmt.Sprintf("big.yaml:%d: symbol \"s1234usdt\" listed twice (first at line %d)", n+4, 1234+4)
	if _, err := Parse("big.yaml", []byte(dup)); err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// Past the bounds on symbols, streams and connections a profile fails at
// once, at the line of the list or group at fault.
func TestSizeBounds(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"symbols", symbolsProfile(MaxSymbols+1, "{symbol}@trade"),
			"big.yaml:4: symbols has 100001 items: at most 100000"},
		{"streams of one group", symbolsProfile(MaxStreams/2+1, "{symbol}@trade", "{symbol}@aggTrade"),
			fmt.Sprintf("big.yaml:%d: group \"g\" subscribes to more than 100000 streams: a library subscribes to at most 100000 over all groups", MaxStreams/2+1+5)},
		{"symbols and streams at the bound, duplicates not counted", symbolsProfile(MaxStreams, "{symbol}@trade", "{symbol}@trade"), ""},
		{"streams over groups", "symbols: {top: 1000, quote: USDT}\ngroups:\n" +
			strings.Repeat("  - {name: a, streams: ['{symbol}@trade', '{symbol}@aggTrade', '{symbol}@depth']}\n", 1) +
			strings.Repeat("  - {name: b, streams: ['{symbol}@kline_1m', '{symbol}@kline_5m']}\n", 1) +
			func() string {
				var b strings.Builder
				for i := range 32 {
					fmt.Fprintf(&b, "  - {name: c%d, streams: ['{symbol}@trade', '{symbol}@aggTrade', '{symbol}@depth']}\n", i)
				}
				return b.String()
			}(),
			"x.yaml:36: group \"c31\" brings the streams past 100000 (98000 in the groups before it): a library subscribes to at most 100000 over all groups"},
		{"connections", "symbols: {top: 1000, quote: USDT}\ngroups:\n" + func() string {
			var b strings.Builder
			for i := range 11 {
				fmt.Fprintf(&b, "  - {name: g%d, streams: ['{symbol}@trade'], per_connection: 1}\n", i)
			}
			return b.String()
		}(), "x.yaml:13: group \"g10\" needs 1000 connections (1000 streams, 1 per connection), 11000 with the groups before it: a library opens at most 10000 over all groups"},
		{"streams list", "groups:\n  - name: a\n    streams: [" + strings.Repeat("btcusdt@trade, ", MaxStreams) + "x@trade]\n",
			"x.yaml:3: streams has 100001 items: at most 100000"},
	}
	for _, tt := range tests {
		path := "x.yaml"
		if strings.HasPrefix(tt.yaml, "name: big") {
			path = "big.yaml"
		}
		_, err := Parse(path, []byte(tt.yaml))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// BenchmarkLoadSymbols reads and checks profiles of 1k, 10k and 80k symbols:
// the time per symbol stays flat (the duplicate checks use maps).
func BenchmarkLoadSymbols(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 80_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "big.yaml")
			if err := os.WriteFile(path, []byte(symbolsProfile(n, "{symbol}@trade")), 0o600); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := Load(path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/symbol")
		})
	}
}
