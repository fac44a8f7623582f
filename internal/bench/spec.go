// Package bench is soak bench: throughput and CPU per message of each
// library, read as fast as a firehose sends, each client in a process of its
// own, checked against what the firehose says it sent.
package bench

import (
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
}

// Result is what one client process measured over its timed part: from the
// end of the handshake (the firehose writes its first frame right after its
// 101) to the close 1000.
type Result struct {
	Scenario     string       `json:"scenario"`
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
	// Filled in by the parent from the firehose's stats of the connection.
	SentMessages int64  `json:"sent_messages"`
	SentPayload  int64  `json:"sent_payload_bytes"`
	Valid        bool   `json:"valid"`
	Invalid      string `json:"invalid,omitempty"` // why not
}

// MsgsPerSec is the result's throughput.
func (r Result) MsgsPerSec() float64 {
	if r.WallNS <= 0 {
		return 0
	}
	return float64(r.Messages) / (float64(r.WallNS) / 1e9)
}

// MBPerSec is the result's payload throughput, MB (10^6 bytes) per second.
func (r Result) MBPerSec() float64 {
	if r.WallNS <= 0 {
		return 0
	}
	return float64(r.PayloadBytes) * 1e3 / float64(r.WallNS)
}

// CPUPerMsg is CPU µs (user + sys) per message.
func (r Result) CPUPerMsg() float64 {
	if r.Messages == 0 {
		return 0
	}
	return float64(r.UserNS+r.SysNS) / 1e3 / float64(r.Messages)
}

// ReadsPerMsg is read syscalls per message.
func (r Result) ReadsPerMsg() float64 {
	if r.Messages == 0 {
		return 0
	}
	return float64(r.Syscr) / float64(r.Messages)
}

// BytesPerRead is bytes per read syscall.
func (r Result) BytesPerRead() float64 {
	if r.Syscr == 0 {
		return 0
	}
	return float64(r.Rchar) / float64(r.Syscr)
}

// AllocsPerMsg is heap allocations per message.
func (r Result) AllocsPerMsg() float64 {
	if r.Messages == 0 {
		return 0
	}
	return float64(r.Mallocs) / float64(r.Messages)
}
