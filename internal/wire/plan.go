package wire

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PlanVersion is the version of the plan and of the worker frame protocol.
// The controller and the worker are the same binary; the version guards
// against a stale worker binary on the PATH.
const PlanVersion = 1

// Plan is decided once by the controller and handed to every worker, the
// same for each but for its column (Plan.For).
type Plan struct {
	Version int    `json:"v"`
	RunID   string `json:"run_id"`
	// Column is the one the worker runs (Plan.For): set per worker.
	Column Column `json:"column,omitzero"`
	// Columns are the run's, in the profile's order: its libraries, then
	// its variants. The plan the run stores lists them; a worker's has none.
	Columns  []Column  `json:"columns,omitempty"`
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
	Proxy            string        `json:"proxy,omitempty"`       // forward proxy URL, credentials included: stored only through endpoint.Mask
	CAFiles          []string      `json:"ca_files,omitempty"`    // PEM files trusted besides the system roots (wss target, https proxy)
	ServerName       string        `json:"server_name,omitempty"` // TLS server name instead of the target's host
	Runtime          Runtime       `json:"runtime"`               // the Go runtime of every worker alike, but for a variant's own (Plan.For)
	// Encoding is the events' encoding every worker asks for (codec's
	// names: json, msgpack, packed), by its subprotocol; "" is json.
	Encoding    string      `json:"encoding,omitempty"`
	Compression Compression `json:"compression"` // permessage-deflate every library asks for, as far as it can
	// LocalAddr is the address the worker's connections leave from (set
	// per worker): behind a link each column has its own, which the link
	// shapes and faults by. "": the kernel's choice.
	LocalAddr string `json:"local_addr,omitempty"`
}

// Runtime is the Go runtime a worker sets at its start, the same for every
// library of a run (a profile's worker_runtime) but for what a variant sets
// (Settings.Runtime). A zero field leaves Go's
// default (GOMAXPROCS: the CPUs the process may use; GOGC 100, or the
// GOGC environment variable; no memory limit).
type Runtime struct {
	GOMAXPROCS int   `json:"gomaxprocs,omitempty"`
	GOGC       int   `json:"gogc,omitempty"`       // -1: the collector off
	GOMEMLIMIT int64 `json:"gomemlimit,omitempty"` // bytes
}

// String is how a run records it: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off".
func (r Runtime) String() string {
	gc, limit := strconv.Itoa(r.GOGC), "off"
	if r.GOGC < 0 {
		gc = "off"
	}
	if r.GOMEMLIMIT > 0 {
		limit = strconv.FormatInt(r.GOMEMLIMIT, 10) + "B"
	}
	return fmt.Sprintf("GOMAXPROCS=%d GOGC=%s GOMEMLIMIT=%s", r.GOMAXPROCS, gc, limit)
}

// Slot is one connection of the plan: a group's share of streams.
type Slot struct {
	ID        int      `json:"id"`
	Group     string   `json:"group"`
	Subscribe string   `json:"subscribe"` // "url" or "message"
	Streams   []string `json:"streams"`
}

// Epoch is the window's start on this process's monotonic clock.
func (p *Plan) Epoch() time.Time {
	now := time.Now()
	if m, ok := MonoNow(); ok && p.StartMono != 0 {
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
