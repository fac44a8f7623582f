package wire

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Frames are what a worker tells the controller over its stdout: one JSON
// object per line, each carrying the protocol version. They are rare (a few
// per second), so JSON costs nothing that matters and stays readable in logs.
type FrameType string

// The frame types.
const (
	FrameHello FrameType = "hello" // once, after the plan was read
	FrameSec   FrameType = "sec"   // every second of the measured window
	FrameSubs  FrameType = "subs"  // per-subscription totals, every 10 s and at stop
	FrameEvent FrameType = "event" // dial, connected, disconnected, reconnect, stall, ...
	FrameFinal FrameType = "final" // after stop: the worker's own rusage
	// FrameHist carries the latency of the minute that ended at Sec (and at
	// stop, of the part minute since): a sampler.Digest in its encoded form.
	FrameHist FrameType = "hist"
)

// Frame is the union of all worker → controller messages.
type Frame struct {
	V    int       `json:"v"`
	Type FrameType `json:"t"`

	// hello
	Lib     string `json:"lib,omitempty"`
	Module  string `json:"module,omitempty"`
	Version string `json:"version,omitempty"`
	Pid     int    `json:"pid,omitempty"`
	Go      string `json:"go,omitempty"`
	Runtime string `json:"runtime,omitempty"` // Runtime.String of what the worker runs with

	// sec, subs
	Sec   int64        `json:"sec,omitempty"`
	Stat  *SecStat     `json:"stat,omitempty"`
	Subs  []SubStat    `json:"subs,omitempty"`
	Slots []SlotStat   `json:"slots,omitempty"` // when a slot's account changed, and with the last subs frame
	Ev    *Event       `json:"ev,omitempty"`
	Fin   *FinalReport `json:"fin,omitempty"`
	Hist  []byte       `json:"hist,omitempty"` // hist: a sampler.Digest, encoded (base64 in the JSON line)
}

// SecStat is one second [sec-1, sec) of a worker.
type SecStat struct {
	Msgs       int64 `json:"msgs"`
	Bytes      int64 `json:"bytes"`
	MsgsTotal  int64 `json:"msgs_total"`
	BytesTotal int64 `json:"bytes_total"`
	Goroutines int   `json:"goroutines"`
	HeapBytes  int64 `json:"heap"`
	ConnsUp    int   `json:"conns_up"`
	Reconnects int64 `json:"reconnects"`
	Lost       int64 `json:"lost"`
	Dup        int64 `json:"dup"`
	LatN       int64 `json:"lat_n"`
	LatP50     int64 `json:"lat_p50"`
	LatP99     int64 `json:"lat_p99"`
	LatMax     int64 `json:"lat_max"`
	// Dropped is how many events the worker dropped so far because its
	// channel was full: sent every second, so the count survives a worker
	// that dies before its final report.
	Dropped int64 `json:"dropped_events,omitempty"`
	// WireBytes is the WebSocket frame bytes read this second (headers and
	// payloads, control frames included, compressed as they came; the
	// handshake, TLS records of wss aside, and a proxy's bytes excluded), next
	// to Bytes, the payload bytes of the messages once inflated.
	WireBytes      int64 `json:"wire_bytes,omitempty"`
	WireBytesTotal int64 `json:"wire_bytes_total,omitempty"`
}

// SubStat is the cumulative state of one subscription.
type SubStat struct {
	Slot         int    `json:"slot"`
	Group        string `json:"grp"`
	Stream       string `json:"stream"`
	Msgs         int64  `json:"msgs"`
	Bytes        int64  `json:"bytes"`
	Lost         int64  `json:"lost"`
	Dup          int64  `json:"dup"`
	OOO          int64  `json:"ooo"`
	Regress      int64  `json:"regress"`
	MaxSilenceMs int64  `json:"max_silence_ms"`
	LastSeq      int64  `json:"last_seq"`
	Stalls       int64  `json:"stalls,omitempty"`  // stall events so far
	Stalled      bool   `json:"stalled,omitempty"` // silent past its threshold now
	// LostAcross is the part of Lost found at the subscription's first
	// message on a new connection: ids lost across a reconnect. The rest was
	// lost while a connection was up.
	LostAcross int64 `json:"lost_across,omitempty"`
	// When the loss account changed since the subscription was last sent,
	// and in the last subs frame: the ids lost, as coalesced inclusive
	// ranges (at most 64), and how many lost ids the ranges leave out
	// (their sizes and the overflow add up to Lost; nil with Lost 0).
	// GapAcross, parallel to Gaps (nil: none), marks the ranges lost across
	// a reconnect; GapOverflowAcross is that part of GapOverflow.
	Gaps              [][2]int64 `json:"gaps,omitempty"`
	GapAcross         []bool     `json:"gap_across,omitempty"`
	GapOverflow       int64      `json:"gap_overflow,omitempty"`
	GapOverflowAcross int64      `json:"gap_overflow_across,omitempty"`
}

// SlotStat is the dial account of one slot over the whole run.
type SlotStat struct {
	Slot         int              `json:"slot"`
	Group        string           `json:"grp"`
	Dials        int64            `json:"dials"`
	DialFails    int64            `json:"dial_fails"`
	Statuses     map[string]int64 `json:"statuses,omitempty"` // failKey (handshake status, "accept") → failed dials
	Unrepairable bool             `json:"unrepairable,omitempty"`
	WireBytes    int64            `json:"wire_bytes,omitempty"` // frame bytes read on all the slot's connections
}

// Event is something that happened to a connection slot.
type Event struct {
	TS     int64     `json:"ts"`             // unix ns (wall clock: a timestamp, never subtracted)
	Mono   int64     `json:"mono,omitempty"` // ns since the window start on the worker's monotonic clock
	Kind   EventKind `json:"kind"`
	Slot   int       `json:"slot"`
	Group  string    `json:"grp,omitempty"`
	Stream string    `json:"stream,omitempty"`
	Code   int       `json:"code,omitempty"`
	Detail string    `json:"detail,omitempty"`
	DurMs  float64   `json:"dur_ms,omitempty"`
}

// FinalReport is sent once after the worker stopped its connections.
type FinalReport struct {
	RusageUser float64 `json:"rusage_user"`
	RusageSys  float64 `json:"rusage_sys"`
	MaxRSS     int64   `json:"maxrss"`
	LatN       int64   `json:"lat_n"`
	LatP50     int64   `json:"lat_p50"`
	LatP99     int64   `json:"lat_p99"`
	LatP999    int64   `json:"lat_p999"`
	LatMax     int64   `json:"lat_max"`
	LatNeg     int64   `json:"lat_neg"`
	Dropped    int64   `json:"dropped_events"`
}

// FrameWriter serialises frames onto the worker's stdout.
type FrameWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
}

// NewFrameWriter writes frames to w.
func NewFrameWriter(w io.Writer) *FrameWriter {
	bw := bufio.NewWriter(w)
	return &FrameWriter{w: bw, enc: json.NewEncoder(bw)}
}

// Send writes one frame, stamped with the protocol version, and flushes it.
func (fw *FrameWriter) Send(f *Frame) error {
	f.V = PlanVersion
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if err := fw.enc.Encode(f); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return fw.w.Flush()
}

// ReadFrames decodes frames from a worker's stdout until EOF.
func ReadFrames(r io.Reader, fn func(*Frame) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		f := new(Frame)
		if err := json.Unmarshal(line, f); err != nil {
			return fmt.Errorf("bad frame %q: %w", Truncate(line, 80), err)
		}
		if f.V != PlanVersion {
			return fmt.Errorf("frame version %d, want %d", f.V, PlanVersion)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Truncate quotes at most n bytes of b, for an error message.
func Truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
