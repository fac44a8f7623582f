package wire

import (
	"maps"
	"time"
)

// Replay configures the replay server: the profile's replay section (its
// keys are the yaml tags, read as the soak tags say: see internal/profile) and what the controller sets for a run (Start,
// Stop, Faults, the certificate files). The controller hands it to the
// server process as JSON; the server adds its own limits (replay.Config).
type Replay struct {
	Seed         int64              `yaml:"seed" json:"seed"`                                       // same seed, same bytes; 0 is a seed like any other
	Speed        float64            `yaml:"speed" json:"speed" soak:"kind=speed"`                   // 1 = real time; 2 = twice the rates and half the periodic intervals
	Rates        map[string]float64 `yaml:"rates" json:"rates,omitempty" soak:"keys=rates"`         // mean events/s per symbol by RateKeys; a missing key takes its default
	PingInterval time.Duration      `yaml:"ping_interval" json:"ping_interval" soak:"positive"`     // server pings (a 13-byte ASCII ms timestamp); 0 is refused: there is no "never"
	PongTimeout  time.Duration      `yaml:"pong_timeout" json:"pong_timeout" soak:"positive"`       // no pong echoing a ping in time => close 1008
	Lifetime     time.Duration      `yaml:"lifetime" json:"lifetime" soak:"positive"`               // then close 1001; 0 is refused: there is no "never"
	QueueSize    int                `yaml:"queue_size" json:"queue_size" soak:"min=1,max=16777216"` // per-connection outbound queue, in messages; overflow closes 1008
	Symbols      []string           `yaml:"symbols" json:"symbols,omitempty" soak:"kind=symbols"`   // universe of market-wide streams
	TLS          bool               `yaml:"tls" json:"tls,omitempty"`                               // serve wss:// (a run makes a throwaway CA in its directory)
	// permessage-deflate as the server does it, when the run's compression allows it.
	DeflateWindowBits int `yaml:"deflate_window_bits" json:"deflate_window_bits,omitempty" soak:"min=9,max=15"` // server_max_window_bits; 0 = 15
	DeflateLevel      int `yaml:"deflate_level" json:"deflate_level,omitempty" soak:"min=1,max=9"`              // flate level; 0 = 1 (best speed)

	// Set for a run by the controller, not by the profile.
	Start  time.Time        `yaml:"-" json:"start"`            // events only at or after Start (zero = the server's start); anchors every schedule
	Stop   time.Time        `yaml:"-" json:"stop"`             // no events at or after Stop (zero = never)
	Faults []ScheduledFault `yaml:"-" json:"faults,omitempty"` // injected by the server at Start+At (+k·Every) before Stop
	// Compression is the run's (the profile's compression): off declines every
	// offer, on accepts either mode as offered, no_context_takeover imposes it.
	Compression Compression `yaml:"-" json:"compression"`
	CertFile    string      `yaml:"-" json:"cert_file,omitempty"` // with KeyFile: the PEM certificate and key to serve wss:// with
	KeyFile     string      `yaml:"-" json:"key_file,omitempty"`
	// Listen is the address the server listens on; "": a free loopback
	// port. A run behind a link gives the server's address on it.
	Listen string `yaml:"-" json:"listen,omitempty"`
}

// ReplayReady is the first line the replay server of a run (soak child
// replay) prints on stdout, once it listens.
type ReplayReady struct {
	Addr string `json:"addr"`
}

// RateKeys are the keys of Replay.Rates: the real-time stream kinds.
var RateKeys = []string{"trade", "aggTrade", "bookTicker", "blockTrade"}

// DefaultReplaySymbols is the universe of market-wide streams of a server
// given no symbols (a run gives the profile's).
var DefaultReplaySymbols = []string{
	"btcusdt", "ethusdt", "bnbusdt", "solusdt", "xrpusdt", "adausdt", "dogeusdt", "trxusdt", "linkusdt", "avaxusdt",
	"dotusdt", "ltcusdt", "bchusdt", "uniusdt", "atomusdt", "etcusdt", "xlmusdt", "filusdt", "nearusdt", "aptusdt",
}

// DefaultReplay is the replay section of the built-in profile
// (profiles/local.yaml), without symbols: a profile's default them to its own.
func DefaultReplay() Replay {
	return Replay{
		Seed:         1,
		Speed:        1,
		Rates:        map[string]float64{"trade": 30, "aggTrade": 20, "bookTicker": 100, "blockTrade": 0.05},
		PingInterval: 20 * time.Second,
		PongTimeout:  60 * time.Second,
		Lifetime:     24 * time.Hour,
		QueueSize:    8192,
	}
}

// WithDefaults returns r with DefaultReplay's value in every field left zero
// (a duration or queue size that is not positive counts as zero; rates key by
// key) and DefaultReplaySymbols for no symbols. Seed is kept: 0 is a seed. A
// profile cannot give a ping interval or lifetime of 0 (its decoder refuses
// it); a zero here (a config built in code) means the default. Rates is a
// new map: r's is not changed.
func (r Replay) WithDefaults() Replay {
	def := DefaultReplay()
	if r.Speed == 0 {
		r.Speed = def.Speed
	}
	rates := maps.Clone(def.Rates)
	maps.Copy(rates, r.Rates)
	r.Rates = rates
	for _, f := range []struct{ v, def *time.Duration }{
		{&r.PingInterval, &def.PingInterval}, {&r.PongTimeout, &def.PongTimeout}, {&r.Lifetime, &def.Lifetime},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if r.QueueSize <= 0 {
		r.QueueSize = def.QueueSize
	}
	if len(r.Symbols) == 0 {
		r.Symbols = DefaultReplaySymbols
	}
	return r
}

// Deflate is the server's deflate setting.
func (r Replay) Deflate() Deflate {
	return Deflate{Compression: r.Compression, WindowBits: r.DeflateWindowBits, Level: r.DeflateLevel}.WithDefaults()
}
