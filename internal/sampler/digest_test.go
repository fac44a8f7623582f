package sampler

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// within1 reports whether got is want's value at a digest's precision: at
// or above it by at most 1 % (the highest equivalent of its bucket).
func within1(got, want int64) bool { return got >= want && float64(got-want) <= float64(want)/100+1 }

// TestDigestSummary: the percentiles of a digest are those of the values
// recorded, within 1 % (the cases of TestLatencyPercentiles); negatives are
// carried.
func TestDigestSummary(t *testing.T) {
	tests := percentileCases
	for _, tc := range tests {
		l := NewLatency()
		tc.values(l)
		d := NewDigest()
		d.AddLatency(l)
		for _, from := range []string{"digest", "decoded"} {
			got := d.Summary()
			if from == "decoded" {
				dd, err := DecodeDigest(d.Encode())
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				got = dd.Summary()
			}
			w := tc.want
			if got.Count != w.Count || got.Negative != w.Negative || !within1(got.P50, w.P50) || !within1(got.P90, w.P90) ||
				!within1(got.P99, w.P99) || !within1(got.P999, w.P999) || !within1(got.Max, w.Max) {
				t.Errorf("%s (%s): %+v\nwant %+v within 1 %% above", tc.name, from, got, w)
			}
		}
	}
}

// minute records what a worker's minute holds: about 2,000 messages a
// second whose latency is log-normal around 0.9 ms with a p99 near 4 ms.
func minute(rng *rand.Rand) *Latency {
	l := NewLatency()
	for range 120_000 {
		l.Record(int64(math.Exp(math.Log(900) + 0.64*rng.NormFloat64())))
	}
	return l
}

// TestDigestMerge: digests merged, stored one by one or merged after
// decoding, hold exactly the counts of one digest of all the values (the
// multi-host report and the run's p50/p99 rest on this), and a minute
// takes under 1 KB.
func TestDigestMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := NewLatency()
	merged, decoded := NewDigest(), NewDigest()
	for range 3 {
		m := minute(rng)
		all.Merge(m)
		d := NewDigest()
		d.AddLatency(m)
		merged.Merge(d)
		enc := d.Encode()
		if len(enc) > 1024 {
			t.Errorf("a minute encodes to %d bytes, want under 1 KB", len(enc))
		}
		if err := decoded.AddEncoded(enc); err != nil {
			t.Fatal(err)
		}
	}
	one := NewDigest()
	one.AddLatency(all)
	if !slices.Equal(merged.counts, one.counts) || !slices.Equal(decoded.counts, one.counts) || decoded.Count() != 360_000 {
		t.Errorf("merged digests differ from the digest of all values (%d, %d, %d values)", merged.Count(), decoded.Count(), one.Count())
	}
	exact := all.Snapshot()
	if got := decoded.Summary(); !within1(got.P99, exact.P99*999/1000) || got.P99 > exact.P99*101/100+1 {
		t.Errorf("merged p99 %d, the 3-digit histogram's %d: want within 1 %%", got.P99, exact.P99)
	}
}

func TestDecodeDigestRefuses(t *testing.T) {
	good := NewDigest()
	l := NewLatency()
	l.Record(100)
	l.Record(-1)
	good.AddLatency(l)
	enc := good.Encode()
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "unknown encoding"},
		{"another version", append([]byte{9}, enc[1:]...), "unknown encoding"},
		{"cut header", enc[:2], "header"},
		{"cut counts", enc[:len(enc)-3], "count"},
		{"index beyond", []byte{digestVersion, 0, 0xff, 0xff, 0x03, 1}, "out of range"},
		{"negatives without values", []byte{digestVersion, 1, 0, 0}, "negative"},
		{"trailing bytes", append(slices.Clone(enc), 0), ""}, // after the deflate stream: ignored by flate, harmless
	}
	for _, tc := range tests {
		d := NewDigest()
		err := d.AddEncoded(tc.b)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		case tc.want != "" && d.Count() != 0:
			t.Errorf("%s: the digest changed on a bad encoding", tc.name)
		}
	}
	if d, err := DecodeDigest(NewDigest().Encode()); err != nil || d.Count() != 0 {
		t.Errorf("empty digest: %v, %d values", err, d.Count())
	}
}

// FuzzDecodeDigest: any bytes decode or fail without a panic; what
// decodes encodes back to the same counts.
func FuzzDecodeDigest(f *testing.F) {
	d := NewDigest()
	d.AddLatency(uniform(5000))
	f.Add(d.Encode())
	f.Add(NewDigest().Encode())
	f.Add([]byte{digestVersion, 0, 3, 2, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDigest(b)
		if err != nil {
			return
		}
		again, err := DecodeDigest(d.Encode())
		if err != nil || !slices.Equal(again.counts, d.counts) || again.neg != d.neg {
			t.Fatalf("re-encoding differs: %v", err)
		}
		d.Summary()
	})
}

// TestDigestBuckets: the buckets of a digest count every value once, each
// in a range that holds it (a negative one as 1 µs), in order, each range
// within 2 % of its lowest value.
func TestDigestBuckets(t *testing.T) {
	l := NewLatency()
	values := []int64{5, 5, 120, 999, 1000, 1001, 250_000, -3}
	for _, v := range values {
		l.Record(v)
	}
	d := NewDigest()
	d.AddLatency(l)
	found := map[int]bool{} // index in values → found in a bucket
	var n, prev int64
	d.Buckets(func(from, to, c int64) {
		if from <= prev {
			t.Errorf("bucket %d–%d after one from %d: not in order", from, to, prev)
		}
		prev = from
		n += c
		for i, v := range values {
			if max(v, LatencyMin) >= from && max(v, LatencyMin) <= to {
				found[i] = true
			}
		}
		if to > from+from/50+1 {
			t.Errorf("bucket %d–%d wider than 2 %%", from, to)
		}
	})
	if n != int64(len(values)) {
		t.Errorf("%d values in the buckets, want %d", n, len(values))
	}
	if len(found) != len(values) {
		t.Errorf("values found in a bucket: %v of %v", found, values)
	}
}
