// Package profile reads the tool's YAML profiles: a soak run's (which
// libraries, which symbols and stream groups, the keepalive and reconnect
// policy and, for the local target, the replay server's settings) and a soak
// bench's (bench.go). Each declares its keys once, in struct tags; Parse and
// ParseBench apply the defaults and validate, and every problem is reported
// as one line "<path>:<line>: <problem>" (a command-line flag standing for a
// key: "flag -NAME: <problem>").
package profile

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/limit"
	"github.com/wssoak/wssoak/internal/wire"
)

// MaxPerConnection is the Binance limit of streams on one connection.
const MaxPerConnection = 1024

// MaxFaultFirings bounds how often a profile's faults fire in one run, all
// repetitions counted: a fault every second for 24 hours is 86,400.
const MaxFaultFirings = 100_000

// MaxSpeed bounds replay.speed (and soak serve -speed): the default rates at
// 1000 times real time are already far beyond what one loopback server writes.
const MaxSpeed = 1000

// Bounds of what one profile subscribes to, far above any real use (Binance
// lists a few thousand markets, takes 1024 streams per connection and 300
// new connections per 5 minutes from one IP address): a runaway list fails
// at once with its line instead of stalling the run.
const (
	MaxSymbols     = 100_000 // items of a symbols list (the profile's, a group's, replay's)
	MaxStreams     = 100_000 // streams one library subscribes to, summed over the groups
	MaxConnections = 10_000  // connections one library opens: each group's streams ÷ its per_connection, summed
)

// Subscription modes of a group.
const (
	SubscribeURL     = "url"     // combined /stream?streams=a/b/c
	SubscribeMessage = "message" // bare /stream, then SUBSCRIBE control messages
)

// TargetLocal is the embedded replay server.
const TargetLocal = "local"

// Profile is one soak run's settings. Its fields' tags declare the keys of
// the file and how each is read (fields.go): adding a key is adding a field.
type Profile struct {
	Path string `yaml:"-"` // source file
	Text string `yaml:"-"` // source text, stored with the run

	Name             string           `yaml:"name" soak:"kind=name"`
	Target           string           `yaml:"target" soak:"kind=target"`              // "local" or a ws:// / wss:// base URL
	Duration         Duration         `yaml:"duration" soak:"kind=window"`            // measured window
	Warmup           Duration         `yaml:"warmup"`                                 // connect/subscribe time before the window
	Libraries        []string         `yaml:"libraries" soak:"kind=column_libraries"` // subset of wire.Libraries; may be empty when variants are given
	Variants         []Variant        `yaml:"variants" soak:"kind=variants"`          // libraries under settings of their own, columns of their own (variants.go)
	Symbols          []string         `yaml:"symbols" soak:"kind=symbols_or_top"`     // lowercase; filled by ResolveSymbols when Top is set
	Top              *Top             `yaml:"-"`                                      // symbols: {top: N, quote: Q}, resolved once at the start
	REST             string           `yaml:"rest" soak:"kind=rest"`                  // REST base for Top; "" = DefaultREST (live) or the replay server (local)
	Groups           []Group          `yaml:"groups" soak:"kind=groups"`              // connection groups
	Keepalive        Keepalive        `yaml:"keepalive"`                              // client pings
	Reconnect        Reconnect        `yaml:"reconnect"`                              // backoff bounds, unrepairable rule
	Silence          Silence          `yaml:"silence"`                                // per-subscription silence watchdog
	HandshakeTimeout Duration         `yaml:"handshake_timeout" soak:"positive"`      // per dial
	ReadLimit        ByteSize         `yaml:"read_limit" soak:"positive"`             // max message size
	RcvBuf           ByteSize         `yaml:"rcvbuf"`                                 // SO_RCVBUF; 0 = kernel default (autotuning)
	Encoding         string           `yaml:"encoding" soak:"kind=encoding"`          // events' encoding: json (default), msgpack, packed (target local only)
	Thresholds       []Threshold      `yaml:"thresholds" soak:"kind=thresholds"`      // pass/fail limits per library, in ThresholdKeys order
	Faults           []Fault          `yaml:"faults" soak:"kind=faults"`              // injected by the replay server (target local only)
	Replay           wire.Replay      `yaml:"replay"`                                 // only for target local; read it with ReplayConfig
	Proxy            string           `yaml:"proxy" soak:"kind=proxy"`                // forward proxy for every connection (socks5, socks4, http, https URL); "" = direct
	TLS              TLS              `yaml:"tls"`                                    // trust for wss targets and https proxies
	Report           Report           `yaml:"report"`                                 // the HTML report written during and after the run
	WorkerRuntime    Runtime          `yaml:"worker_runtime"`                         // the Go runtime of every worker alike
	Compression      wire.Compression `yaml:"compression" soak:"kind=compression"`    // permessage-deflate: off, on, no_context_takeover
	Side             string           `yaml:"side" soak:"kind=side"`                  // "client" (default): the libraries as clients; "server": as chat servers (side.go)
	Chat             ChatLoad         `yaml:"chat"`                                   // the chat load of a side: server run
	Labels           Labels           `yaml:"labels" soak:"kind=labels"`              // the user's names for the run (region: fra): soak_run_info and the report over several runs

	// Warnings are problems that do not stop the run, as "<path>:<line>: <text>":
	// e.g. a stream Binance retired, which will be reported as stalled.
	Warnings []string `yaml:"-"`

	// Link puts the replay server in a network namespace of its own, behind
	// a link that shapes, loses and faults packets (link.go; target local,
	// side client, root). Link.On says the profile has link:.
	Link wire.Link `yaml:"link"`
}

// Runtime is the Go runtime every worker sets at its start, the same for
// every library so that none is measured with more CPUs or a laxer collector
// than another. 0 keeps Go's default for that setting.
type Runtime struct {
	GOMAXPROCS int      `yaml:"gomaxprocs" soak:"min=0,max=4096"` // OS threads running Go code at once; 0 = the CPUs the process may use
	GOGC       int      `yaml:"gogc" soak:"min=-1,max=1000000"`   // collector target %; -1 = off; 0 = Go's default (100, or $GOGC)
	GOMEMLIMIT ByteSize `yaml:"gomemlimit"`                       // soft memory limit; 0 = none
}

// Wire is the runtime as the plan carries it.
func (r Runtime) Wire() wire.Runtime {
	return wire.Runtime{GOMAXPROCS: r.GOMAXPROCS, GOGC: r.GOGC, GOMEMLIMIT: int64(r.GOMEMLIMIT)}
}

// Report configures report.html in the run directory.
type Report struct {
	Every Duration `yaml:"every"` // rewrite it this often during the run; 0 = only at the end
}

// TLS adds trust to the system roots; certificates are always verified.
type TLS struct {
	CA         string `yaml:"ca" soak:"kind=ca"` // PEM file of extra CA certificates; a relative path is relative to the profile's directory
	ServerName string `yaml:"server_name"`       // replaces the target's host name for SNI and verification
}

// Top asks for the N most traded markets quoted in Quote, by 24 h quote
// volume from REST GET /api/v3/ticker/24hr, stablecoin and fiat pairs
// excluded (binance.StableAssets).
type Top struct {
	N     int    `yaml:"top" soak:"min=1,max=1024"`
	Quote string `yaml:"quote" soak:"kind=quote"` // uppercase, e.g. USDT
	Line  int    `yaml:"-"`
}

func (t Top) String() string { return fmt.Sprintf("top %d %s", t.N, t.Quote) }

// DefaultREST is the REST base used to resolve Top for a live target.
const DefaultREST = "https://api.binance.com"

// placeholderSymbol stands in for symbols not yet resolved when templates are checked.
const placeholderSymbol = "btcusdt"

// ResolveSymbols replaces every Top by the list resolve returns for it, asking
// once per distinct Top, and returns the lists by Top. After it, Symbols and
// every group's Symbols are concrete.
func (p *Profile) ResolveSymbols(resolve func(Top) ([]string, error)) (map[Top][]string, error) {
	got := map[Top][]string{}
	get := func(t *Top) ([]string, error) {
		k := Top{N: t.N, Quote: t.Quote}
		if l, ok := got[k]; ok {
			return l, nil
		}
		l, err := resolve(k)
		if err != nil {
			return nil, fmt.Errorf("resolve symbols (%s, %s:%d): %w", k, p.Path, t.Line, err)
		}
		got[k] = l
		return l, nil
	}
	if p.Top != nil {
		l, err := get(p.Top)
		if err != nil {
			return nil, err
		}
		p.Symbols, p.Top = slices.Clone(l), nil
	}
	for i := range p.Groups {
		g := &p.Groups[i]
		if g.Top == nil {
			continue
		}
		l, err := get(g.Top)
		if err != nil {
			return nil, err
		}
		g.Symbols, g.Top = slices.Clone(l), nil
	}
	return got, nil
}

// NeedsResolve tells whether a symbol list is given as top N.
func (p *Profile) NeedsResolve() bool {
	if p.Top != nil {
		return true
	}
	for _, g := range p.Groups {
		if g.Top != nil {
			return true
		}
	}
	return false
}

// RESTBase is where Top is resolved; local is the replay server's http base.
func (p *Profile) RESTBase(local string) string {
	switch {
	case p.REST != "":
		return p.REST
	case p.Target == TargetLocal || p.Target == "":
		return local
	}
	return DefaultREST
}

// Group is a set of subscriptions spread over one or more connections.
type Group struct {
	Name          string   `yaml:"name" soak:"kind=group_name,name=group name"`
	Streams       []string `yaml:"streams" soak:"kind=streams"`                           // templates: "{symbol}@trade" expands per symbol; others are taken as is
	PerConnection int      `yaml:"per_connection" soak:"kind=per_connection"`             // max streams per connection, 1..1024
	Subscribe     string   `yaml:"subscribe" soak:"kind=subscribe"`                       // SubscribeURL or SubscribeMessage
	Symbols       []string `yaml:"symbols" soak:"kind=symbols_or_top,name=group symbols"` // overrides the profile symbols when set
	Top           *Top     `yaml:"-"`                                                     // symbols: {top: N, quote: Q} for this group
	Line          int      `yaml:"-"`                                                     // line of the group in the file; 0 for built-in groups
}

// Keepalive is the client ping policy.
type Keepalive struct {
	Interval Duration `yaml:"interval"`                // 0 = no client pings
	Timeout  Duration `yaml:"timeout" soak:"positive"` // no pong (or data) for this long = connection lost
}

// Reconnect bounds the exponential backoff between dials of one slot and
// says when a slot that cannot reconnect is recorded as unrepairable.
type Reconnect struct {
	Min Duration `yaml:"min" soak:"positive"`
	Max Duration `yaml:"max" soak:"positive"`
	// GiveUpDials and GiveUpAfter are the unrepairable rule (give_up_after:
	// a count of failed dials in a row, or a duration of failing); exactly
	// one is set. The slot keeps retrying after it is recorded.
	GiveUpDials int      `yaml:"give_up_after" soak:"kind=give_up"`
	GiveUpAfter Duration `yaml:"-"`
}

// Silence is the per-subscription silence watchdog: a subscription is
// stalled when silent longer than its expected cadence × Factor (at least
// Min), or RealTime for streams without a cadence (trade, aggTrade, ...).
// A connection whose subscriptions are all stalled is aborted and reconnected.
type Silence struct {
	Factor   float64  `yaml:"factor" soak:"positive"`
	Min      Duration `yaml:"min" soak:"positive"`
	RealTime Duration `yaml:"realtime" soak:"positive"`
}

// Default returns the built-in profile, identical in effect to profiles/local.yaml.
func Default() *Profile {
	p := &Profile{
		Name:      "local",
		Target:    TargetLocal,
		Duration:  Duration(2 * time.Minute),
		Warmup:    Duration(3 * time.Second),
		Libraries: append([]string(nil), wire.Libraries...),
		Symbols:   []string{"btcusdt", "ethusdt", "bnbusdt", "solusdt", "xrpusdt"},
		Groups: []Group{
			newGroup("arr", "!miniTicker@arr"),
			newGroup("markets", "{symbol}@aggTrade", "{symbol}@trade", "{symbol}@kline_1m",
				"{symbol}@bookTicker", "{symbol}@depth20@100ms"),
			newGroup("depth", "{symbol}@depth@100ms"),
		},
		Keepalive:        Keepalive{Interval: Duration(20 * time.Second), Timeout: Duration(60 * time.Second)},
		Reconnect:        Reconnect{Min: Duration(500 * time.Millisecond), Max: Duration(30 * time.Second), GiveUpDials: 20},
		Silence:          Silence{Factor: 10, Min: Duration(3 * time.Second), RealTime: Duration(60 * time.Second)},
		HandshakeTimeout: Duration(10 * time.Second),
		ReadLimit:        16 << 20,
		Encoding:         "json",
		Replay:           wire.DefaultReplay(),
		Report:           Report{Every: Duration(5 * time.Minute)},
		Side:             SideClient,
		Chat:             ChatLoad{N: 16, Rate: 200, Queue: 4096},
	}
	p.Replay.Symbols = append([]string(nil), p.Symbols...)
	return p
}

// newGroup is a group with the default connection settings.
func newGroup(name string, streams ...string) Group {
	return Group{Name: name, Streams: streams, PerConnection: MaxPerConnection, Subscribe: SubscribeURL}
}

// Load reads and parses a profile file of at most limit.ProfileFile bytes.
func Load(path string) (*Profile, error) {
	data, err := limit.ReadFile("profile", path, limit.ProfileFile)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes a profile, applies the defaults and validates it. The error,
// if any, is a *Error: one line naming the file and line of the first problem.
func Parse(path string, data []byte) (*Profile, error) {
	return parse(&decoder{path: path}, data)
}

func parse(d *decoder, data []byte) (*Profile, error) {
	p, err := d.parse(data)
	if err != nil {
		return nil, err
	}
	p.Path, p.Text = d.path, string(data)
	return p, nil
}

// ParseStored parses the profile text stored with a run, to read its
// settings again (soak report's thresholds): as Parse, but the files the
// profile names (tls.ca) are not read, since they may be gone or moved since
// the run.
func ParseStored(path string, data []byte) (*Profile, error) {
	return parse(&decoder{path: path, stored: true}, data)
}

// ReplayConfig is the replay server's configuration for this profile: its
// replay section, with the profile's symbols when it names none, its
// faults and the compression its columns ask for. The controller adds a run's start, stop and certificate files.
func (p *Profile) ReplayConfig() wire.Replay {
	r := p.Replay
	r.Rates = maps.Clone(r.Rates)
	if len(r.Symbols) == 0 {
		r.Symbols = p.Symbols
	}
	r.Symbols = slices.Clone(r.Symbols)
	r.Faults = p.ScheduledFaults()
	r.Compression = wire.WidestCompression(p.Compression, p.Columns()) // the server allows what any column asks for
	return r.WithDefaults()
}

// Error is one problem in a profile file, or in a command-line flag's value
// that stands for one of its keys (Path "flag -NAME", Line 0).
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Path + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}
