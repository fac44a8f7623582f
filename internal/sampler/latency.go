package sampler

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Range and precision of latency histograms, in microseconds.
const (
	LatencyMin    = 1                 // 1 µs
	LatencyMax    = 10 * 60 * 1000000 // 10 min
	latencyDigits = 3                 // values within 0.1 %
)

// Latency is a histogram of latencies in microseconds from 1 µs to 10 min,
// 3 significant digits. It is safe for concurrent use.
type Latency struct {
	mu  sync.Mutex
	id  uint64 // lock order for Merge
	h   *hdrhistogram.Histogram
	neg int64
}

var latencyIDs atomic.Uint64

// NewLatency returns an empty latency histogram.
func NewLatency() *Latency {
	return &Latency{id: latencyIDs.Add(1), h: hdrhistogram.New(LatencyMin, LatencyMax, latencyDigits)}
}

// Record adds one latency of us microseconds without allocating. Values
// below 1 µs are recorded as 1 µs, and a negative value (receive time before
// event time: the clocks disagree, which is a finding) is also counted by
// Negative. Values above 10 min are recorded as 10 min.
func (l *Latency) Record(us int64) {
	l.mu.Lock()
	l.record(us)
	l.mu.Unlock()
}

// RecordBatch records each of us as Record does, under one lock. A run of
// equal values is recorded at once: the messages of one socket read share a
// receive time, and a burst's events often their event time, so a batch is
// mostly such runs, and the histogram's bucket arithmetic is paid per run.
func (l *Latency) RecordBatch(us []int64) {
	l.mu.Lock()
	for i := 0; i < len(us); {
		j := i + 1
		for j < len(us) && us[j] == us[i] {
			j++
		}
		l.recordN(us[i], int64(j-i))
		i = j
	}
	l.mu.Unlock()
}

// record is Record with l.mu held.
func (l *Latency) record(us int64) { l.recordN(us, 1) }

// recordN records n values us, l.mu held.
func (l *Latency) recordN(us, n int64) {
	if us < LatencyMin {
		if us < 0 {
			l.neg += n
		}
		us = LatencyMin
	} else if us > LatencyMax {
		us = LatencyMax
	}
	_ = l.h.RecordValues(us, n) // cannot fail: us is within the histogram's range
}

// Negative returns how many recorded values were negative.
func (l *Latency) Negative() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.neg
}

// LatencySnap is a summary of a Latency in microseconds. Count includes the
// negative values, which are also counted by Negative. Percentiles and Max are
// the highest value equivalent to the recorded one (within 0.1 %); all are 0
// for an empty histogram.
type LatencySnap struct {
	Count, Negative, P50, P90, P99, P999, Max int64
}

// Snapshot summarises the histogram.
func (l *Latency) Snapshot() LatencySnap {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h.TotalCount() == 0 {
		return LatencySnap{Negative: l.neg}
	}
	return LatencySnap{
		Count:    l.h.TotalCount(),
		Negative: l.neg,
		P50:      l.h.ValueAtQuantile(50),
		P90:      l.h.ValueAtQuantile(90),
		P99:      l.h.ValueAtQuantile(99),
		P999:     l.h.ValueAtQuantile(99.9),
		Max:      l.h.Max(),
	}
}

// Merge adds the values of o to l without allocating. o is not changed;
// l.Merge(l) doubles l.
func (l *Latency) Merge(o *Latency) {
	if o == l {
		l.mu.Lock()
		l.h.Merge(l.h.Clone())
		l.neg *= 2
		l.mu.Unlock()
		return
	}
	lockPair(l, o)
	defer unlockPair(l, o)
	l.h.Merge(o.h) // same geometry: nothing is dropped
	l.neg += o.neg
}

// lockPair locks two histograms in a fixed order, so that two goroutines
// merging them into each other cannot deadlock. The caller unlocks both.
func lockPair(a, b *Latency) {
	first, second := a, b
	if b.id < a.id {
		first, second = b, a
	}
	first.mu.Lock()
	second.mu.Lock()
}

func unlockPair(a, b *Latency) {
	a.mu.Unlock()
	b.mu.Unlock()
}

// Drain moves the values of o into l and empties o, as one step for o: a
// value o records concurrently lands either in this drain or in the next.
func (l *Latency) Drain(o *Latency) {
	if o == l {
		return
	}
	lockPair(l, o)
	defer unlockPair(l, o)
	l.h.Merge(o.h)
	l.neg += o.neg
	o.h.Reset()
	o.neg = 0
}

// Reset empties the histogram.
func (l *Latency) Reset() {
	l.mu.Lock()
	l.h.Reset()
	l.neg = 0
	l.mu.Unlock()
}

// encodingVersion is the first byte of an encoded Latency.
const encodingVersion = 1

// Encode returns a compact binary form of the histogram for storage: a
// version byte, the negative count as a uvarint, then the HdrHistogram V2
// compressed encoding (the binary form, not its base64 text).
func (l *Latency) Encode() ([]byte, error) {
	l.mu.Lock()
	text, err := l.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	neg := l.neg
	l.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	out := make([]byte, 1+binary.MaxVarintLen64+base64.StdEncoding.DecodedLen(len(text)))
	out[0] = encodingVersion
	n := 1 + binary.PutUvarint(out[1:], uint64(neg))
	m, err := base64.StdEncoding.Decode(out[n:], text)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	return out[:n+m], nil
}

// DecodeLatency decodes the output of Encode.
func DecodeLatency(b []byte) (*Latency, error) {
	if len(b) == 0 || b[0] != encodingVersion {
		return nil, errors.New("decode latency: unknown encoding")
	}
	neg, n := binary.Uvarint(b[1:])
	if n <= 0 || neg > 1<<63-1 {
		return nil, errors.New("decode latency: bad negative count")
	}
	h, err := hdrhistogram.Decode([]byte(base64.StdEncoding.EncodeToString(b[1+n:])))
	if err != nil {
		return nil, fmt.Errorf("decode latency: %w", err)
	}
	l := NewLatency()
	if dropped := l.h.Merge(h); dropped != 0 {
		return nil, fmt.Errorf("decode latency: %d values outside 1 µs .. 10 min", dropped)
	}
	if int64(neg) > l.h.TotalCount() {
		return nil, errors.New("decode latency: more negative values than values")
	}
	l.neg = int64(neg)
	return l, nil
}
