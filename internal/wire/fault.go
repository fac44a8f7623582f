package wire

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
)

// FaultKind names what a fault does.
type FaultKind string

// Fault kinds. Two sides play them: the replay server against the client
// libraries (a side: client run: FaultKinds) and the load client against
// the libraries' chat servers (a side: server run: ServerFaultKinds). Reset,
// half_open and oversize are played by both, each side its own way.
//
// The replay server's: connection faults act on every matching connection;
// stream faults (silence, drop, duplicate, reorder, fragment) act on the
// named streams of the matching connections only.
const (
	FaultClose       FaultKind = "close"           // close frame with Code and Reason, then TCP close
	FaultReset       FaultKind = "reset"           // abrupt TCP reset (SO_LINGER 0), no close frame
	FaultHalfOpen    FaultKind = "half_open"       // send nothing, answer nothing, no FIN, for For (0 = until the client gives up)
	FaultZombie      FaultKind = "zombie"          // answer pings and send server pings, but no data, for For (0 = until the client gives up)
	FaultSilence     FaultKind = "silence"         // Streams send nothing on matching connections for For; other streams go on
	FaultDrop        FaultKind = "drop"            // skip the next N events of each of Streams (the client sees a gap of exactly N ids)
	FaultDuplicate   FaultKind = "duplicate"       // send each of the next N events of Streams twice
	FaultReorder     FaultKind = "reorder"         // swap the next two events of each of Streams
	FaultReject      FaultKind = "reject"          // reject each connection slot's next N handshakes with Status (and Retry-After)
	FaultOversize    FaultKind = "oversize"        // one text message of Size bytes
	FaultFragment    FaultKind = "fragment"        // the next N messages of Streams (all streams if none) as FragmentParts frames
	FaultInvalidUTF8 FaultKind = "invalid_utf8"    // one text frame whose payload is not valid UTF-8
	FaultShutdown    FaultKind = "server_shutdown" // {"e":"serverShutdown","E":ms}, then close 1001
	FaultDrip        FaultKind = "drip"            // for For, write every byte with its own write call, Delay apart (default 0: no pause)
	FaultLatency     FaultKind = "latency"         // for For, write every data message Delay after its event time
)

// The load client's, played on N clients of each chat server's room:
//
//   - reset: their TCP connections reset (SO_LINGER 0) at one instant; once
//     the server saw them leave, they dial again (a reconnect each);
//   - slow_reader: they stop reading and sending until the server drops
//     them (its queue for them full); their slots then dial again;
//   - half_open: they cease all I/O and never close (a peer gone silent);
//     the server must drop exactly them, as for slow_reader, counted apart;
//   - oversize: each sends one message larger than the server reads; the
//     server must close them and broadcast nothing of it; they dial again.
const (
	FaultSlowReader FaultKind = "slow_reader"
)

// The network's, played by the kernel on the link between the replay server
// and the workers (a profile's link:): the controller adds and removes nft
// rules and htb rates in the server's network namespace at the fault's
// instant, for every column at once. The server and the libraries see only
// what a real path would do to their packets.
//
//   - blackhole: every packet between the workers and the server dropped,
//     both ways, for For: a true half-open (the kernel retransmits, writes
//     succeed, nothing arrives, no FIN, no reset);
//   - rst: the path answers each connection open at the instant with a TCP
//     reset at its next packet from the client (typically the ack of data)
//     within For (0: RSTWindow), and the client's kernel then resets the
//     server's side: both ends see a reset; new connections are not touched;
//   - syn_drop: new connections go unanswered (SYNs dropped) for For, so dial
//     timeouts and reconnect timing show; open ones go on;
//   - throttle: the link's rate toward each column drops to Rate for For.
const (
	FaultBlackhole FaultKind = "blackhole"
	FaultRST       FaultKind = "rst"
	FaultSynDrop   FaultKind = "syn_drop"
	FaultThrottle  FaultKind = "throttle"
)

// ServerTick is the pacing step of the load client of a side: server run:
// it sends in ticks and injects its faults between two of them, so that is
// the shortest period a server-side fault can repeat at (the profile
// refuses a shorter every).
const ServerTick = 100 * time.Millisecond

// FaultKinds lists the kinds the replay server plays (side: client), in
// documentation order.
var FaultKinds = []FaultKind{
	FaultClose, FaultReset, FaultHalfOpen, FaultZombie, FaultSilence, FaultDrop, FaultDuplicate, FaultReorder,
	FaultReject, FaultOversize, FaultFragment, FaultInvalidUTF8, FaultShutdown, FaultDrip, FaultLatency,
}

// NetworkFaultKinds lists the kinds the controller plays through the kernel
// on a run's link (side: client, link: set), in documentation order.
var NetworkFaultKinds = []FaultKind{FaultBlackhole, FaultRST, FaultSynDrop, FaultThrottle}

// ServerFaultKinds lists the kinds the load client plays against the chat
// servers (side: server).
var ServerFaultKinds = []FaultKind{FaultReset, FaultSlowReader, FaultHalfOpen, FaultOversize}

// OnClientSide reports whether the replay server plays k against the client
// libraries (a side: client run).
func (k FaultKind) OnClientSide() bool { return slices.Contains(FaultKinds, k) }

// OnServerSide reports whether the load client plays k against the chat
// servers (a side: server run).
func (k FaultKind) OnServerSide() bool { return slices.Contains(ServerFaultKinds, k) }

// OnNetwork reports whether the controller plays k through the kernel on the
// run's link (NetworkFaultKinds), not the replay server.
func (k FaultKind) OnNetwork() bool { return slices.Contains(NetworkFaultKinds, k) }

// RSTWindow is how long an rst fault without a For keeps resetting the
// connections open at its instant: long enough for each to carry a packet
// (the server's pings and data, which the client acknowledges).
const RSTWindow = 10 * time.Second

// MinThrottle is the lowest rate a throttle fault takes, in bits per second:
// below it a single full-size segment takes longer than a second.
const MinThrottle = 8_000

// FaultCloseCodes are the codes a close fault may send.
var FaultCloseCodes = []int{1000, 1001, 1008, 1011}

// Fault is one fault to inject. Only the fields its kind uses may be set.
type Fault struct {
	Kind       FaultKind     `json:"kind"`
	Streams    []string      `json:"streams,omitempty"` // empty = every connection; else the connections carrying one of them
	Libs       []string      `json:"libs,omitempty"`    // only connections whose X-Soak-Conn tag names one of these columns (libraries or variants); empty = all
	Code       int           `json:"code,omitempty"`
	Reason     string        `json:"reason,omitempty"`
	N          int           `json:"n,omitempty"`
	Status     int           `json:"status,omitempty"`
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	Size       int           `json:"size,omitempty"`
	For        time.Duration `json:"for,omitempty"`
	Delay      time.Duration `json:"delay,omitempty"`
	Rate       int64         `json:"rate,omitempty"` // bits per second (throttle)
}

// ScheduledFault is a fault the replay server injects by itself at its start+At,
// then every Every (0 = once), while before Config.Stop.
type ScheduledFault struct {
	Fault
	At    time.Duration `json:"at"`
	Every time.Duration `json:"every,omitempty"`
}

// Applied says what an injected fault hit: when, and which connections (their
// X-Soak-Conn tags "column/slot/attempt"; "#<id>" for an untagged one). For a
// reject fault Conns fills in as handshakes are rejected.
type Applied struct {
	Fault  Fault     `json:"fault"`
	At     time.Time `json:"at"`
	Conns  []string  `json:"conns"`
	Detail string    `json:"detail"`
}

// String describes the fault in one line: kind and the parameters it uses.
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	add := func(k, v string) { fmt.Fprintf(&b, " %s=%s", k, v) }
	if f.Code != 0 {
		add("code", strconv.Itoa(f.Code))
	}
	if f.Reason != "" {
		add("reason", strconv.Quote(f.Reason))
	}
	if f.N != 0 {
		add("n", strconv.Itoa(f.N))
	}
	if f.Status != 0 {
		add("status", strconv.Itoa(f.Status))
	}
	if f.RetryAfter != 0 {
		add("retry_after", f.RetryAfter.String())
	}
	if f.Size != 0 {
		add("size", strconv.Itoa(f.Size))
	}
	if f.For != 0 {
		add("for", f.For.String())
	}
	if f.Delay != 0 {
		add("delay", f.Delay.String())
	}
	if f.Rate != 0 {
		add("rate", BitRate(f.Rate).String())
	}
	if len(f.Streams) > 0 {
		add("streams", strings.Join(f.Streams, ","))
	}
	if len(f.Libs) > 0 {
		add("libs", strings.Join(f.Libs, ","))
	}
	return b.String()
}

// FaultError is a problem of one Fault: Field names the parameter at fault
// ("kind", "streams", "code", "n", ...), so a profile can point at its line.
type FaultError struct {
	Field string
	Msg   string
}

func (e *FaultError) Error() string { return e.Msg }

// Validate reports the first problem of f as a *FaultError: an unknown kind,
// a missing or out-of-range parameter, a parameter its kind does not use, an
// invalid stream name, or a sequence fault on a stream without message ids.
// The network's kinds (OnNetwork) are valid faults too: who plays one is the
// caller's to check (the replay server refuses them).
func (f Fault) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &FaultError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if !f.Kind.OnClientSide() && !f.Kind.OnNetwork() {
		return bad("kind", "unknown fault kind %q", f.Kind)
	}
	for _, name := range f.Streams {
		st, err := binance.ParseStream(name)
		if err != nil {
			return bad("streams", "%v", err)
		}
		if (f.Kind == FaultDrop || f.Kind == FaultDuplicate || f.Kind == FaultReorder) && !MessageIDs(st) {
			return bad("streams", "%s needs a stream whose ids count messages (trade, aggTrade, blockTrade); %s has %s ids",
				f.Kind, name, seqWord(st.Seq()))
		}
	}
	// each check: the parameter, whether its value is right, and what is wrong otherwise
	type check struct {
		field string
		ok    bool
		why   string
	}
	var checks []check
	switch f.Kind {
	case FaultClose:
		checks = []check{{"code", slices.Contains(FaultCloseCodes, f.Code), fmt.Sprintf("%d is not one of %v", f.Code, FaultCloseCodes)},
			{"reason", len(f.Reason) <= 123, "is longer than 123 bytes"}}
	case FaultHalfOpen, FaultZombie:
		checks = []check{{"for", f.For >= 0, "is negative"}}
	case FaultSilence:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"streams", len(f.Streams) > 0, "must name the streams to silence"}}
	case FaultLatency:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"delay", f.Delay > 0, "must be positive"}}
	case FaultDrip:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"delay", f.Delay >= 0 && f.Delay <= time.Second, "must be between 0 and 1s"}}
	case FaultDrop, FaultDuplicate:
		checks = []check{{"n", f.N > 0, "must be positive"}, {"streams", len(f.Streams) > 0, "must name the streams"}}
	case FaultFragment:
		checks = []check{{"n", f.N > 0, "must be positive"}}
	case FaultReorder:
		checks = []check{{"streams", len(f.Streams) > 0, "must name the streams"}}
	case FaultReject:
		checks = []check{{"n", f.N > 0, "must be positive"},
			{"status", f.Status >= 400 && f.Status <= 599, fmt.Sprintf("%d is not an HTTP error status", f.Status)},
			{"retry_after", f.RetryAfter >= 0, "is negative"},
			{"streams", len(f.Streams) == 0, "does not apply (a handshake is rejected before it subscribes)"}}
	case FaultBlackhole, FaultSynDrop:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"streams", len(f.Streams) == 0, "does not apply (the link drops packets, not streams)"}}
	case FaultRST:
		checks = []check{{"for", f.For >= 0, "is negative"}, {"streams", len(f.Streams) == 0, "does not apply (the path resets connections, not streams)"}}
	case FaultThrottle:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"rate", f.Rate >= MinThrottle, fmt.Sprintf("must be at least %s", BitRate(MinThrottle))},
			{"streams", len(f.Streams) == 0, "does not apply (the link is throttled, not streams)"}}
	case FaultOversize:
		checks = []check{{"size", f.Size >= OversizeMin && f.Size <= 64<<20, fmt.Sprintf("must be between %d and 64 MiB", OversizeMin)}}
	}
	used := map[string]bool{}
	for _, c := range checks {
		used[c.field] = true
		if !c.ok {
			return bad(c.field, "%s: %s %s", f.Kind, c.field, c.why)
		}
	}
	for _, p := range []struct {
		field string
		set   bool
	}{{"code", f.Code != 0}, {"reason", f.Reason != ""}, {"n", f.N != 0}, {"status", f.Status != 0},
		{"retry_after", f.RetryAfter != 0}, {"size", f.Size != 0}, {"for", f.For != 0}, {"delay", f.Delay != 0},
		{"rate", f.Rate != 0}} {
		if p.set && !used[p.field] {
			return bad(p.field, "%s does not take %s", f.Kind, p.field)
		}
	}
	return nil
}

// MessageIDs reports whether the stream's sequence ids count messages, so that
// a drop of N events is seen by a client as exactly N lost: trade and
// blockTrade (t), aggTrade (a). Depth diffs count update ids, klines trade ids,
// and bookTicker and partial depth skip ids by design.
func MessageIDs(st binance.Stream) bool {
	r := st.Seq()
	return r == binance.SeqContiguous || r == binance.SeqAgg
}

func seqWord(r binance.Seq) string {
	switch r {
	case binance.SeqNone:
		return "no"
	case binance.SeqRange:
		return "update (not message)"
	case binance.SeqKline:
		return "trade (not message)"
	case binance.SeqMonotonic:
		return "gapped"
	}
	return r.String()
}

// StreamFault reports whether the kind acts on streams (sub state) rather than on connections.
func (k FaultKind) StreamFault() bool {
	switch k {
	case FaultSilence, FaultDrop, FaultDuplicate, FaultReorder, FaultFragment:
		return true
	}
	return false
}

// OversizeMin is the smallest message an oversize fault can send: the JSON
// head {"e":"oversize","pad":" and its closing "}.
const OversizeMin = len(`{"e":"oversize","pad":"`) + 2

// Clone returns a copy of a that shares no slices with it.
func (a *Applied) Clone() Applied {
	c := *a
	c.Conns = slices.Clone(a.Conns)
	c.Fault.Streams, c.Fault.Libs = slices.Clone(a.Fault.Streams), slices.Clone(a.Fault.Libs)
	return c
}
