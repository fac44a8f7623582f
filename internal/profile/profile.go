// Package profile reads the YAML profile of a soak run: which libraries, which
// symbols and stream groups, the keepalive and reconnect policy and, for the
// local target, the replay server's settings. Parse applies the defaults and
// validates; every problem is reported as one line "<path>:<line>: <problem>".
package profile

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// KnownLibraries are the library names a profile may list, in report order.
var KnownLibraries = []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"}

// MaxPerConnection is the Binance limit of streams on one connection.
const MaxPerConnection = 1024

// Subscription modes of a group.
const (
	SubscribeURL     = "url"     // combined /stream?streams=a/b/c
	SubscribeMessage = "message" // bare /stream, then SUBSCRIBE control messages
)

// TargetLocal is the embedded replay server.
const TargetLocal = "local"

// Profile is one soak run's settings.
type Profile struct {
	Path string `yaml:"-"` // source file
	Text string `yaml:"-"` // source text, stored with the run

	Name             string    `yaml:"name"`
	Target           string    `yaml:"target"`            // "local" or a ws:// / wss:// base URL
	Duration         Duration  `yaml:"duration"`          // measured window
	Warmup           Duration  `yaml:"warmup"`            // connect/subscribe time before the window
	Libraries        []string  `yaml:"libraries"`         // subset of KnownLibraries
	Symbols          []string  `yaml:"symbols"`           // lowercase
	Groups           []Group   `yaml:"groups"`            // connection groups
	Keepalive        Keepalive `yaml:"keepalive"`         // client pings
	Reconnect        Reconnect `yaml:"reconnect"`         // backoff bounds
	HandshakeTimeout Duration  `yaml:"handshake_timeout"` // per dial
	ReadLimit        ByteSize  `yaml:"read_limit"`        // max message size
	RcvBuf           ByteSize  `yaml:"rcvbuf"`            // SO_RCVBUF; 0 = kernel default (autotuning)
	Replay           Replay    `yaml:"replay"`            // only for target local
	Report           Report    `yaml:"report"`            // the HTML report written during and after the run
}

// Report configures report.html in the run directory.
type Report struct {
	Every Duration `yaml:"every"` // rewrite it this often during the run; 0 = only at the end
}

// Group is a set of subscriptions spread over one or more connections.
type Group struct {
	Name          string   `yaml:"name"`
	Streams       []string `yaml:"streams"`        // templates: "{symbol}@trade" expands per symbol; others are taken as is
	PerConnection int      `yaml:"per_connection"` // max streams per connection, 1..1024
	Subscribe     string   `yaml:"subscribe"`      // SubscribeURL or SubscribeMessage
	Symbols       []string `yaml:"symbols"`        // overrides the profile symbols when set
	Line          int      `yaml:"-"`              // line of the group in the file; 0 for built-in groups
}

// Keepalive is the client ping policy.
type Keepalive struct {
	Interval Duration `yaml:"interval"` // 0 = no client pings
	Timeout  Duration `yaml:"timeout"`  // no pong (or data) for this long = connection lost
}

// Reconnect bounds the exponential backoff between dials of one slot.
type Reconnect struct {
	Min Duration `yaml:"min"`
	Max Duration `yaml:"max"`
}

// Replay configures the embedded replay server (target local only).
type Replay struct {
	Seed         int64              `yaml:"seed"`
	Speed        float64            `yaml:"speed"`         // 1 = real time
	Rates        map[string]float64 `yaml:"rates"`         // mean events/s per symbol: trade, aggTrade, bookTicker, blockTrade
	PingInterval Duration           `yaml:"ping_interval"` // server pings; 0 = none
	PongTimeout  Duration           `yaml:"pong_timeout"`  // server closes 1008 without a pong
	Lifetime     Duration           `yaml:"lifetime"`      // server closes each connection after it; 0 = never
	QueueSize    int                `yaml:"queue_size"`    // per-connection outbound queue, in messages
	Symbols      []string           `yaml:"symbols"`       // universe for market-wide streams; default = profile symbols
}

// RateKeys are the keys allowed in Replay.Rates.
var RateKeys = []string{"trade", "aggTrade", "bookTicker", "blockTrade"}

// Default returns the built-in profile, identical in effect to profiles/local.yaml.
func Default() *Profile {
	p := &Profile{
		Name:      "local",
		Target:    TargetLocal,
		Duration:  Duration(2 * time.Minute),
		Warmup:    Duration(3 * time.Second),
		Libraries: append([]string(nil), KnownLibraries...),
		Symbols:   []string{"btcusdt", "ethusdt", "bnbusdt", "solusdt", "xrpusdt"},
		Groups: []Group{
			newGroup("arr", "!miniTicker@arr"),
			newGroup("markets", "{symbol}@aggTrade", "{symbol}@trade", "{symbol}@kline_1m",
				"{symbol}@bookTicker", "{symbol}@depth20@100ms"),
			newGroup("depth", "{symbol}@depth@100ms"),
		},
		Keepalive:        Keepalive{Interval: Duration(20 * time.Second), Timeout: Duration(60 * time.Second)},
		Reconnect:        Reconnect{Min: Duration(500 * time.Millisecond), Max: Duration(30 * time.Second)},
		HandshakeTimeout: Duration(10 * time.Second),
		ReadLimit:        16 << 20,
		Replay: Replay{
			Seed:         1,
			Speed:        1,
			Rates:        map[string]float64{"trade": 30, "aggTrade": 20, "bookTicker": 100, "blockTrade": 0.05},
			PingInterval: Duration(20 * time.Second),
			PongTimeout:  Duration(60 * time.Second),
			Lifetime:     Duration(24 * time.Hour),
			QueueSize:    8192,
		},
		Report: Report{Every: Duration(5 * time.Minute)},
	}
	p.Replay.Symbols = append([]string(nil), p.Symbols...)
	return p
}

// newGroup is a group with the default connection settings.
func newGroup(name string, streams ...string) Group {
	return Group{Name: name, Streams: streams, PerConnection: MaxPerConnection, Subscribe: SubscribeURL}
}

// Load reads and parses a profile file.
func Load(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("open profile: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes a profile, applies the defaults and validates it. The error,
// if any, is a *Error: one line naming the file and line of the first problem.
func Parse(path string, data []byte) (*Profile, error) {
	d := decoder{path: path}
	p, err := d.parse(data)
	if err != nil {
		return nil, err
	}
	p.Path, p.Text = path, string(data)
	return p, nil
}

// Error is one problem in a profile file.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

// SetLibraries replaces the profile's libraries (from a command-line flag),
// with the same checks as the profile file gets.
func (p *Profile) SetLibraries(libs []string) error {
	var out []string
	for _, l := range libs {
		l = strings.TrimSpace(l)
		if !slices.Contains(KnownLibraries, l) {
			return fmt.Errorf("unknown library %q (known: %s)", l, strings.Join(KnownLibraries, ", "))
		}
		if slices.Contains(out, l) {
			return fmt.Errorf("library %q listed twice", l)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return fmt.Errorf("no library given")
	}
	p.Libraries = out
	return nil
}
