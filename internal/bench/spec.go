// Package bench is soak bench: throughput and CPU per message of each
// library, read as fast as a firehose sends, each client in a process of its
// own, checked against what the firehose says it sent.
package bench

import (
	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Paths a client reads with. PathRaw and PathCeiling use no library.
const (
	PathBare    = "bare"    // the adapter's read loop, a handler that only counts
	PathFull    = "full"    // the soak worker's per-message path
	PathDecode  = "decode"  // full, plus encoding/json into typed structs
	PathRaw     = "raw"     // rawws: a library-free frame reader that counts messages
	PathCeiling = "ceiling" // rawws skipping the known byte count: the firehose's ceiling
)

// LibPaths are the paths a library is read with, in table order.
var LibPaths = []string{PathBare, PathFull, PathDecode}

// RawLib is the library column of the library-free rows.
const RawLib = "raw"

// ClientSpec is what a client process is asked to do (JSON on its stdin).
type ClientSpec struct {
	URL       string       `json:"url"`
	StatsURL  string       `json:"stats_url"`
	Lib       string       `json:"lib"` // a transport name, or RawLib
	Path      string       `json:"path"`
	Streams   []string     `json:"streams"`
	RcvBuf    int          `json:"rcvbuf,omitempty"`
	Runtime   wire.Runtime `json:"runtime"`
	SkipBytes int64        `json:"skip_bytes,omitempty"` // PathCeiling: the bytes to read, close frame included
	Encoding  string       `json:"encoding,omitempty"`   // asked for by subprotocol (codec names); "": json
	// Compression is the permessage-deflate the library asks for, as far as it can.
	Compression wire.Compression `json:"compression"`
	// LocalAddr is the address the client dials from: behind a link, its
	// column's; "": the kernel's choice.
	LocalAddr string `json:"local_addr,omitempty"`
}

// Result is what one client process measured over its timed part: from the
// end of the handshake (the firehose writes its first frame right after its
// 101) to the close 1000.
type Result struct {
	Scenario     string       `json:"scenario"` // the row: scenario[-encoding][+deflate…] (RowLabel)
	Encoding     string       `json:"encoding,omitempty"`
	Lib          string       `json:"lib"`
	Version      string       `json:"version,omitempty"` // the library's module version linked in
	Path         string       `json:"path"`
	Round        int          `json:"round"` // 0: the warm-up, not counted
	Messages     int64        `json:"messages"`
	PayloadBytes int64        `json:"payload_bytes"`
	WallNS       int64        `json:"wall_ns"`
	UserNS       int64        `json:"user_ns"` // getrusage(RUSAGE_SELF) around the timed part
	SysNS        int64        `json:"sys_ns"`
	Syscr        int64        `json:"syscr"` // /proc/self/io deltas: read syscalls
	Rchar        int64        `json:"rchar"` // and bytes they returned
	MaxRSSKiB    int64        `json:"max_rss_kib"`
	Mallocs      uint64       `json:"mallocs"` // runtime.MemStats.Mallocs delta
	Lost         int64        `json:"lost,omitempty"`
	Dup          int64        `json:"dup,omitempty"`
	RcvBuf       int          `json:"rcvbuf_effective,omitempty"`
	Runtime      wire.Runtime `json:"runtime"`
	Err          string       `json:"err,omitempty"`
	// WireBytes is the WebSocket frame bytes read after the handshake (the
	// close frame included), compressed as they came; Extensions what the
	// server answered to the compression asked for.
	WireBytes  int64  `json:"wire_bytes,omitempty"`
	Extensions string `json:"extensions,omitempty"`
	// Filled in by the parent from the firehose's stats of the connection.
	SentMessages int64  `json:"sent_messages"`
	SentPayload  int64  `json:"sent_payload_bytes"`
	SentWire     int64  `json:"sent_wire_bytes"` // frames, headers included
	Valid        bool   `json:"valid"`
	Invalid      string `json:"invalid,omitempty"` // why not
}

// SentWirePerMsg is the bytes on the wire per message the firehose sent (frame
// headers included; the close frame excluded).
func (r Result) SentWirePerMsg() float64 {
	if r.SentMessages == 0 {
		return 0
	}
	return float64(r.SentWire) / float64(r.SentMessages)
}

// Rows of the table: each scenario runs once per compression setting of
// Config.Compression (a firehose process each), in every encoding of
// Config.Encodings; its rows are named by their dimensions (measure.Dims.Row):
// scenario[-encoding][+deflate|+deflate_nct].

// RowLabel is the table row of scenario sc read in encoding enc ("": no
// encoding dimension) under compression c, such as depth20,
// depth20-msgpack, depth20+deflate, depth20-msgpack+deflate.
func RowLabel(sc, enc string, c wire.Compression) string {
	return measure.Dims{Scenario: sc, Encoding: enc, Compression: c.String()}.Row()
}

// Label is the row name of scenario sc under compression c.
func Label(sc string, c wire.Compression) string { return RowLabel(sc, "", c) }

// EncodingLabel is the table row of a scenario read in an encoding: the
// scenario's name alone when the bench has no encoding dimension (enc ""),
// else "<scenario>-<encoding>", such as depth20-msgpack.
func EncodingLabel(scenario, enc string) string { return RowLabel(scenario, enc, wire.CompressionOff) }

// compressions is the configured list, off when none.
func (c *Config) compressions() []wire.Compression {
	if len(c.Compression) == 0 {
		return []wire.Compression{wire.CompressionOff}
	}
	return c.Compression
}

// measured is the result as the bench measures (internal/measure) read it.
func (r Result) measured() measure.BenchRun {
	return measure.BenchRun{Messages: r.Messages, PayloadBytes: r.PayloadBytes, WallNS: r.WallNS, UserNS: r.UserNS,
		SysNS: r.SysNS, Syscr: r.Syscr, Rchar: r.Rchar, MaxRSSKiB: r.MaxRSSKiB, Mallocs: r.Mallocs, WireBytes: r.WireBytes}
}

// Value is the result's value of the bench measure id (measure.Bench).
func (r Result) Value(id string) float64 { return measure.BenchValue(id, r.measured()) }

// MsgsPerSec is the result's throughput.
func (r Result) MsgsPerSec() float64 { return r.Value("bench_msg_rate") }

// MBPerSec is the result's payload throughput, MB (10^6 bytes) per second.
func (r Result) MBPerSec() float64 { return r.Value("bench_mb_rate") }

// CPUPerMsg is CPU µs (user + sys) per message.
func (r Result) CPUPerMsg() float64 { return r.Value("bench_cpu_per_msg") }

// ReadsPerMsg is read syscalls per message.
func (r Result) ReadsPerMsg() float64 { return r.Value("bench_reads_per_msg") }

// BytesPerRead is bytes per read syscall.
func (r Result) BytesPerRead() float64 { return r.Value("bench_bytes_per_read") }

// AllocsPerMsg is heap allocations per message.
func (r Result) AllocsPerMsg() float64 { return r.Value("bench_allocs_per_msg") }

// Row is the result as the store records it: its row label split into
// the dimensions it names (Scenario holds the label, as Run names it).
func (r Result) Row() store.BenchResult {
	d := measure.ParseRow(r.Scenario)
	return store.BenchResult{Scenario: d.Scenario, Encoding: d.Encoding, Compression: d.Compression, Path: r.Path, Lib: r.Lib,
		Version: r.Version, Round: r.Round, Valid: r.Valid, Reason: r.Invalid, Err: r.Err, Msgs: r.Messages, Bytes: r.PayloadBytes,
		SentMsgs: r.SentMessages, SentBytes: r.SentPayload, WallNS: r.WallNS, UserNS: r.UserNS, SysNS: r.SysNS,
		Syscr: r.Syscr, Rchar: r.Rchar, MaxRSSKiB: r.MaxRSSKiB, Mallocs: r.Mallocs, Lost: r.Lost, Dup: r.Dup,
		RcvBuf: r.RcvBuf, Runtime: r.Runtime.String(), WireBytes: r.WireBytes, Extensions: r.Extensions}
}

// FromRow is a result read back from the store, named by its row label
// (the runtime settings as their text only: Result.Runtime stays zero).
func FromRow(w store.BenchResult) Result {
	d := measure.BenchDims(w)
	return Result{Scenario: d.Row(), Encoding: d.Encoding, Path: w.Path, Lib: w.Lib, Version: w.Version, Round: w.Round,
		Valid: w.Valid, Invalid: w.Reason, Err: w.Err, Messages: w.Msgs, PayloadBytes: w.Bytes,
		SentMessages: w.SentMsgs, SentPayload: w.SentBytes, WallNS: w.WallNS, UserNS: w.UserNS, SysNS: w.SysNS,
		Syscr: w.Syscr, Rchar: w.Rchar, MaxRSSKiB: w.MaxRSSKiB, Mallocs: w.Mallocs, Lost: w.Lost, Dup: w.Dup,
		RcvBuf: w.RcvBuf, WireBytes: w.WireBytes, Extensions: w.Extensions}
}
