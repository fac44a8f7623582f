package profile

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// strip clears what a parsed profile has and the built-in one has not.
func strip(p *Profile) *Profile {
	q := *p
	q.Path, q.Text = "", ""
	q.Groups = append([]Group(nil), p.Groups...)
	for i := range q.Groups {
		q.Groups[i].Line = 0
	}
	q.Faults = append([]Fault(nil), p.Faults...)
	for i := range q.Faults {
		q.Faults[i].lines = nil
	}
	q.Variants = slices.Clone(p.Variants)
	for i := range q.Variants {
		q.Variants[i].lines, q.Variants[i].Line = nil, 0
	}
	return &q
}

func TestDefaultIsLocalYAML(t *testing.T) {
	p, err := Load("../../profiles/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != "../../profiles/local.yaml" || !strings.HasPrefix(p.Text, "# The default soak profile") {
		t.Errorf("Path %q, Text %.30q: want the file and its text", p.Path, p.Text)
	}
	if got, want := strip(p), Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("profiles/local.yaml differs from Default():\n got %+v\nwant %+v", got, want)
	}
	for _, g := range p.Groups {
		if g.Line == 0 {
			t.Errorf("group %q: Line not set", g.Name)
		}
	}
}

func TestProfilesDirParses(t *testing.T) {
	files, err := filepath.Glob("../../profiles/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no profiles found: %v", err)
	}
	for _, f := range files {
		if isBenchProfile(f) {
			continue // soak bench's profiles, another schema: TestBenchProfilesDecode reads them
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if p.NeedsResolve() {
				if _, err := p.ResolveSymbols(fixedTop); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.Expand(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// fixedTop resolves {top: N} to N made-up symbols: no network in tests.
func fixedTop(t Top) ([]string, error) {
	out := make([]string, t.N)
	for i := range out {
		out[i] = fmt.Sprintf("sym%d%s", i, strings.ToLower(t.Quote))
	}
	return out, nil
}

// TestSilentStreamsWarn: against Binance a retired or unknown stream is
// accepted with a warning (the exchange accepts it and sends nothing), a
// misspelt kind with the name meant; against the local replay server, which
// serves no such stream, an unknown one is an error at its line.
func TestSilentStreamsWarn(t *testing.T) {
	src := "target: wss://stream.binance.com:9443\ngroups:\n  - name: a\n    streams: ['!ticker@arr', '{symbol}@trade']\n  - name: b\n    streams: ['{symbol}@trades']\n"
	p, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatalf("a retired or unknown stream must be accepted: %v", err)
	}
	want := []string{
		`x.yaml:4: stream "!ticker@arr" was retired by Binance and sends nothing: it will be reported as stalled`,
		`x.yaml:6: unknown stream "btcusdt@trades" (from "{symbol}@trades"): Binance accepts it and sends nothing: it will be reported as stalled; did you mean "{symbol}@trade"?`,
	}
	local := strings.TrimPrefix(src, "target: wss://stream.binance.com:9443\n")
	if _, err := Parse("x.yaml", []byte(local)); err == nil || err.Error() != `x.yaml:5: unknown stream "{symbol}@trades": the replay server (target local) serves no such stream; did you mean "{symbol}@trade"?` {
		t.Errorf("an unknown stream against the local target: %v, want the error at its line", err)
	}
	if !reflect.DeepEqual(p.Warnings, want) {
		t.Errorf("warnings\n got %q\nwant %q", p.Warnings, want)
	}
	gs, err := p.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if gs[0].Streams[0].Name != "!ticker@arr" || len(gs[1].Streams) != 5 {
		t.Errorf("expand: %+v", gs)
	}
}

func TestTopSymbols(t *testing.T) {
	src := "symbols: {top: 3, quote: USDT}\ngroups:\n  - name: a\n    streams: ['{symbol}@trade']\n" +
		"  - name: b\n    streams: ['{symbol}@depth']\n    symbols: {top: 2, quote: USDT}\n" +
		"  - name: c\n    streams: ['{symbol}@aggTrade']\n    symbols: [ethbtc]\n"
	p, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !p.NeedsResolve() || p.Top == nil || *p.Top != (Top{N: 3, Quote: "USDT", Line: 1}) || p.Symbols != nil {
		t.Fatalf("top not parsed: %+v %+v", p.Top, p.Symbols)
	}
	if _, err := p.Expand(); err == nil {
		t.Fatal("Expand before ResolveSymbols: want an error")
	}
	if got := p.RESTBase("http://127.0.0.1:9"); got != "http://127.0.0.1:9" {
		t.Errorf("local REST base %q", got)
	}
	var asked []Top
	got, err := p.ResolveSymbols(func(tp Top) ([]string, error) {
		asked = append(asked, tp)
		return fixedTop(tp)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || len(got) != 2 {
		t.Errorf("asked %v: want each distinct top once", asked)
	}
	gs, err := p.Expand()
	if err != nil {
		t.Fatal(err)
	}
	names := func(g ExpandedGroup) (out []string) {
		for _, s := range g.Streams {
			out = append(out, s.Name)
		}
		return out
	}
	if w := []string{"sym0usdt@trade", "sym1usdt@trade", "sym2usdt@trade"}; !reflect.DeepEqual(names(gs[0]), w) {
		t.Errorf("group a %v, want %v", names(gs[0]), w)
	}
	if w := []string{"sym0usdt@depth", "sym1usdt@depth"}; !reflect.DeepEqual(names(gs[1]), w) {
		t.Errorf("group b %v, want %v", names(gs[1]), w)
	}
	if w := []string{"ethbtc@aggTrade"}; !reflect.DeepEqual(names(gs[2]), w) {
		t.Errorf("group c %v, want %v", names(gs[2]), w)
	}
	live, err := Parse("y.yaml", []byte("target: wss://stream.binance.com:9443\nsymbols: {top: 3, quote: USDT}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if live.RESTBase("x") != DefaultREST {
		t.Errorf("live REST base %q, want %q", live.RESTBase("x"), DefaultREST)
	}
	_, err = live.ResolveSymbols(func(Top) ([]string, error) { return nil, errors.New("boom") })
	if err == nil || !strings.Contains(err.Error(), "y.yaml:2") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("resolve error %v: want the file:line and the cause", err)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"))
	if err == nil || !strings.HasPrefix(err.Error(), "read profile: open ") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want read profile: open ... not exist", err)
	}
}

// A profile, or a CA file it names, that never ends (/dev/zero) or is huge
// (a sparse terabyte) fails at the size bound, naming the file, instead of
// being read whole.
func TestLoadBounded(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "huge")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	files := []string{sparse}
	if _, err := os.Stat("/dev/zero"); err == nil {
		files = append(files, "/dev/zero")
	}
	for _, file := range files {
		if _, err := Load(file); err == nil || err.Error() != "profile "+file+": larger than 4 MiB" {
			t.Errorf("Load(%s) = %v, want profile %s: larger than 4 MiB", file, err, file)
		}
		prof := filepath.Join(dir, "ca.yaml")
		if err := os.WriteFile(prof, []byte("name: x\ntls:\n  ca: "+file+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		want := prof + ":3: tls.ca: ca file " + file + ": larger than 4 MiB"
		if _, err := Load(prof); err == nil || err.Error() != want {
			t.Errorf("tls.ca %s: %v, want %s", file, err, want)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want func(p *Profile) // applied to Default()
	}{
		{"only target", "target: local\n", func(p *Profile) { p.Name = "x" }},
		{"document marker", "---\nname: local\n", func(*Profile) {}},
		{"live target", "target: wss://stream.binance.com:9443\nduration: 24h\n", func(p *Profile) {
			p.Name, p.Target, p.Duration = "x", "wss://stream.binance.com:9443", Duration(24*time.Hour)
		}},
		{"keepalive off", "name: k\nkeepalive: {interval: 0}\n", func(p *Profile) {
			p.Name, p.Keepalive.Interval = "k", 0
		}},
		{"report at the end only", "name: r\nreport: {every: 0}\n", func(p *Profile) {
			p.Name, p.Report.Every = "r", 0
		}},
		{"sizes", "name: s\nread_limit: 1048576\nrcvbuf: 512KB\n", func(p *Profile) {
			p.Name, p.ReadLimit, p.RcvBuf = "s", 1<<20, 512000
		}},
		{"libraries and symbols", "name: l\nlibraries: [gws, gorilla]\nsymbols: [btcusdt]\n", func(p *Profile) {
			p.Name, p.Libraries, p.Symbols, p.Replay.Symbols = "l", []string{"gws", "gorilla"}, []string{"btcusdt"}, []string{"btcusdt"}
		}},
		{"replay symbols kept", "name: r\nsymbols: [btcusdt]\nreplay: {symbols: [ethusdt, btcusdt]}\n", func(p *Profile) {
			p.Name, p.Symbols, p.Replay.Symbols = "r", []string{"btcusdt"}, []string{"ethusdt", "btcusdt"}
		}},
		{"rates merge", "name: r\nreplay:\n  rates: {trade: 5}\n  speed: 2.5\n  seed: -3\n", func(p *Profile) {
			p.Name, p.Replay.Rates["trade"], p.Replay.Speed, p.Replay.Seed = "r", 5, 2.5, -3
		}},
		{"group defaults", "name: g\ngroups:\n  - name: a\n    streams: [btcusdt@trade]\n  - name: b\n    streams: ['{symbol}@depth']\n    subscribe: message\n    per_connection: 2\n    symbols: [ethusdt]\n",
			func(p *Profile) {
				p.Name = "g"
				p.Groups = []Group{newGroup("a", "btcusdt@trade"), newGroup("b", "{symbol}@depth")}
				p.Groups[1].Subscribe, p.Groups[1].PerConnection, p.Groups[1].Symbols = SubscribeMessage, 2, []string{"ethusdt"}
			}},
		{"proxy and tls", "name: t\nproxy: socks5://u:p%40ss@127.0.0.1:1080\ntls: {ca: ../testdata/ca.pem, server_name: localhost}\nreplay: {tls: true}\n", func(p *Profile) {
			p.Name, p.Proxy, p.Replay.TLS = "t", "socks5://u:p%40ss@127.0.0.1:1080", true
			p.TLS = TLS{CA: "testdata/ca.pem", ServerName: "localhost"}
		}},
		{"give up by duration, silence", "name: g\nreconnect: {give_up_after: 10m}\nsilence: {factor: 5, min: 1s, realtime: 30s}\n", func(p *Profile) {
			p.Name, p.Reconnect.GiveUpDials, p.Reconnect.GiveUpAfter = "g", 0, Duration(10*time.Minute)
			p.Silence = Silence{Factor: 5, Min: Duration(time.Second), RealTime: Duration(30 * time.Second)}
		}},
		{"compression on", "name: c\ncompression: on\nreplay: {deflate_window_bits: 12, deflate_level: 6}\n", func(p *Profile) {
			p.Name, p.Compression, p.Replay.DeflateWindowBits, p.Replay.DeflateLevel = "c", wire.CompressionOn, 12, 6
		}},
		{"compression no context takeover", "name: c\ncompression: no_context_takeover\n", func(p *Profile) {
			p.Name, p.Compression = "c", wire.CompressionNoContextTakeover
		}},
		{"give up by count", "name: g\nreconnect: {give_up_after: 3}\n", func(p *Profile) {
			p.Name, p.Reconnect.GiveUpDials = "g", 3
		}},
		{"thresholds", "name: t\nthresholds:\n  max_rss_growth: 50MB\n  max_lost: 0\n  max_reconnect_p99: 1500ms\n  max_cpu_avg: 12.5\n",
			func(p *Profile) {
				p.Name = "t"
				p.Thresholds = []Threshold{{"max_lost", 0, 4}, {"max_reconnect_p99", 1.5, 5}, {"max_rss_growth", 50e6, 3}, {"max_cpu_avg", 12.5, 6}}
			}},
		{"faults", "name: f\nfaults:\n  - at: 15s\n    kind: close\n    code: 1011\n    reason: boom\n  - every: 20s\n    kind: drop\n    n: 3\n    streams: ['{symbol}@trade']\n  - every: 30s\n    at: 5s\n    kind: reject\n    n: 2\n    status: 429\n    retry_after: 2s\n  - at: 1m\n    kind: oversize\n    size: 2MiB\n",
			func(p *Profile) {
				p.Name = "f"
				p.Faults = []Fault{
					{At: Duration(15 * time.Second), Kind: "close", Code: 1011, Reason: "boom", Line: 3},
					{At: Duration(20 * time.Second), Every: Duration(20 * time.Second), Kind: "drop", N: 3, Streams: []string{"{symbol}@trade"}, Line: 7},
					{At: Duration(5 * time.Second), Every: Duration(30 * time.Second), Kind: "reject", N: 2, Status: 429, RetryAfter: Duration(2 * time.Second), Line: 11},
					{At: Duration(time.Minute), Kind: "oversize", Size: 2 << 20, Line: 17},
				}
			}},
		{"anchors", "name: a\nsymbols: &s [btcusdt]\nreplay: {symbols: *s}\n", func(p *Profile) {
			p.Name, p.Symbols, p.Replay.Symbols = "a", []string{"btcusdt"}, []string{"btcusdt"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("profiles/x.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			tt.want(want)
			if got := strip(p); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			if p.Text != tt.yaml {
				t.Errorf("Text not kept")
			}
		})
	}
}

// badProfiles each hold one problem (or several, of which the first counts).
var badProfiles = []struct{ name, yaml string }{
	{"empty", ""},
	{"comments only", "# nothing\n"},
	{"null document", "---\n"},
	{"not a mapping", "- a\n- b\n"},
	{"syntax", "name: x\nduration: 2m\nsymbols: [btcusdt\n"},
	{"syntax colon", "name: x\nduration 2m\nwarmup: 1s\n"},
	{"tab indent", "name: x\nkeepalive:\n\tinterval: 1s\n"},
	{"two documents", "name: x\n---\nname: y\n"},
	{"unknown key", "name: x\ntarget: local\n\nlibraries: [gws]\nsymbols: [btcusdt]\n\ndration: 2m\n"},
	{"unknown key far", "name: x\ncolour: blue\n"},
	{"unknown key dash", "handshake-timeout: 1s\n"},
	{"unknown key nested", "keepalive:\n  intreval: 1s\n"},
	{"unknown key group", "groups:\n  - name: a\n    stream: [btcusdt@trade]\n"},
	{"unknown rate", "replay:\n  rates:\n    trades: 4\n"},
	{"duplicate key", "name: x\nwarmup: 1s\nwarmup: 2s\n"},
	{"unknown library", "name: x\nlibraries:\n  - gorilla\n  - gorila\n"},
	{"duplicate library", "libraries: [gws, coder, gws]\n"},
	{"no libraries", "libraries: []\n"},
	{"libraries scalar", "libraries: gorilla\n"},
	{"bad duration", "name: x\ntarget: local\nduration: 2 minutes\n"},
	{"unitless duration", "warmup: 30\n"},
	{"negative duration", "reconnect:\n  min: -1s\n"},
	{"zero duration", "duration: 0s\n"},
	{"sub-second duration", "duration: 999ms\n"},
	{"endless duration", "duration: 1000000h\n"},
	{"missing value", "duration:\n"},
	{"mapping for duration", "duration: {a: 1}\n"},
	{"bad size", "read_limit: 16 megabytes\n"},
	{"negative size", "rcvbuf: -4KiB\n"},
	{"negative report interval", "report:\n  every: -5m\n"},
	{"huge size", "read_limit: 9999999999GiB\n"},
	{"negative size with a line break", "rcvbuf: \"-1\\nKiB\"\n"},
	{"rcvbuf over int32", "rcvbuf: 4GiB\n"},
	{"uppercase symbol", "symbols: [btcusdt, ETHUSDT]\n"},
	{"bad symbol", "symbols: [btc-usdt]\n"},
	{"duplicate symbol", "symbols: [btcusdt, btcusdt]\n"},
	{"bad target", "target: https://stream.binance.com\n"},
	{"target with query", "target: wss://stream.binance.com:9443/stream?streams=a\n"},
	{"target word", "target: binance\n"},
	{"proxy folded", "proxy: \"socks5://u:pass\\\n  word@127.0.0.1:1080\"\n"},
	{"proxy escaped", "proxy: \"socks5://u:p\\x61ss@127.0.0.1:1080\"\n"},
	{"target without host", "target: ws://:9443\n"},
	{"target port zero", "target: ws://example.com:0\n"},
	{"target port too big", "target: ws://example.com:99999\n"},
	{"target empty port", "target: \"ws://example.com:\"\n"},
	{"target with credentials", "target: wss://u:s3cret@example.com\n"},
	{"bad name", "name: my run\n"},
	{"replay with live target", "replay:\n  seed: 2\ntarget: wss://stream.binance.com:9443\n"},
	{"keepalive timeout short", "keepalive:\n  interval: 30s\n  timeout: 10s\n"},
	{"reconnect inverted", "reconnect:\n  min: 1m\n  max: 10s\n"},
	{"per_connection over", "groups:\n  - name: a\n    streams: ['{symbol}@trade']\n    per_connection: 2000\n"},
	{"per_connection zero", "groups:\n  - name: a\n    streams: ['{symbol}@trade']\n    per_connection: 0\n"},
	{"per_connection text", "groups:\n  - name: a\n    streams: ['{symbol}@trade']\n    per_connection: many\n"},
	{"bad encoding", "name: x\nencoding: protobuf\n"},
	{"encoding with live target", "target: wss://stream.binance.com:9443\nencoding: msgpack\n"},
	{"bad subscribe", "groups:\n  - name: a\n    streams: ['{symbol}@trade']\n    subscribe: ws\n"},
	{"invalid stream", "groups:\n  - name: a\n    streams:\n      - '{symbol}@trade'\n      - '{symbol}@tr ade'\n"},
	{"invalid literal stream", "groups:\n  - name: a\n    streams: ['@trade']\n"},
	{"top without quote", "symbols: {top: 5}\n"},
	{"top zero", "symbols: {top: 0, quote: USDT}\n"},
	{"top lowercase quote", "symbols: {top: 5, quote: usdt}\n"},
	{"top unknown key", "symbols: {top: 5, quote: USDT, by: volume}\n"},
	{"group top text", "groups:\n  - name: a\n    streams: ['{symbol}@trade']\n    symbols: {top: many, quote: USDT}\n"},
	{"bad rest", "symbols: {top: 5, quote: USDT}\nrest: ftp://api.binance.com\n"},
	{"rest unused", "rest: http://127.0.0.1:1\n"},
	{"unknown placeholder", "groups:\n  - name: a\n    streams: ['{sym}@trade']\n"},
	{"group without name", "groups:\n  - streams: [btcusdt@trade]\n"},
	{"group without streams", "groups:\n  - name: a\n"},
	{"group empty streams", "groups:\n  - name: a\n    streams: []\n"},
	{"duplicate group", "groups:\n  - name: a\n    streams: [btcusdt@trade]\n  - name: a\n    streams: [ethusdt@trade]\n"},
	{"no groups", "groups: []\n"},
	{"group not mapping", "groups:\n  - btcusdt@trade\n"},
	{"group bad symbols", "groups:\n  - name: a\n    streams: ['{symbol}@trade']\n    symbols: [BTC]\n"},
	{"first of several", "groups:\n  - name: a\n    streams: ['{symbol}@bad']\nreconnect: {min: 2s, max: 1s}\n"},
	{"replay speed zero", "replay: {speed: 0}\n"},
	{"replay speed nan", "replay: {speed: .nan}\n"},
	{"replay speed too high", "replay: {speed: 1e9}\n"},
	{"replay negative rate", "replay:\n  rates: {trade: -1}\n"},
	{"replay queue negative", "replay: {queue_size: -5}\n"},
	{"replay queue zero", "replay: {queue_size: 0}\n"},
	{"replay ping interval zero", "replay: {ping_interval: 0s}\n"},
	{"replay lifetime zero", "replay: {lifetime: 0s}\n"},
	{"worker gogc below off", "worker_runtime: {gogc: -2}\n"},
	{"worker gomaxprocs negative", "worker_runtime: {gomaxprocs: -1}\n"},
	{"worker gomemlimit word", "worker_runtime: {gomemlimit: lots}\n"},
	{"syntax at end", "name: x\nsymbols: [a,\n"},
	{"unknown anchor", "name: *a\n"},
	{"replay seed float", "replay: {seed: 1.5}\n"},
	{"key is a list", "[a]: 1\n"},
	{"proxy scheme", "name: x\nproxy: ftp://user:s3cret@host:21\n"},
	{"proxy malformed", "proxy: 'http://user:s3 cret@host:8080'\n"},
	{"proxy socks4 password", "proxy: socks4://user:s3cret@host\n"},
	{"proxy bad port", "proxy: socks5://user:s3cret@host:0\n"},
	{"proxy list", "proxy: [a, b]\n"},
	{"tls ca missing", "tls:\n  ca: missing.pem\n"},
	{"tls ca not pem", "tls:\n  ca: ../testdata/errors.golden\n"},
	{"tls unknown key", "tls:\n  insecure: true\n"},
	{"replay tls not bool", "replay:\n  tls: yes please\n"},
	{"give up zero", "reconnect: {give_up_after: 0}\n"},
	{"give up words", "reconnect:\n  give_up_after: never\n"},
	{"give up negative duration", "reconnect: {give_up_after: -5m}\n"},
	{"silence factor zero", "silence:\n  factor: 0\n"},
	{"silence unknown key", "silence: {minimum: 3s}\n"},
	{"unknown threshold", "name: x\nthresholds:\n  max_los: 0\n"},
	{"threshold unitless duration", "thresholds:\n  max_reconnect_p99: 10\n"},
	{"threshold negative count", "thresholds:\n  max_lost: -1\n"},
	{"threshold fractional count", "thresholds:\n  max_lost: 0.5\n"},
	{"threshold bad size", "thresholds:\n  max_rss_growth: 50 megs\n"},
	{"threshold negative percent", "thresholds:\n  max_cpu_avg: -3\n"},
	{"thresholds a list", "thresholds: [max_lost]\n"},
	{"threshold duplicate", "thresholds:\n  max_lost: 0\n  max_lost: 1\n"},
	{"faults not a list", "faults: {at: 1s}\n"},
	{"fault unknown kind", "faults:\n  - at: 10s\n    kind: clsoe\n    code: 1000\n"},
	{"fault unknown kind far", "faults:\n  - at: 10s\n    kind: explode\n"},
	{"fault no kind", "faults:\n  - at: 10s\n"},
	{"fault no instant", "faults:\n  - kind: reset\n"},
	{"fault unknown key", "faults:\n  - at: 10s\n    kind: reject\n    n: 1\n    status: 429\n    retry-after: 2s\n"},
	{"fault bad code", "faults:\n  - at: 10s\n    kind: close\n    code: 1002\n"},
	{"fault code missing", "faults:\n  - every: 10s\n    kind: close\n"},
	{"fault parameter not taken", "faults:\n  - at: 10s\n    kind: reset\n    n: 2\n"},
	{"fault drop without ids", "faults:\n  - at: 10s\n    kind: drop\n    n: 3\n    streams: [btcusdt@bookTicker]\n"},
	{"fault duplicate depth", "faults:\n  - at: 10s\n    kind: duplicate\n    n: 3\n    streams: ['{symbol}@depth@100ms']\n"},
	{"fault stream not subscribed", "faults:\n  - at: 10s\n    kind: drop\n    n: 3\n    streams: [dogeusdt@trade]\n"},
	{"fault bad template", "faults:\n  - at: 10s\n    kind: silence\n    for: 1s\n    streams: ['{sym}@trade']\n"},
	{"fault at outside", "duration: 2m\nfaults:\n  - at: 2m\n    kind: reset\n"},
	{"fault for over every", "faults:\n  - every: 10s\n    kind: zombie\n    for: 10s\n"},
	{"faults fire too often", "duration: 24h\nfaults:\n  - at: 1s\n    kind: reset\n  - every: 500ms\n    kind: reset\n"},
	{"fault live target", "target: wss://stream.binance.com:9443\nfaults:\n  - at: 10s\n    kind: reset\n"},
	{"fault reject streams", "faults:\n  - at: 10s\n    kind: reject\n    n: 1\n    status: 503\n    streams: [btcusdt@trade]\n"},
	{"fault status", "faults:\n  - at: 10s\n    kind: reject\n    n: 1\n    status: 302\n"},
	{"fault template with top", "symbols: {top: 5, quote: USDT}\nfaults:\n  - at: 10s\n    kind: drop\n    n: 1\n    streams: ['{symbol}@trade']\n"},
	{"fault oversize small", "faults:\n  - at: 10s\n    kind: oversize\n    size: 10B\n"},
	{"compression unknown", "name: x\ncompression: gzip\n"},
	{"compression a list", "compression: [on]\n"},
	{"deflate window too small", "replay:\n  deflate_window_bits: 8\n"},
	{"deflate level too high", "replay:\n  deflate_level: 10\n"},
	{"tab after a value", "name: x\nkeepalive:\n  interval: 1s\n\ttimeout: 2s\n"},
	{"tab in a list", "name: x\nsymbols:\n  - btcusdt\n\t- ethusdt\n"},
	{"tab on the first line", "\tname: x\n"},
	{"tab with crlf", "name: x\r\nkeepalive:\r\n  interval: 1s\r\n\ttimeout: 2s\r\n"},
	{"alias of a bad value", "name: &a x\nwarmup: 1s\nduration: *a\n"},
	{"alias of a mapping", "keepalive: &k\n  interval: 1s\n  timeout: 2s\n\n\nreconnect: *k\n"},
	{"alias in a list", "name: &n BTCUSDT\nwarmup: 1s\nsymbols: [btcusdt, *n]\n"},
	{"alias of a list", "name: x\nsymbols: &s [btcusdt, ethusdt]\ngroups:\n  - name: a\n    streams: [btcusdt@trade]\n\n\nlibraries: *s\n"},
	{"unknown anchor in a list", "name: x\nsymbols: [btcusdt, *nope]\n"},
	{"non-ascii stream", "groups:\n  - name: a\n    streams: ['{symbol}@tr\u00e9de']\n"},
	{"duration out of range", "duration: 3000000h\n"},
	{"negative duration out of range", "warmup: -3000000h\n"},
	{"give up duration out of range", "reconnect: {give_up_after: 3000000h}\n"},
	{"threshold duration out of range", "thresholds:\n  max_silence: 9999999999999h\n"},
	{"huge integer", "replay: {seed: 99999999999999999999999}\n"},
	{"huge negative integer", "replay: {queue_size: -99999999999999999999999}\n"},
	{"huge give up count", "reconnect: {give_up_after: 99999999999999999999999}\n"},
	{"huge per_connection", "groups:\n  - name: a\n    streams: ['{symbol}@trade']\n    per_connection: 99999999999999999999\n"},
	{"huge size in bytes", "read_limit: 99999999999999999999\n"},
	{"huge float", "replay: {speed: 1e400}\n"},
	{"infinite float", "replay: {speed: .inf}\n"},
	{"byte order mark", "\ufeffname: x\ndration: 1m\n"},
	{"crlf duplicate key", "name: x\r\nwarmup: 1s\r\nwarmup: 2s\r\n"},
	{"second document after blank lines", "name: x\n\n\n---\nname: y\n"},
	{"empty second document", "---\nname: x\n---\n"},
	{"whitespace only", "  \n\n"},
	{"side unknown", "name: x\nside: both\n"},
	{"side server live target", "side: server\ntarget: wss://stream.binance.com:9443\n"},
	{"chat without side server", "name: x\nchat: {n: 8}\n"},
	{"chat n zero", "side: server\nchat:\n  n: 0\n"},
	{"server fault kind", "side: server\nfaults:\n  - kind: zombie\n    at: 1s\n"},
	{"server fault n past room", "side: server\nchat: {n: 4}\nfaults:\n  - kind: reset\n    at: 1s\n    n: 4\n"},
	{"server fault streams", "side: server\nfaults:\n  - kind: slow_reader\n    at: 1s\n    streams: [btcusdt@trade]\n"},
	{"server fault half_open for", "side: server\nfaults:\n  - kind: half_open\n    at: 1s\n    for: 5s\n"},
	{"server fault half_open n past room", "side: server\nchat: {n: 3}\nfaults:\n  - kind: half_open\n    at: 1s\n    n: 3\n"},
	{"server fault oversize small", "side: server\nfaults:\n  - kind: oversize\n    at: 1s\n    size: 1KiB\n"},
	{"slow reader client side", "name: x\nfaults:\n  - kind: slow_reader\n    at: 1s\n"},
	{"variants not a list", "variants: {name: gorilla-a, lib: gorilla}\n"},
	{"variant unknown key", "variants:\n  - name: gorilla-a\n    lib: gorilla\n    read_bufer_size: 4KiB\n"},
	{"variant not a mapping", "variants:\n  - gorilla-a\n"},
	{"variant no name", "variants:\n  - lib: gorilla\n"},
	{"variant no lib", "name: x\nvariants:\n  - name: gorilla-a\n"},
	{"variant unknown lib", "variants:\n  - name: g\n    lib: gorila\n"},
	{"variant unknown lib far", "variants:\n  - name: g\n    lib: nhooyr\n"},
	{"variant named as a library", "variants:\n  - name: gws\n    lib: gorilla\n"},
	{"variant bad name", "variants:\n  - name: Gorilla_GC\n    lib: gorilla\n"},
	{"variant name with a slash", "variants:\n  - name: gorilla/2\n    lib: gorilla\n"},
	{"variant name too long", "variants:\n  - name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n    lib: gorilla\n"},
	{"variant twice", "variants:\n  - name: g1\n    lib: gorilla\n  - name: g2\n    lib: gws\n  - name: g1\n    lib: gws\n"},
	{"variant coder read buffer", "variants:\n  - name: coder-rb\n    lib: coder\n    read_buffer_size: 4KiB\n"},
	{"variant read buffer small", "variants:\n  - name: g\n    lib: gobwas\n    read_buffer_size: 16B\n"},
	{"variant read buffer huge", "variants:\n  - name: g\n    lib: gws\n    read_buffer_size: 1GiB\n"},
	{"variant read buffer zero", "variants:\n  - name: g\n    lib: gws\n    read_buffer_size: 0\n"},
	{"variant cost too high", "variants:\n  - name: g\n    lib: gorilla\n    calibration_cost: 2ms\n"},
	{"variant cost unitless", "variants:\n  - name: g\n    lib: gorilla\n    calibration_cost: 5\n"},
	{"variant cost negative", "variants:\n  - name: g\n    lib: gorilla\n    calibration_cost: -5us\n"},
	{"variant gogc below off", "variants:\n  - name: g\n    lib: gorilla\n    worker_runtime: {gogc: -2}\n"},
	{"variant runtime unknown key", "variants:\n  - name: g\n    lib: gorilla\n    worker_runtime: {gc: 25}\n"},
	{"variant bad compression", "variants:\n  - name: g\n    lib: gorilla\n    compression: zstd\n"},
	{"variant bad encoding", "variants:\n  - name: g\n    lib: gorilla\n    encoding: protobuf\n"},
	{"variant encoding live target", "target: wss://stream.binance.com:9443\nvariants:\n  - name: g\n    lib: gorilla\n    encoding: msgpack\n"},
	{"variants side server", "side: server\nvariants:\n  - name: g\n    lib: gorilla\n"},
	{"too many variants", "variants:\n  - {name: v0, lib: gws}\n  - {name: v1, lib: gws}\n  - {name: v2, lib: gws}\n  - {name: v3, lib: gws}\n  - {name: v4, lib: gws}\n  - {name: v5, lib: gws}\n  - {name: v6, lib: gws}\n  - {name: v7, lib: gws}\n  - {name: v8, lib: gws}\n  - {name: v9, lib: gws}\n  - {name: v10, lib: gws}\n  - {name: v11, lib: gws}\n  - {name: v12, lib: gws}\n  - {name: v13, lib: gws}\n  - {name: v14, lib: gws}\n  - {name: v15, lib: gws}\n  - {name: v16, lib: gws}\n  - {name: v17, lib: gws}\n  - {name: v18, lib: gws}\n  - {name: v19, lib: gws}\n  - {name: v20, lib: gws}\n  - {name: v21, lib: gws}\n  - {name: v22, lib: gws}\n  - {name: v23, lib: gws}\n  - {name: v24, lib: gws}\n  - {name: v25, lib: gws}\n  - {name: v26, lib: gws}\n  - {name: v27, lib: gws}\n  - {name: v28, lib: gws}\n  - {name: v29, lib: gws}\n  - {name: v30, lib: gws}\n  - {name: v31, lib: gws}\n  - {name: v32, lib: gws}\n"},
	{"no columns", "libraries: []\nvariants: []\n"},
}

func TestParseErrors(t *testing.T) {
	goldenErrors(t, "testdata/errors.golden", badProfiles, func(path string, data []byte) (any, error) { return Parse(path, data) })
}

// goldenErrors parses every case with parse: each must fail with one
// "profiles/x.yaml:<line>: ..." *Error line that shows no proxy password
// and no Go decoding message; the lines are compared with the golden file.
func goldenErrors(t *testing.T, file string, cases []struct{ name, yaml string }, parse func(string, []byte) (any, error)) {
	t.Helper()
	const path = "profiles/x.yaml"
	line := regexp.MustCompile(`^profiles/x\.yaml:[1-9][0-9]*: [^\n]+$`)
	var b strings.Builder
	for _, tt := range cases {
		p, err := parse(path, []byte(tt.yaml))
		if err == nil {
			t.Errorf("%s: parsed, want an error: %+v", tt.name, p)
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || !line.MatchString(err.Error()) || strings.Contains(err.Error(), "unmarshal") || strings.Contains(err.Error(), "main.") {
			t.Errorf("%s: error %q is not one <path>:<line>: line", tt.name, err)
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "s3 cret") {
			t.Errorf("%s: error %q shows the proxy password", tt.name, err)
		}
		fmt.Fprintf(&b, "%s\n\t%s\n", tt.name, err)
	}
	golden(t, file, b.String())
}

// The lines the rest of the tool documents, independent of the golden file.
func TestParseErrorsExact(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"name: x\ntarget: local\n\nlibraries: [gws]\nsymbols: [btcusdt]\n\ndration: 2m\n",
			`profiles/x.yaml:7: unknown key "dration" in profile; did you mean "duration"?`},
		{"name: x\nlibraries:\n  - gorilla\n  - gorila\n",
			`profiles/x.yaml:4: unknown library "gorila" (known: gorilla, gobwas, coder, gws, fasthttp, nbio); did you mean "gorilla"?`},
		{"name: x\ntarget: local\nduration: 2 minutes\n",
			`profiles/x.yaml:3: bad duration "2 minutes": want a number with a unit such as 90s, 2m, 24h`},
		{"name: x\nduration: 2m\nsymbols: [btcusdt\n",
			`profiles/x.yaml:3: did not find expected ',' or ']'`},
	}
	for _, tt := range tests {
		_, err := Parse("profiles/x.yaml", []byte(tt.yaml))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %s\nwant %s\n(run with -update if intended)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d (run with -update if intended)", path, len(gl), len(wl))
	}
}

func names(ss []binance.Stream) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name    string
		p       *Profile
		want    map[string][]string
		kinds   map[string]binance.Kind // first stream's kind per group
		wantErr string
	}{
		{
			name: "default",
			p:    Default(),
			want: map[string][]string{
				"arr": {"!miniTicker@arr"},
				"markets": {
					"btcusdt@aggTrade", "ethusdt@aggTrade", "bnbusdt@aggTrade", "solusdt@aggTrade", "xrpusdt@aggTrade",
					"btcusdt@trade", "ethusdt@trade", "bnbusdt@trade", "solusdt@trade", "xrpusdt@trade",
					"btcusdt@kline_1m", "ethusdt@kline_1m", "bnbusdt@kline_1m", "solusdt@kline_1m", "xrpusdt@kline_1m",
					"btcusdt@bookTicker", "ethusdt@bookTicker", "bnbusdt@bookTicker", "solusdt@bookTicker", "xrpusdt@bookTicker",
					"btcusdt@depth20@100ms", "ethusdt@depth20@100ms", "bnbusdt@depth20@100ms", "solusdt@depth20@100ms", "xrpusdt@depth20@100ms",
				},
				"depth": {"btcusdt@depth@100ms", "ethusdt@depth@100ms", "bnbusdt@depth@100ms", "solusdt@depth@100ms", "xrpusdt@depth@100ms"},
			},
			kinds: map[string]binance.Kind{"arr": binance.KindMiniTickerArr, "markets": binance.KindAggTrade, "depth": binance.KindDepthDiff},
		},
		{
			name: "dedup and override",
			p: &Profile{Symbols: []string{"btcusdt", "ethusdt"}, Groups: []Group{
				{Name: "g", Streams: []string{"{symbol}@trade", "btcusdt@trade", "{symbol}@trade", "{symbol}@ticker"}, Symbols: []string{"ethusdt", "btcusdt"}},
				{Name: "h", Streams: []string{"{symbol}@avgPrice"}},
			}},
			want: map[string][]string{
				"g": {"ethusdt@trade", "btcusdt@trade", "ethusdt@ticker", "btcusdt@ticker"},
				"h": {"btcusdt@avgPrice", "ethusdt@avgPrice"},
			},
			kinds: map[string]binance.Kind{"g": binance.KindTrade, "h": binance.KindAvgPrice},
		},
		{
			name:    "invalid",
			p:       &Profile{Symbols: []string{"btcusdt"}, Groups: []Group{{Name: "g", Streams: []string{"{symbol}@trade", "{symbol}@x y"}}}},
			wantErr: `expand group "g": invalid stream "btcusdt@x y" (from "{symbol}@x y"): character ' ' at 9`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.Expand()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.p.Groups) {
				t.Fatalf("%d groups, want %d", len(got), len(tt.p.Groups))
			}
			for i, g := range got {
				if g.Name != tt.p.Groups[i].Name || g.Subscribe != tt.p.Groups[i].Subscribe || g.PerConnection != tt.p.Groups[i].PerConnection {
					t.Errorf("group %d = %+v: settings not carried over", i, g)
				}
				if !reflect.DeepEqual(names(g.Streams), tt.want[g.Name]) {
					t.Errorf("group %s:\n got %v\nwant %v", g.Name, names(g.Streams), tt.want[g.Name])
				}
				if k := g.Streams[0].Kind; k != tt.kinds[g.Name] {
					t.Errorf("group %s: first kind %v, want %v", g.Name, k, tt.kinds[g.Name])
				}
			}
		})
	}
}

func TestUnits(t *testing.T) {
	durations := []struct {
		in   string
		want Duration
		ok   bool
	}{
		{"2m", Duration(2 * time.Minute), true},
		{"500ms", Duration(500 * time.Millisecond), true},
		{"1h30m", Duration(90 * time.Minute), true},
		{"0", 0, true},
		{"-1s", Duration(-time.Second), true},
		{"30", 0, false},
		{"1.5", 0, false},
		{"2 minutes", 0, false},
		{"1d", 0, false},
		{"", 0, false},
	}
	for _, tt := range durations {
		got, err := parseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	sizes := []struct {
		in   string
		want ByteSize
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"16MiB", 16 << 20, true},
		{"512KB", 512000, true},
		{"512 KiB", 512 << 10, true},
		{"2GB", 2e9, true},
		{"7B", 7, true},
		{"0", 0, true},
		{"-1KiB", -1024, true},
		{"+5", 0, false},
		{"1.5MiB", 0, false},
		{"16mib", 0, false},
		{"MiB", 0, false},
		{"16 megabytes", 0, false},
		{"9223372036854775807KiB", 0, false},
	}
	for _, tt := range sizes {
		got, err := parseByteSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseByteSize(%q) = %v, %v; want %v, ok %v", tt.in, int64(got), err, int64(tt.want), tt.ok)
		}
	}
	// String gives back what the parser reads.
	for _, b := range []ByteSize{0, 1, 1000, 1024, 16 << 20, 512000, 3 << 30, 1<<20 + 1} {
		if got, err := parseByteSize(b.String()); err != nil || got != b {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", b.String(), got, err, b)
		}
	}
	for _, d := range []Duration{0, Duration(time.Second), Duration(90 * time.Minute), Duration(500 * time.Millisecond)} {
		if got, err := parseDuration(d.String()); err != nil || got != d {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", d.String(), got, err, d)
		}
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"duration", "warmup", "handshake_timeout", "rcvbuf", "name"}
	tests := []struct{ in, want string }{
		{"dration", "duration"},
		{"Duration", "duration"},
		{"handshake-timeout", "handshake_timeout"},
		{"rcvbuff", "rcvbuf"},
		{"nme", "name"},
		{"colour", ""},
		{"x", ""},
	}
	for _, tt := range tests {
		want := ""
		if tt.want != "" {
			want = fmt.Sprintf("; did you mean %q?", tt.want)
		}
		if got := suggest(tt.in, keys); got != want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"local.yaml", "faults.yaml", "server-soak.yaml", "calibration.yaml"} {
		if data, err := os.ReadFile("../../profiles/" + name); err == nil {
			f.Add(data)
		}
	}
	for _, b := range badProfiles {
		f.Add([]byte(b.yaml))
	}
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("groups: &g\n  - name: a\n    streams: *g\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one *Error line", err)
			}
			return
		}
		// A profile that parses must expand, once its symbols: {top: N} are
		// resolved (soak run asks the target's REST API; here: N symbols).
		if p.NeedsResolve() {
			if _, err := p.ResolveSymbols(func(t Top) ([]string, error) {
				out := make([]string, min(t.N, 50))
				for i := range out {
					out[i] = fmt.Sprintf("sym%d%s", i, strings.ToLower(t.Quote))
				}
				return out, nil
			}); err != nil {
				t.Fatalf("parsed but its symbols do not resolve: %v", err)
			}
		}
		if _, err := p.Expand(); err != nil {
			t.Fatalf("parsed but Expand fails: %v", err)
		}
		// Its columns are ones a worker runs, each name once.
		names := map[string]bool{}
		for _, c := range p.Columns() {
			if err := c.Check(); err != nil || names[c.Name] {
				t.Fatalf("parsed but column %+v is not one a worker runs (%v) or is named twice", c, err)
			}
			names[c.Name] = true
		}
		if len(names) == 0 {
			t.Fatal("parsed with no column")
		}
		// and its faults must be accepted by the replay server
		for _, sf := range p.ScheduledFaults() {
			if err := sf.Validate(); err != nil {
				t.Fatalf("parsed but the replay server rejects fault %v: %v", sf.Fault, err)
			}
		}
	})
}
