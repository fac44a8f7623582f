package binance

import "testing"

// id is a message carrying one id (trade t, aggTrade a, bookTicker u, depthN lastUpdateId).
func id(n int64) Fields { return Fields{First: n, Last: n, HasSeq: true} }

// rng is a depth diff U..u.
func rng(u1, u2 int64) Fields { return Fields{First: u1, Last: u2, HasSeq: true} }

// kl is a kline update: open time, first and last trade id, closed.
func kl(open, f, l int64, x bool) Fields {
	return Fields{KlineOpen: open, First: f, Last: l, KlineClosed: x, HasSeq: true}
}

func seqRun(start, end int64) []Fields {
	var out []Fields
	for n := start; n <= end; n++ {
		out = append(out, id(n))
	}
	return out
}

func cat(parts ...[]Fields) []Fields {
	var out []Fields
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestSeqObserve(t *testing.T) {
	tests := []struct {
		name string
		rule Seq
		msgs []Fields
		want SeqCounts
		last int64
	}{
		{"contiguous clean", SeqContiguous, seqRun(100, 200), SeqCounts{}, 200},
		{"first message is only a baseline", SeqContiguous, []Fields{id(5_000_000_000)}, SeqCounts{}, 5_000_000_000},
		{"drop of 7 counts 7 lost", SeqContiguous, cat(seqRun(1, 10), seqRun(18, 30)), SeqCounts{Lost: 7}, 30},
		{"two drops", SeqContiguous, cat(seqRun(1, 3), seqRun(5, 6), seqRun(10, 11)), SeqCounts{Lost: 4}, 11},
		{"duplicate of the previous", SeqContiguous, []Fields{id(1), id(2), id(2), id(3)}, SeqCounts{Dup: 1}, 3},
		{"duplicate of a run of 3", SeqContiguous, cat(seqRun(1, 5), seqRun(3, 5), seqRun(6, 7)), SeqCounts{Dup: 3}, 7},
		{"swap of two neighbours", SeqContiguous, []Fields{id(1), id(2), id(4), id(3), id(5)}, SeqCounts{OutOfOrder: 1}, 5},
		{"late message beyond the window stays lost", SeqContiguous,
			cat(seqRun(1, 2), seqRun(4, 300), []Fields{id(3)}), SeqCounts{Lost: 1, OutOfOrder: 1}, 300},
		{"late message after a long jump un-counts", SeqContiguous,
			[]Fields{id(1), id(2), id(1000), id(1000 - 255)}, SeqCounts{Lost: 996, OutOfOrder: 1}, 1000},
		{"message older than the window after a long jump", SeqContiguous,
			[]Fields{id(1), id(2), id(1000), id(1000 - 256)}, SeqCounts{Lost: 997, OutOfOrder: 1}, 1000},
		{"message without ids is ignored", SeqContiguous, []Fields{id(1), {E: 5}, id(2)}, SeqCounts{}, 2},
		{"agg drop of 3", SeqAgg, cat(seqRun(10, 12), seqRun(16, 17)), SeqCounts{Lost: 3}, 17},
		{"agg duplicate", SeqAgg, []Fields{id(10), id(11), id(11)}, SeqCounts{Dup: 1}, 11},
		{"range clean", SeqRange, []Fields{rng(1, 10), rng(11, 25), rng(26, 26)}, SeqCounts{}, 26},
		{"range gap counts update ids", SeqRange, []Fields{rng(1, 10), rng(11, 25), rng(41, 50)}, SeqCounts{Lost: 15}, 50},
		{"range dropped message", SeqRange, []Fields{rng(1, 10), rng(21, 30)}, SeqCounts{Lost: 10}, 30},
		{"range duplicate", SeqRange, []Fields{rng(1, 10), rng(11, 20), rng(11, 20), rng(21, 22)}, SeqCounts{Dup: 1}, 22},
		{"range swap", SeqRange, []Fields{rng(1, 10), rng(21, 30), rng(11, 20), rng(31, 40)}, SeqCounts{Lost: 10, OutOfOrder: 1}, 40},
		{"range older duplicate is out of order", SeqRange, []Fields{rng(1, 10), rng(11, 20), rng(1, 10)}, SeqCounts{OutOfOrder: 1}, 20},
		{"range overlap moves on", SeqRange, []Fields{rng(1, 10), rng(5, 20), rng(21, 22)}, SeqCounts{}, 22},
		{"kline repeats and growth", SeqKline, []Fields{
			kl(60, 100, 105, false), kl(60, 100, 105, false), kl(60, 100, 110, false), kl(60, 100, 120, true),
			kl(120, 121, 130, false), kl(120, 121, 140, true),
		}, SeqCounts{}, 140},
		{"kline missing final update loses its trades", SeqKline, []Fields{
			kl(60, 100, 110, false), kl(120, 121, 130, false),
		}, SeqCounts{Lost: 10}, 130},
		{"kline without trades carries the last id over", SeqKline, []Fields{
			kl(60, 100, 120, true), kl(120, -1, -1, false), kl(120, -1, -1, true), kl(180, 121, 125, false),
		}, SeqCounts{}, 125},
		{"kline first trades later in the kline", SeqKline, []Fields{
			kl(60, 100, 120, true), kl(120, -1, -1, false), kl(120, 124, 126, false),
		}, SeqCounts{Lost: 3}, 126},
		{"kline missed kline", SeqKline, []Fields{
			kl(60, 100, 120, true), kl(180, 151, 160, false),
		}, SeqCounts{Lost: 30}, 160},
		{"kline older open time", SeqKline, []Fields{
			kl(60, 100, 120, true), kl(120, 121, 130, false), kl(60, 100, 120, true),
		}, SeqCounts{OutOfOrder: 1}, 130},
		{"kline L goes back", SeqKline, []Fields{
			kl(60, 100, 120, false), kl(60, 100, 110, false), kl(60, 100, 121, false),
		}, SeqCounts{OutOfOrder: 1}, 121},
		{"kline update after the final one", SeqKline, []Fields{
			kl(60, 100, 120, true), kl(60, 100, 120, true),
		}, SeqCounts{Dup: 1}, 120},
		{"kline trade ids reused", SeqKline, []Fields{
			kl(60, 100, 120, true), kl(120, 115, 130, false),
		}, SeqCounts{OutOfOrder: 1}, 130},
		{"kline baseline without trades", SeqKline, []Fields{
			kl(60, -1, -1, false), kl(60, 500, 510, true), kl(120, 511, 512, false),
		}, SeqCounts{}, 512},
		{"monotonic gaps are not lost", SeqMonotonic, []Fields{id(10), id(15), id(100)}, SeqCounts{}, 100},
		{"monotonic equal is a regress", SeqMonotonic, []Fields{id(10), id(10)}, SeqCounts{Regress: 1}, 10},
		{"monotonic back is a regress", SeqMonotonic, []Fields{id(10), id(20), id(15), id(21)}, SeqCounts{Regress: 1}, 21},
		{"none counts nothing", SeqNone, []Fields{id(10), id(5), id(5)}, SeqCounts{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s SeqState
			var sum SeqCounts
			for i := range tt.msgs {
				sum = sum.Add(s.Observe(tt.rule, &tt.msgs[i]))
			}
			if got := s.Counts(); got != tt.want {
				t.Errorf("Counts() = %+v, want %+v", got, tt.want)
			}
			if sum != s.Counts() {
				t.Errorf("sum of deltas %+v != Counts() %+v", sum, s.Counts())
			}
			if got := s.Last(); got != tt.last {
				t.Errorf("Last() = %d, want %d", got, tt.last)
			}
		})
	}
}

func TestSeqDelta(t *testing.T) {
	var s SeqState
	steps := []struct {
		f    Fields
		want SeqCounts
	}{
		{id(1), SeqCounts{}},
		{id(2), SeqCounts{}},
		{id(6), SeqCounts{Lost: 3}},
		{id(4), SeqCounts{Lost: -1, OutOfOrder: 1}},
		{id(4), SeqCounts{Dup: 1}},
		{id(6), SeqCounts{Dup: 1}},
	}
	for i, st := range steps {
		if got := s.Observe(SeqContiguous, &st.f); got != st.want {
			t.Errorf("step %d (id %d): delta %+v, want %+v", i, st.f.Last, got, st.want)
		}
	}
	if want := (SeqCounts{Lost: 2, Dup: 2, OutOfOrder: 1}); s.Counts() != want {
		t.Errorf("Counts() = %+v, want %+v", s.Counts(), want)
	}
}

func TestSeqReset(t *testing.T) {
	tests := []struct {
		name  string
		reset bool
		want  SeqCounts
	}{
		{"kept across an outage", false, SeqCounts{Lost: 1 + 6 + 89}},
		{"reset after an outage", true, SeqCounts{Lost: 1 + 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s SeqState
			for _, f := range []Fields{id(1), id(3), id(10)} {
				s.Observe(SeqContiguous, &f)
			}
			if tt.reset {
				s.Reset()
				if s.Last() != 0 {
					t.Errorf("Last() after Reset = %d, want 0", s.Last())
				}
			}
			for _, f := range []Fields{id(100), id(101)} {
				s.Observe(SeqContiguous, &f)
			}
			if s.Counts() != tt.want {
				t.Errorf("Counts() = %+v, want %+v", s.Counts(), tt.want)
			}
		})
	}
}

func TestSeqExtremeIDs(t *testing.T) {
	var s SeqState
	for _, f := range []Fields{id(-1 << 63), id(1<<63 - 1), id(-1 << 63), id(0)} {
		s.Observe(SeqContiguous, &f) // must neither hang nor panic
	}
	if s.Last() != 1<<63-1 {
		t.Errorf("Last() = %d", s.Last())
	}
}

func TestSeqAllocs(t *testing.T) {
	rules := []struct {
		rule Seq
		f    Fields
	}{
		{SeqContiguous, id(0)}, {SeqAgg, id(0)}, {SeqRange, rng(0, 3)}, {SeqKline, kl(0, 0, 3, false)}, {SeqMonotonic, id(0)},
	}
	for _, r := range rules {
		var s SeqState
		f := r.f
		allocs := testing.AllocsPerRun(100, func() {
			f.First += 5
			f.Last += 7
			f.KlineOpen++
			s.Observe(r.rule, &f)
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocs per Observe, want 0", r.rule, allocs)
		}
	}
}

func BenchmarkSeqObserve(b *testing.B) {
	b.ReportAllocs()
	var s SeqState
	f := id(0)
	for b.Loop() {
		f.First++
		f.Last++
		s.Observe(SeqContiguous, &f)
	}
}
