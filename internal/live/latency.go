package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wssoak/wssoak/internal/store"
)

// latencyBounds are the upper bounds, in seconds, of the latency
// histogram's classic buckets: from 100 µs (the replay server on loopback)
// to 10 s (a venue far away, or a library falling behind), about three a
// decade, so that a quantile read from them is within a bucket's width.
var latencyBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// latency is one library's latency since the run started, in classic
// buckets: the counts of the workers' histograms, each value counted in the
// first bucket whose bound is at or above it (the histograms keep values
// within 1 %, so a value within 1 % of a bound may fall on either side).
type latency struct {
	counts []uint64 // per bound, not cumulative; values above the last are only in n
	n      uint64
	sum    float64 // seconds
}

// add counts n values of us microseconds; a negative value (the server's
// clock behind ours) counts as 0.
func (l *latency) add(us int64, n uint64) {
	if l.counts == nil {
		l.counts = make([]uint64, len(latencyBounds))
	}
	v := max(float64(us), 0) / 1e6
	for i, b := range latencyBounds {
		if v <= b {
			l.counts[i] += n
			break
		}
	}
	l.n += n
	l.sum += v * float64(n)
}

// metric is the histogram as Prometheus takes it: cumulative bucket counts.
func (l *latency) metric(d *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(latencyBounds))
	var cum uint64
	for i, b := range latencyBounds {
		cum += l.counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(d, l.n, l.sum, buckets, labels...)
}

// digests adds the batch's latency histograms to their libraries'.
//
// SEAM (issue 21): the workers' minute histograms (latency digests) are not
// on main yet; once store.Batch carries them, each is decoded here and its
// values added with latency.add. Until then no latency histogram is served
// (absent, not zero), and soak_latency_p99_seconds is the latency there is.
func (s *Server) digests(*store.Batch) {}
