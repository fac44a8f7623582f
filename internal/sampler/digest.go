package sampler

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// digestDigits is the precision of a Digest: 2 significant digits, values
// within 1 %. A minute's histogram at the 3 digits of Latency takes about
// 3 KB once compressed, 20 MB a day for five libraries, more than the rest
// of the run adds; at 2 digits it takes about 0.7 KB, and a p99 within 1 %
// is as much as a reader of a latency table can use.
const digestDigits = 2

// digestLen is the number of counts of the Digest's geometry.
var digestLen = len(hdrhistogram.New(LatencyMin, LatencyMax, digestDigits).Export().Counts)

// Digest is a latency histogram kept for storage and merging: the counts
// of one or more Latency histograms at 2 significant digits over the same
// range (1 µs to 10 min), with their negative values. Digests merge by
// adding counts, so a minute's digest and a day's merged from 1,440 of them
// are the same as one histogram of every value, at the digest's precision:
// nothing is lost by storing a minute at a time.
type Digest struct {
	counts []int64 // by index of the 2-digit geometry
	neg    int64
}

// NewDigest returns an empty digest.
func NewDigest() *Digest { return &Digest{counts: make([]int64, digestLen)} }

// AddLatency adds the values of l to d at d's precision. It allocates (a
// histogram of the digest's geometry): call it once a minute, not per value.
func (d *Digest) AddLatency(l *Latency) {
	tmp := hdrhistogram.New(LatencyMin, LatencyMax, digestDigits)
	l.mu.Lock()
	tmp.Merge(l.h) // the 3-digit buckets nest in the 2-digit ones: nothing is dropped
	d.neg += l.neg
	l.mu.Unlock()
	for i, c := range tmp.Export().Counts {
		d.counts[i] += c
	}
}

// Merge adds o's values to d.
func (d *Digest) Merge(o *Digest) {
	for i, c := range o.counts {
		d.counts[i] += c
	}
	d.neg += o.neg
}

// Count is the number of values in d.
func (d *Digest) Count() int64 {
	var n int64
	for _, c := range d.counts {
		n += c
	}
	return n
}

// Summary summarises d as Latency.Snapshot does a Latency (values within
// 1 %, the highest equivalent of their bucket).
func (d *Digest) Summary() LatencySnap {
	h := hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: LatencyMin, HighestTrackableValue: LatencyMax,
		SignificantFigures: digestDigits, Counts: d.counts})
	if h.TotalCount() == 0 {
		return LatencySnap{Negative: d.neg}
	}
	return LatencySnap{Count: h.TotalCount(), Negative: d.neg, P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90),
		P99: h.ValueAtQuantile(99), P999: h.ValueAtQuantile(99.9), Max: h.Max()}
}

// digestVersion is the first byte of an encoded Digest.
const digestVersion = 1

// Encode returns d in its stored form: a version byte, the negative count,
// the index of the first non-zero count and the number of counts from it
// to the last non-zero one (uvarints), then those counts as differences
// from their left neighbour (zigzag varints: a smooth distribution's
// neighbours differ little), deflated.
func (d *Digest) Encode() []byte {
	first, last := -1, -1
	for i, c := range d.counts {
		if c != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	out := []byte{digestVersion}
	out = binary.AppendUvarint(out, uint64(d.neg))
	if first < 0 {
		return binary.AppendUvarint(binary.AppendUvarint(out, 0), 0)
	}
	out = binary.AppendUvarint(out, uint64(first))
	out = binary.AppendUvarint(out, uint64(last-first+1))
	var raw []byte
	prev := int64(0)
	for _, c := range d.counts[first : last+1] {
		raw = binary.AppendVarint(raw, c-prev)
		prev = c
	}
	var buf bytes.Buffer
	buf.Write(out)
	zw, _ := flate.NewWriter(&buf, flate.BestCompression) // only a bad level fails
	zw.Write(raw)
	zw.Close()
	return buf.Bytes()
}

// AddEncoded adds the digest encoded in b (Encode's form) to d. A bad
// encoding is an error and leaves d as it was.
func (d *Digest) AddEncoded(b []byte) error {
	f := inflaters.Get().(*inflater)
	defer inflaters.Put(f)
	counts, neg, first, err := f.decode(b)
	if err != nil {
		return err
	}
	for i, c := range counts {
		d.counts[first+i] += c
	}
	d.neg += neg
	return nil
}

// DecodeDigest decodes Encode's form into a new digest.
func DecodeDigest(b []byte) (*Digest, error) {
	d := NewDigest()
	if err := d.AddEncoded(b); err != nil {
		return nil, err
	}
	return d, nil
}

// inflater is a reusable decompressor for decodeDigest: a flate reader
// allocates its 32 KB window and tables, and a day's report merges 7,200
// digests.
type inflater struct {
	zr     io.ReadCloser // a flate.Resetter
	br     *bufio.Reader
	r      bytes.Reader
	counts []int64 // the decoded counts, reused
}

var inflaters = sync.Pool{New: func() any {
	f := &inflater{}
	f.zr = flate.NewReader(&f.r)
	f.br = bufio.NewReaderSize(f.zr, 512)
	return f
}}

// decode decodes b into f.counts (valid until f's next use).
func (f *inflater) decode(b []byte) (counts []int64, neg int64, first int, err error) {
	if len(b) == 0 || b[0] != digestVersion {
		return nil, 0, 0, errors.New("decode digest: unknown encoding")
	}
	r := bytes.NewReader(b[1:])
	var head [3]uint64
	for i := range head {
		if head[i], err = binary.ReadUvarint(r); err != nil {
			return nil, 0, 0, fmt.Errorf("decode digest: header: %w", err)
		}
	}
	if head[0] > 1<<62 || head[1] > uint64(digestLen) || head[2] > uint64(digestLen)-head[1] {
		return nil, 0, 0, errors.New("decode digest: counts out of range")
	}
	neg, first, n := int64(head[0]), int(head[1]), int(head[2])
	if n == 0 {
		if neg != 0 {
			return nil, 0, 0, errors.New("decode digest: more negative values than values")
		}
		return nil, 0, first, nil
	}
	f.r.Reset(b[len(b)-r.Len():])
	if err := f.zr.(flate.Resetter).Reset(&f.r, nil); err != nil {
		return nil, 0, 0, fmt.Errorf("decode digest: %w", err)
	}
	f.br.Reset(f.zr)
	zr := f.br
	if cap(f.counts) < n {
		f.counts = make([]int64, digestLen)
	}
	counts = f.counts[:n]
	var prev, total int64
	for i := range counts {
		delta, err := binary.ReadVarint(zr)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("decode digest: count %d of %d: %w", i, n, err)
		}
		if delta > 1<<62 || delta < -(1<<62) { // so that prev + delta cannot overflow
			return nil, 0, 0, errors.New("decode digest: a count out of range")
		}
		c := prev + delta
		if c < 0 || total > 1<<62-c {
			return nil, 0, 0, errors.New("decode digest: a count out of range")
		}
		counts[i], prev, total = c, c, total+c
	}
	if counts[0] == 0 || counts[n-1] == 0 {
		return nil, 0, 0, errors.New("decode digest: the counts do not start and end on a value")
	}
	if _, err := zr.ReadByte(); err != io.EOF {
		return nil, 0, 0, errors.New("decode digest: bytes after the counts")
	}
	if neg > total {
		return nil, 0, 0, errors.New("decode digest: more negative values than values")
	}
	return counts, neg, first, nil
}
