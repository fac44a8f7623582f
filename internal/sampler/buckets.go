package sampler

import hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

// Buckets calls fn with each range of values d holds, in increasing order:
// the lowest and highest value its bucket stands for (µs, within 1 % of
// each other) and how many values it holds. A negative value (a clock ahead
// of the server's) is in the first, as 1 µs: Latency.Record keeps it so. The
// live view turns them into a Prometheus histogram's classic buckets.
func (d *Digest) Buckets(fn func(from, to, n int64)) {
	h := hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: LatencyMin, HighestTrackableValue: LatencyMax,
		SignificantFigures: digestDigits, Counts: d.counts})
	if h.TotalCount() == 0 {
		return
	}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			fn(b.From, b.To, b.Count)
		}
	}
}
