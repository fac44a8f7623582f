package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
)

// latencyBounds are the upper bounds, in seconds, of the latency
// histogram's classic buckets: from 100 µs (the replay server on loopback)
// to 10 s (a venue far away, or a library falling behind), about three a
// decade, so that a quantile read from them is within a bucket's width.
var latencyBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// latency is one column's latency since the run started, in classic
// buckets: the counts of the workers' minute digests, each range of the
// digest (values within 1 % of each other) counted in the first bucket
// whose bound is at or above its lowest value, and summed at its middle.
type latency struct {
	counts []uint64 // per bound, not cumulative; values above the last are only in n
	n      uint64
	sum    float64 // seconds
}

// add counts n values between from and to microseconds.
func (l *latency) add(from, to, n int64) {
	if l.counts == nil {
		l.counts = make([]uint64, len(latencyBounds))
	}
	v := max(float64(from), 0) / 1e6
	for i, b := range latencyBounds {
		if v <= b {
			l.counts[i] += uint64(n)
			break
		}
	}
	l.n += uint64(n)
	l.sum += (max(float64(from), 0) + max(float64(to), 0)) / 2 / 1e6 * float64(n)
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

// digests adds the batch's latency digests (a column's minute, and its
// last part minute at the end) to their columns' histograms. A digest the
// controller stored was checked; one that does not decode here is skipped.
func (s *Server) digests(b *store.Batch) {
	for _, x := range b.Digests {
		d, err := sampler.DecodeDigest(x.Digest)
		if err != nil {
			continue
		}
		l := s.lib(x.Lib)
		if l.lat == nil {
			l.lat = &latency{}
		}
		d.Buckets(l.lat.add)
	}
}
