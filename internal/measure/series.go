package measure

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/stats"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// SeriesID names what a ranked measure compares (Rank.Of): a per-second
// series of the window, or a value per injected fault.
type SeriesID string

// The series a column records.
const (
	SeriesCPU    SeriesID = "cpu"     // CPU % of one core, per second (second 1 left out: it holds the worker's start)
	SeriesHeap   SeriesID = "heap"    // Go heap bytes, per second
	SeriesRSS    SeriesID = "rss"     // RSS bytes, per second
	SeriesLatP99 SeriesID = "lat_p99" // the second's p99 latency in ms (NaN: the second recorded none)
	// SeriesMsgs: the messages received in the second (NaN when the
	// worker's count does not cover exactly that second: second 1, the
	// first after a gap in its frames).
	SeriesMsgs SeriesID = "msgs"
	// Per fault: the longest reconnect a fault caused (ms), and the ids lost
	// across its reconnects.
	SeriesReconnect  SeriesID = "reconnect_ms"
	SeriesLostAcross SeriesID = "lost_across"
)

// Series is what one column recorded second by second in the window and
// at every fault: what the ranking (internal/ranking) compares columns by.
// Index i of a per-second series is second i+1 of the window; NaN is a
// second without a value. Only the window's seconds are here: never the
// warm-up's (second 0) nor the drain's after the end.
type Series struct {
	CPU, Heap, RSS, LatP99, Msgs []float64
	// LatSuspect says latency was measured across an unsynchronised clock:
	// not to be compared.
	LatSuspect bool
	Faults     []FaultAt     // the faults that hit the column, in time order
	Reconnects []ReconnectAt // its reconnects, in time order
}

// FaultAt is one injected fault as it hit a column. At is the server's
// instant (Unix ns), the same in every column the fault hit: what pairs the
// columns' consequences of one fault.
type FaultAt struct {
	At   int64
	Sec  float64
	Kind wire.FaultKind
}

// ReconnectAt is one reconnect: when it ended (every subscription back),
// how long it took, and the ids its subscriptions found lost (-1 unknown).
type ReconnectAt struct {
	Sec, DurMs float64
	Lost       int64
}

// Of returns the per-second series id (nil for a per-fault one).
func (s *Series) Of(id SeriesID) []float64 {
	switch id {
	case SeriesCPU:
		return s.CPU
	case SeriesHeap:
		return s.Heap
	case SeriesRSS:
		return s.RSS
	case SeriesLatP99:
		return s.LatP99
	case SeriesMsgs:
		return s.Msgs
	}
	return nil
}

// newSeries makes the series of a window of n seconds (0: open-ended),
// room made for all of it at once: a day's are 86,400 values each.
func newSeries(n int64, latSuspect bool) *Series {
	s := &Series{LatSuspect: latSuspect}
	if n > 0 {
		s.CPU, s.Heap, s.RSS, s.LatP99, s.Msgs = make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	}
	return s
}

// put sets second sec of *xs to v, growing it with NaN as needed.
func put(xs *[]float64, sec int64, v float64) {
	for int64(len(*xs)) < sec {
		*xs = append(*xs, math.NaN())
	}
	(*xs)[sec-1] = v
}

// trim cuts every per-second series to n seconds (NaN-padded up to it).
func (s *Series) trim(n int64) {
	for _, xs := range []*[]float64{&s.CPU, &s.Heap, &s.RSS, &s.LatP99, &s.Msgs} {
		if int64(len(*xs)) > n {
			*xs = (*xs)[:n]
		}
		if n > 0 {
			put(xs, n, at(*xs, n))
		}
	}
}

// at is second sec of xs, NaN beyond it.
func at(xs []float64, sec int64) float64 {
	if sec < 1 || sec > int64(len(xs)) {
		return math.NaN()
	}
	return xs[sec-1]
}

// sampleSeries records a window second's values.
func (c *column) sampleSeries(s *store.Sample) {
	if s.HasWorker {
		if !c.run.server { // a chat server reports no heap: not 0
			put(&c.series.Heap, s.Sec, float64(s.HeapBytes))
		}
		if s.LatP99 > 0 { // 0: no latency this second (a recorded value is at least 1 µs)
			put(&c.series.LatP99, s.Sec, float64(s.LatP99)/1000)
		}
	}
	if s.HasProc {
		put(&c.series.RSS, s.Sec, float64(s.RSS))
		if s.Sec > 1 {
			put(&c.series.CPU, s.Sec, s.CPUPct)
		}
	}
}

// eventSeries records a fault or a reconnect.
func (c *column) eventSeries(e *store.Event) {
	switch e.Kind {
	case wire.EventFault:
		c.series.Faults = append(c.series.Faults, FaultAt{At: e.TS.UnixNano(), Sec: e.Sec, Kind: e.Fault})
	case wire.EventReconnect:
		c.series.Reconnects = append(c.series.Reconnects, ReconnectAt{Sec: e.Sec, DurMs: e.DurMs, Lost: lostOf(e.Detail)})
	}
}

// lostOf reads "lost=N" from a reconnect event's detail, -1 when absent.
func lostOf(detail string) int64 {
	for f := range strings.FieldsSeq(detail) {
		if v, ok := strings.CutPrefix(f, "lost="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				return n
			}
		}
	}
	return -1
}

// window returns the mean of the finite values of xs, NaN when none.
func meanOf(xs []float64) float64 { return stats.Mean(finiteOf(xs)) }

func finiteOf(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// SecondHalf is the part of a per-second series a steady level is taken
// over: the window's second half, after what a process grows into.
func SecondHalf(xs []float64) []float64 { return xs[len(xs)/2:] }

// AfterWarmUp is the part of a per-second series a growth rate is taken
// over: after the first minute, when a process has allocated what it keeps.
func AfterWarmUp(xs []float64) []float64 {
	if len(xs) <= warmUp {
		return nil
	}
	return xs[warmUp:]
}

// warmUp is the seconds left out of a growth rate.
const warmUp = 60

// GrowthPerHour is the Theil–Sen slope of xs's batch means (bytes per
// second of the series) in MB per hour, with its interval; xs is
// AfterWarmUp's part. NaN when it makes no batches.
func GrowthPerHour(xs []float64) stats.Slope {
	b := stats.BatchMeans(xs, true)
	s := stats.TheilSen(b.Mids, b.Means, stats.Confidence)
	const perHour = 3600 / 1e6 // bytes a second → MB an hour
	s.Slope, s.Lo, s.Hi = s.Slope*perHour, s.Lo*perHour, s.Hi*perHour
	return s
}

// digests merges the stored latency digests by library.
func digests(db *store.DB) (map[string]*sampler.Digest, error) {
	out := map[string]*sampler.Digest{}
	err := db.EachLatencyDigest(func(d *store.LatencyDigest) error {
		m := out[d.Lib]
		if m == nil {
			m = sampler.NewDigest()
			out[d.Lib] = m
		}
		if err := m.AddEncoded(d.Digest); err != nil {
			return fmt.Errorf("latency digest %s/%d: %w", d.Lib, d.Sec, err)
		}
		return nil
	})
	return out, err
}
