package sampler

import (
	"math"
	"sync"
	"testing"
)

// near reports whether got is within HDR precision (3 digits) above want.
func near(got, want int64) bool { return got >= want && float64(got-want) <= float64(want)/1000+1 }

func uniform(n int64) *Latency {
	l := NewLatency()
	for v := int64(1); v <= n; v++ {
		l.Record(v)
	}
	return l
}

// percentileCases are values recorded and the summary they make, for a
// Latency (within 0.1 %) and a Digest of it (within 1 %).
var percentileCases = []struct {
	name   string
	values func(*Latency)
	want   LatencySnap
}{
	{"empty", func(*Latency) {}, LatencySnap{}},
	{"uniform 1..100000", func(l *Latency) {
		for v := int64(1); v <= 100000; v++ {
			l.Record(v)
		}
	}, LatencySnap{Count: 100000, P50: 50000, P90: 90000, P99: 99000, P999: 99900, Max: 100000}},
	{"one outlier in 1000", func(l *Latency) {
		for range 999 {
			l.Record(250)
		}
		l.Record(4_000_000)
	}, LatencySnap{Count: 1000, P50: 250, P90: 250, P99: 250, P999: 250, Max: 4_000_000}},
	{"negatives and zero clamp to 1", func(l *Latency) {
		l.Record(-3000)
		l.Record(-1)
		l.Record(0)
		l.Record(1)
	}, LatencySnap{Count: 4, Negative: 2, P50: 1, P90: 1, P99: 1, P999: 1, Max: 1}},
	{"above 10 min clamps", func(l *Latency) {
		l.Record(math.MaxInt64)
		l.Record(LatencyMax + 1)
	}, LatencySnap{Count: 2, P50: LatencyMax, P90: LatencyMax, P99: LatencyMax, P999: LatencyMax, Max: LatencyMax}},
}

func TestLatencyPercentiles(t *testing.T) {
	tests := percentileCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLatency()
			tt.values(l)
			got := l.Snapshot()
			if got.Count != tt.want.Count || got.Negative != tt.want.Negative ||
				!near(got.P50, tt.want.P50) || !near(got.P90, tt.want.P90) || !near(got.P99, tt.want.P99) ||
				!near(got.P999, tt.want.P999) || !near(got.Max, tt.want.Max) {
				t.Errorf("got  %+v\nwant %+v (within 0.1%% above)", got, tt.want)
			}
			if l.Negative() != tt.want.Negative {
				t.Errorf("Negative() = %d", l.Negative())
			}
		})
	}
}

func TestLatencyMergeReset(t *testing.T) {
	a, b := NewLatency(), NewLatency()
	for v := int64(1); v <= 100000; v++ {
		if v%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	b.Record(-5)
	a.Merge(b)
	want := uniform(100000).Snapshot()
	want.Count++
	want.Negative = 1
	got := a.Snapshot()
	// The extra value (clamped to 1) moves no percentile of 100000 values.
	if got != want {
		t.Errorf("merged %+v\nwant   %+v", got, want)
	}
	if b.Snapshot().Count != 50001 {
		t.Errorf("Merge changed its argument: %+v", b.Snapshot())
	}
	b.Merge(b)
	if s := b.Snapshot(); s.Count != 100002 || s.Negative != 2 {
		t.Errorf("self-merge = %+v, want doubled", s)
	}
	a.Reset()
	if s := a.Snapshot(); s != (LatencySnap{}) {
		t.Errorf("after Reset %+v", s)
	}
}

func TestLatencyEncode(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
	}{
		{"empty", nil},
		{"spread", []int64{1, 2, 3, 999, 1000, 1001, 123456, 7_000_000, LatencyMax}},
		{"with negatives", []int64{-10, -1, 5, 5, 5, 80}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLatency()
			for _, v := range tt.values {
				l.Record(v)
			}
			b, err := l.Encode()
			if err != nil {
				t.Fatal(err)
			}
			d, err := DecodeLatency(b)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := d.Snapshot(), l.Snapshot(); got != want {
				t.Errorf("round trip %+v, want %+v", got, want)
			}
			d.Record(7) // a decoded histogram keeps recording
			if d.Snapshot().Count != int64(len(tt.values))+1 {
				t.Errorf("count after Record %d", d.Snapshot().Count)
			}
		})
	}
	l := uniform(100000)
	b, err := l.Encode()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("100000 distinct values encode to %d bytes", len(b))
	if len(b) > 4096 {
		t.Errorf("encoding of 100000 distinct values is %d bytes, not compact", len(b))
	}
}

func TestDecodeLatencyErrors(t *testing.T) {
	good, err := uniform(10).Encode()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"unknown version", append([]byte{9}, good[1:]...)},
		{"truncated varint", []byte{encodingVersion, 0x80}},
		{"no histogram", []byte{encodingVersion, 0}},
		{"truncated histogram", good[:len(good)-5]},
		{"more negatives than values", append([]byte{encodingVersion, 100}, good[2:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeLatency(tt.in); err == nil {
				t.Errorf("DecodeLatency succeeded")
			}
		})
	}
}

func FuzzDecodeLatency(f *testing.F) {
	for _, n := range []int64{0, 1, 1000} {
		b, err := uniform(n).Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLatency(b)
		if err != nil {
			return
		}
		s := l.Snapshot()
		if s.Negative > s.Count || s.Count > 0 && (s.P50 > s.P99 || s.P99 > s.Max || s.Max > LatencyMax+LatencyMax/1000) {
			t.Fatalf("decoded an inconsistent histogram: %+v", s)
		}
	})
}

func TestLatencyRecordAllocs(t *testing.T) {
	l := NewLatency()
	v := int64(-5)
	if allocs := testing.AllocsPerRun(1000, func() {
		l.Record(v)
		v = v*7 + 13
	}); allocs != 0 {
		t.Errorf("%v allocs per Record, want 0", allocs)
	}
}

func TestLatencyConcurrent(t *testing.T) {
	l := NewLatency()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10000 {
				l.Record(int64(g*10000 + i))
				if i%1000 == 0 {
					l.Snapshot()
				}
			}
		})
	}
	wg.Wait()
	if s := l.Snapshot(); s.Count != 80000 || s.Negative != 0 {
		t.Errorf("after concurrent records %+v", s)
	}
}

func BenchmarkLatencyRecord(b *testing.B) {
	b.ReportAllocs()
	l := NewLatency()
	v := int64(1)
	for b.Loop() {
		l.Record(v)
		v = (v*7 + 13) % 2_000_000
	}
}

func TestLatencyMergeAllocs(t *testing.T) {
	a, b := uniform(1000), uniform(1000)
	if allocs := testing.AllocsPerRun(10, func() { a.Merge(b) }); allocs != 0 {
		t.Errorf("%v allocs per Merge, want 0", allocs)
	}
}

// TestLatencyMergeBothWays merges two histograms into each other at once,
// which must not deadlock.
func TestLatencyMergeBothWays(t *testing.T) {
	a, b := uniform(10), uniform(10)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { a.Merge(b) })
		wg.Go(func() { b.Merge(a) })
	}
	wg.Wait()
	if a.Snapshot().Count < 10 || b.Snapshot().Count < 10 {
		t.Errorf("counts %d, %d", a.Snapshot().Count, b.Snapshot().Count)
	}
}

func TestLatencyDrain(t *testing.T) {
	src, dst := NewLatency(), NewLatency()
	for v := int64(1); v <= 1000; v++ {
		src.Record(v)
	}
	src.Record(-5)
	dst.Record(2000)
	dst.Drain(src)
	if s := src.Snapshot(); s.Count != 0 || s.Negative != 0 {
		t.Errorf("source after drain: %+v, want empty", s)
	}
	s := dst.Snapshot()
	if s.Count != 1002 || s.Negative != 1 || s.Max < 2000 || s.Max > 2002 {
		t.Errorf("destination after drain: %+v", s)
	}
}
