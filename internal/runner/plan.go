// Package runner is the controller (spawn, supervise, sample, store) and the
// worker (connections, keepalive, reconnect, per-message accounting).
package runner

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/profile"
)

// PlanVersion is the version of the plan and of the worker frame protocol.
// The controller and the worker are the same binary; the version guards
// against a stale worker binary on the PATH.
const PlanVersion = 1

// maxURLLen keeps combined-stream URLs under the ~8,000 characters Binance accepts.
const maxURLLen = 7000

// Plan is decided once by the controller and handed identically to every worker.
type Plan struct {
	Version  int       `json:"v"`
	RunID    string    `json:"run_id"`
	Lib      string    `json:"lib"` // set per worker
	Target   string    `json:"target"`
	Local    bool      `json:"local"`
	TimeUnit string    `json:"time_unit"` // "MICROSECOND" or "" (milliseconds)
	Start    time.Time `json:"start"`     // measured window start
	End      time.Time `json:"end"`       // measured window end
	// StartMono is Start on the machine's CLOCK_MONOTONIC (ns), shared by
	// the controller and its workers: a worker anchors its seconds on it, so
	// a wall-clock step between the controller deciding the start and a
	// worker (re)starting shifts nothing. 0: use Start (wall clock).
	StartMono        int64         `json:"start_mono,omitempty"`
	Slots            []Slot        `json:"slots"`
	PingInterval     time.Duration `json:"ping_interval"`
	PongTimeout      time.Duration `json:"pong_timeout"`
	BackoffMin       time.Duration `json:"backoff_min"`
	BackoffMax       time.Duration `json:"backoff_max"`
	HandshakeTimeout time.Duration `json:"handshake_timeout"`
	ReadLimit        int64         `json:"read_limit"`
	RcvBuf           int           `json:"rcvbuf"`
	StallFactor      float64       `json:"stall_factor"`
	StallMin         time.Duration `json:"stall_min"`
	StallRealTime    time.Duration `json:"stall_realtime"`
	UnrepairableDial int           `json:"unrepairable_dials"`    // failed dials in a row; 0 = rule by duration
	UnrepairableFor  time.Duration `json:"unrepairable_for"`      // failing dials for this long; 0 = rule by count
	SubsEvery        int64         `json:"subs_every"`            // seconds between per-subscription totals
	Proxy            string        `json:"proxy,omitempty"`       // forward proxy URL, credentials included: stored only through transport.Mask
	CAFiles          []string      `json:"ca_files,omitempty"`    // PEM files trusted besides the system roots (wss target, https proxy)
	ServerName       string        `json:"server_name,omitempty"` // TLS server name instead of the target's host
}

// Slot is one connection of the plan: a group's share of streams.
type Slot struct {
	ID        int      `json:"id"`
	Group     string   `json:"group"`
	Subscribe string   `json:"subscribe"` // "url" or "message"
	Streams   []string `json:"streams"`
}

// epoch is the window's start on this process's monotonic clock.
func (p *Plan) epoch() time.Time {
	now := time.Now()
	if m, ok := monoNow(); ok && p.StartMono != 0 {
		return now.Add(time.Duration(p.StartMono - m))
	}
	return now.Add(time.Until(p.Start))
}

// URL returns the connection URL of the slot against base (ws://host:port).
func (s Slot) URL(base, timeUnit string) string {
	u := strings.TrimRight(base, "/") + "/stream"
	q := []string{}
	if s.Subscribe == "url" {
		q = append(q, "streams="+strings.Join(s.Streams, "/"))
	}
	if timeUnit != "" {
		q = append(q, "timeUnit="+timeUnit)
	}
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	return u
}

// StallAfter is the silence after which a subscription of the given stream counts as stalled.
// A stream Binance serves silently (retired or unknown) has no cadence to
// wait for: it stalls after StallMin, so the run reports it early.
func (p *Plan) StallAfter(st binance.Stream) time.Duration {
	if silentByDesign(st) {
		return p.StallMin
	}
	if st.Period > 0 {
		return max(time.Duration(float64(st.Period)*p.StallFactor), p.StallMin)
	}
	return p.StallRealTime
}

// silentByDesign: Binance accepts a subscription to a retired or unknown
// stream and never sends anything on it.
func silentByDesign(st binance.Stream) bool { return st.Retired || st.Kind == binance.KindUnknown }

// BuildPlan splits the profile's groups into connection slots.
func BuildPlan(p *profile.Profile, runID, target string, local bool) (*Plan, error) {
	groups, err := p.Expand()
	if err != nil {
		return nil, err
	}
	plan := &Plan{
		Version:          PlanVersion,
		RunID:            runID,
		Target:           target,
		Local:            local,
		TimeUnit:         "MICROSECOND",
		PingInterval:     time.Duration(p.Keepalive.Interval),
		PongTimeout:      time.Duration(p.Keepalive.Timeout),
		BackoffMin:       time.Duration(p.Reconnect.Min),
		BackoffMax:       time.Duration(p.Reconnect.Max),
		HandshakeTimeout: time.Duration(p.HandshakeTimeout),
		ReadLimit:        int64(p.ReadLimit),
		RcvBuf:           int(p.RcvBuf),
		StallFactor:      p.Silence.Factor,
		StallMin:         time.Duration(p.Silence.Min),
		StallRealTime:    time.Duration(p.Silence.RealTime),
		UnrepairableDial: p.Reconnect.GiveUpDials,
		UnrepairableFor:  time.Duration(p.Reconnect.GiveUpAfter),
		SubsEvery:        10,
		Proxy:            p.Proxy,
		ServerName:       p.TLS.ServerName,
	}
	if p.TLS.CA != "" {
		plan.CAFiles = []string{p.TLS.CA}
	}
	if time.Duration(p.Duration) > 2*time.Hour {
		// A day of 5 libraries × 300 subscriptions every 10 s would be ~500 MB
		// of stream samples; every 60 s keeps it near 85 MB.
		plan.SubsEvery = 60
	}
	for _, g := range groups {
		per := g.PerConnection
		if per <= 0 || per > 1024 {
			per = 1024
		}
		var cur []string
		curLen := 0
		flush := func() {
			if len(cur) == 0 {
				return
			}
			plan.Slots = append(plan.Slots, Slot{ID: len(plan.Slots), Group: g.Name, Subscribe: g.Subscribe, Streams: cur})
			cur, curLen = nil, 0
		}
		for _, st := range g.Streams {
			if len(cur) == per || (g.Subscribe == "url" && curLen+len(st.Name)+1 > maxURLLen) {
				flush()
			}
			cur = append(cur, st.Name)
			curLen += len(st.Name) + 1
		}
		flush()
	}
	if len(plan.Slots) == 0 {
		return nil, errors.New("plan: the profile subscribes to no streams")
	}
	if _, err := url.Parse(plan.Slots[0].URL(target, plan.TimeUnit)); err != nil {
		return nil, fmt.Errorf("plan: target %q: %w", target, err)
	}
	return plan, nil
}
