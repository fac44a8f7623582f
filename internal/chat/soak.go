package chat

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// The load of a server-side soak (soak run with side: server): one room per
// library server, N clients each, a steady rate of messages in ticks of
// SoakTick. Every tick's broadcasts are received by every reading client
// before the next tick is sent, so between ticks nothing is in flight: the
// faults are injected there, and a client that joins there knows the next
// sequence number of every sender. Hence the exact truth at the end:
//
//	deliveries read by the clients that were not made slow
//	  == the server's Deliveries - DroppedDeliveries
//
// Faults: reset (k clients' TCP connections reset with SO_LINGER 0, the
// server's leave awaited through /_stats, then the clients dial again: a
// reconnect each) and slow_reader (k clients stop reading and sending; when
// the server has dropped them, as its Drops and Dropped names show, their
// slots dial again, not counted as reconnects) and oversize (k clients each
// send one message larger than the server reads: the server must close them,
// as its Left shows, and broadcast nothing; they dial again, a reconnect each)
// and half_open (k clients go half-open: they cease all I/O on their sockets
// and never close, the TCP connection established as a peer gone silent
// leaves it; the server's queue for them fills and it must drop exactly
// them, as for slow_reader, counted apart; their slots then dial again).

// SoakTick is the load's pacing step: faults go in between two ticks, so
// none can repeat more often (wire.ServerTick, which the profile checks).
const SoakTick = wire.ServerTick

// SoakConfig is the load of a server-side soak.
type SoakConfig struct {
	Rooms    []SoakRoom    `json:"rooms"`
	N        int           `json:"n"`       // clients per room
	Rate     int           `json:"rate"`    // messages a second sent into each room
	Payload  int           `json:"payload"` // bytes of a message; 0: its sequence number alone
	Start    time.Time     `json:"start"`   // the window's start: seconds are numbered from it (second k ends at Start+k s)
	Duration time.Duration `json:"duration"`
	Faults   []SoakFault   `json:"faults,omitempty"`
	// RcvBuf is every client's SO_RCVBUF (fixed, so a client that stops
	// reading fills its socket soon); 0: 64 KiB.
	RcvBuf int `json:"rcvbuf,omitempty"`
	// Hold keeps every room's clients connected after its end record until
	// ctx ends (the controller samples the servers' last second first).
	Hold bool `json:"hold,omitempty"`
	// Timeout bounds a tick's deliveries, a dial, the server's noticing a
	// reset; 0: 30 s.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// SoakRoom is one library's server.
type SoakRoom struct {
	Lib   string `json:"lib"`
	URL   string `json:"url"`   // ws://host:port/
	Stats string `json:"stats"` // http://host:port/_stats
}

// SoakFault is a fault the load injects at Start+At, then every Every (at
// least SoakTick) while inside the window: one of wire.ServerFaultKinds.
type SoakFault struct {
	Kind  wire.FaultKind `json:"kind"`
	At    time.Duration  `json:"at"`
	Every time.Duration  `json:"every,omitempty"`
	N     int            `json:"n"`
	Size  int            `json:"size,omitempty"` // oversize: the message's bytes
}

// What a SoakRecord is.
const (
	RecordSec   = "sec"   // the clients' second of a room
	RecordEvent = "event" // something happened in a room
	RecordEnd   = "end"   // a room's end account
)

// SoakRecord is one line the load writes: a second, an event or a room's end.
type SoakRecord struct {
	T   string `json:"t"` // RecordSec, RecordEvent, RecordEnd
	Lib string `json:"lib"`
	Sec int64  `json:"sec,omitempty"`
	// sec: the clients' second
	Deliveries int64 `json:"deliveries,omitempty"` // read by every client in the second
	LatP50     int64 `json:"p50_us,omitempty"`
	LatP99     int64 `json:"p99_us,omitempty"`
	LatMax     int64 `json:"max_us,omitempty"`
	Up         int   `json:"up,omitempty"`         // clients connected (slow ones included)
	Reconnects int64 `json:"reconnects,omitempty"` // so far: clients dialled again after a reset
	// event
	At     time.Time      `json:"at,omitzero"`
	Kind   wire.EventKind `json:"kind,omitempty"` // EventFault, EventReconnect, EventDropped, EventLoadError
	Fault  wire.FaultKind `json:"fault,omitempty"`
	Count  int            `json:"count,omitempty"`
	Detail string         `json:"detail,omitempty"`
	DurMs  float64        `json:"dur_ms,omitempty"` // reconnect: from the reset to every client back
	Codes  []int          `json:"codes,omitempty"`  // reconnect after an oversize message: the server's close code per client (reset: none)
	// end
	End *SoakResult `json:"end,omitempty"`
}

// soakFiring is one instant of a fault: the tick before which it goes in.
type soakFiring struct {
	f    SoakFault
	tick int64
}

// soakSchedule is the window's faults, instant by instant, in the order
// they fire: one schedule for every room, so that each injects the same
// faults before the same tick (a room behind catches up; none is thinned).
// An instant goes in before the first tick at or after it, and before the
// window's last tick at the latest.
func soakSchedule(cfg SoakConfig) ([]soakFiring, error) {
	last := max(int64((cfg.Duration+SoakTick-1)/SoakTick)-1, 0)
	var out []soakFiring
	for _, f := range cfg.Faults {
		if f.Every > 0 && f.Every < SoakTick {
			return nil, fmt.Errorf("fault %s every %v: the load injects faults between its ticks of %v, so every must be %v or more", f.Kind, f.Every, SoakTick, SoakTick)
		}
		if f.N < 1 {
			return nil, fmt.Errorf("fault %s of %d clients: want 1 or more", f.Kind, f.N)
		}
		if f.N > cfg.N-1 {
			return nil, fmt.Errorf("fault %s of %d clients: at most %d in a room of %d (one stays)", f.Kind, f.N, cfg.N-1, cfg.N)
		}
		for at := f.At; at < cfg.Duration && at >= 0; at += f.Every {
			out = append(out, soakFiring{f: f, tick: min(int64((at+SoakTick-1)/SoakTick), last)})
			if f.Every <= 0 {
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b soakFiring) int { return cmp.Compare(a.tick, b.tick) })
	return out, nil
}
