package worker

import (
	"bytes"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

func hotSlot(t testing.TB) *slot {
	t.Helper()
	tr, err := transport.Lookup("gorilla")
	if err != nil {
		t.Fatal(err)
	}
	plan := &wire.Plan{Version: wire.PlanVersion, Start: time.Now(), End: time.Now().Add(time.Hour), StallFactor: 10, StallRealTime: time.Minute,
		Slots: []wire.Slot{{ID: 0, Group: "markets", Subscribe: "url", Streams: []string{"btcusdt@aggTrade", "btcusdt@trade", "btcusdt@depth@100ms"}}}}
	w, err := New(plan, tr, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s := w.slots[0]
	s.gotFirst = true
	return s
}

// aggTrades builds n combined aggTrade frames with consecutive ids.
func aggTrades(n int) [][]byte { return aggTradesFrom(n, 100000) }

// aggTradesFrom is aggTrades with ids from first.
func aggTradesFrom(n int, first int64) [][]byte {
	out := make([][]byte, n)
	e := time.Now().UnixMicro()
	for i := range out {
		id := strconv.FormatInt(first+int64(i), 10)
		out[i] = []byte(`{"stream":"btcusdt@aggTrade","data":{"e":"aggTrade","E":` + strconv.FormatInt(e, 10) + `,"s":"BTCUSDT","a":` + id +
			`,"p":"67123.45000000","q":"0.00123000","f":` + id + `,"l":` + id + `,"T":1784563200122,"m":true,"M":true}}`)
	}
	return out
}

func TestOnMessageAccounting(t *testing.T) {
	s := hotSlot(t)
	msgs := aggTrades(10)
	for i, m := range msgs {
		if i == 4 { // drop ids 100004 and 100005
			continue
		}
		if i == 5 {
			continue
		}
		s.OnMessage(true, m)
	}
	s.OnMessage(true, msgs[9]) // duplicate
	sb := s.byName["btcusdt@aggTrade"]
	if got := sb.msgs.Load(); got != 9 {
		t.Errorf("msgs %d, want 9", got)
	}
	if got := sb.lost.Load(); got != 2 {
		t.Errorf("lost %d, want 2", got)
	}
	if got, across := sb.gaps.ranges(); len(got) != 1 || got[0] != [2]int64{100004, 100005} || across != nil {
		t.Errorf("gaps %v (across %v), want [[100004 100005]] lost while connected", got, across)
	}
	if got := sb.lostAcross.Load(); got != 0 {
		t.Errorf("lost across %d, want 0: the connection stayed up", got)
	}
	if got := sb.dup.Load(); got != 1 {
		t.Errorf("dup %d, want 1", got)
	}
	if got := sb.lastSeq.Load(); got != 100009 {
		t.Errorf("last seq %d, want 100009", got)
	}
	if s.msgs.Load() != 9 {
		t.Errorf("slot msgs %d, want 9", s.msgs.Load())
	}
	if snap := s.lat.Snapshot(); snap.Count != 9 {
		t.Errorf("latency samples %d, want 9", snap.Count)
	}
	s.OnMessage(true, []byte(`{"result":null,"id":1}`))
	if s.msgs.Load() != 10 || sb.msgs.Load() != 9 {
		t.Errorf("a control reply must count for the slot (%d, want 10), not for a stream (%d, want 9)", s.msgs.Load(), sb.msgs.Load())
	}
	// A new connection: ids missing at its first message were lost across the reconnect.
	more := aggTrades(13)
	sb.fresh, s.freshLeft = true, 1
	s.OnMessage(true, more[12]) // 100010..100011 missing
	if got, across := sb.gaps.ranges(); sb.lost.Load() != 4 || sb.lostAcross.Load() != 2 || len(got) != 2 ||
		got[1] != [2]int64{100010, 100011} || !reflect.DeepEqual(across, []bool{false, true}) {
		t.Errorf("after a reconnect: lost %d across %d, gaps %v %v; want 4, 2, the second range across",
			sb.lost.Load(), sb.lostAcross.Load(), got, across)
	}
}

// TestOnMessageInterleaved: messages of several streams (and control
// replies) in turn land on their own subscription, in the usual shape or not.
func TestOnMessageInterleaved(t *testing.T) {
	s := hotSlot(t)
	agg := aggTrades(6)
	e := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for i := range 6 {
		id := strconv.Itoa(500 + i)
		trade := `{"stream":"btcusdt@trade","data":{"e":"trade","E":` + e + `,"s":"BTCUSDT","t":` + id + `,"p":"1.0","q":"1.0","T":` + e + `,"m":true,"M":true}}`
		if i%2 == 1 { // keys in another order: not the usual shape
			trade = `{"data":{"e":"trade","E":` + e + `,"s":"BTCUSDT","t":` + id + `},"stream":"btcusdt@trade"}`
		}
		s.OnMessage(true, agg[i])
		s.OnMessage(true, []byte(trade))
		if i == 3 {
			s.OnMessage(true, []byte(`{"result":null,"id":1}`))
		}
	}
	for _, c := range []struct {
		name string
		msgs int64
		last int64
	}{{"btcusdt@aggTrade", 6, 100005}, {"btcusdt@trade", 6, 505}, {"btcusdt@depth@100ms", 0, 0}} {
		sb := s.byName[c.name]
		if got := sb.msgs.Load(); got != c.msgs {
			t.Errorf("%s: msgs %d, want %d", c.name, got, c.msgs)
		}
		if got := sb.lastSeq.Load(); got != c.last {
			t.Errorf("%s: last seq %d, want %d", c.name, got, c.last)
		}
		if sb.lost.Load() != 0 || sb.dup.Load() != 0 || sb.ooo.Load() != 0 {
			t.Errorf("%s: lost %d dup %d ooo %d, want none", c.name, sb.lost.Load(), sb.dup.Load(), sb.ooo.Load())
		}
	}
	if got := s.msgs.Load(); got != 13 {
		t.Errorf("slot msgs %d, want 13", got)
	}
}

// TestOnMessageReceiveTime: a message's receive time is the read clock's
// stamp (latency against the wall reading, silence against the monotonic
// one), or the time of OnMessage when the clock was never stamped.
func TestOnMessageReceiveTime(t *testing.T) {
	s := hotSlot(t)
	sb := s.byName["btcusdt@aggTrade"]
	s.clock = new(transport.ReadClock)
	at := time.Now().Add(-time.Hour) // a read long ago: no time.Now after it comes close
	s.clock.Stamp(at)
	e := at.Add(-5 * time.Millisecond).UnixMicro()
	msg := `{"stream":"btcusdt@aggTrade","data":{"e":"aggTrade","E":` + strconv.FormatInt(e, 10) + `,"s":"BTCUSDT","a":7,"f":7,"l":7}}`
	s.OnMessage(true, []byte(msg))
	if snap := s.lat.Snapshot(); snap.Count != 1 || snap.P50 < 5000 || snap.P50 > 5010 {
		t.Errorf("latency %+v, want one value of 5000 µs", snap)
	}
	if got, want := sb.lastSeen.Load(), int64(at.Sub(s.w.epoch)); got != want {
		t.Errorf("last seen %d, want the stamp's %d", got, want)
	}
	s.lat.Reset()
	s.clock = new(transport.ReadClock) // never stamped
	before := time.Now()
	s.OnMessage(true, aggTrades(1)[0])
	if snap := s.lat.Snapshot(); snap.Count != 1 || snap.Negative != 0 {
		t.Errorf("unstamped clock: latency %+v, want one value, not negative", snap)
	}
	if got := sb.lastSeen.Load(); got < int64(before.Sub(s.w.epoch)) {
		t.Errorf("unstamped clock: last seen %d, before OnMessage (%d)", got, int64(before.Sub(s.w.epoch)))
	}
}

func TestOnMessageAllocatesNothing(t *testing.T) {
	s := hotSlot(t)
	msgs := aggTrades(1000)
	i := 0
	allocs := testing.AllocsPerRun(5000, func() {
		s.OnMessage(true, msgs[i%len(msgs)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("OnMessage allocates %.2f per message, want 0", allocs)
	}
}

// BenchmarkOnMessage is the harness's own per-message cost (on top of the
// library's read loop): split, lookup, scan, sequence check, latency record.
// The receive time comes from the connection's read clock, stamped here once
// per 64 messages, as one read of 11 KB would (a firehose read carries more;
// BenchmarkOnMessageOnePerRead is a read per message).
func BenchmarkOnMessage(b *testing.B) { benchOnMessage(b, 64) }

// BenchmarkOnMessageOnePerRead is BenchmarkOnMessage with a read (a clock
// reading) per message: a quiet live stream.
func BenchmarkOnMessageOnePerRead(b *testing.B) { benchOnMessage(b, 1) }

func benchOnMessage(b *testing.B, perRead int) {
	s := hotSlot(b)
	s.hook(new(transport.ReadClock))
	r := newAggRing()
	b.ReportAllocs()
	b.SetBytes(int64(len(r.msgs[0])))
	for i := 0; b.Loop(); i++ {
		if i%perRead == 0 {
			s.flush() // the read clock's BeforeRead hook, as before a socket read
			s.clock.Stamp(time.Now())
		}
		s.OnMessage(true, r.next(i))
	}
	b.StopTimer()
	s.flush()
	sb := s.byName["btcusdt@aggTrade"]
	if sb.lost.Load()+sb.dup.Load()+sb.ooo.Load() != 0 || sb.msgs.Load() != int64(b.N) {
		b.Fatalf("msgs %d of %d, lost %d, dup %d, out of order %d", sb.msgs.Load(), b.N, sb.lost.Load(), sb.dup.Load(), sb.ooo.Load())
	}
}

// BenchmarkScanOnly is the floor under BenchmarkOnMessage: the same
// messages, only scanned for what the accounting needs (the stream, by the
// same prefix comparison, and the id and event time, by the same scan),
// without the accounting. OnMessage's cost over it is the harness's own.
func BenchmarkScanOnly(b *testing.B) {
	s := hotSlot(b)
	sb := s.byName["btcusdt@aggTrade"]
	r := newAggRing()
	b.ReportAllocs()
	b.SetBytes(int64(len(r.msgs[0])))
	var sum int64
	var f binance.Fields
	for i := 0; b.Loop(); i++ {
		data, ok := binance.SplitPrefixed(r.next(i), sb.prefix)
		if !ok || !sb.shape.scanData(data, sb.st.Kind, &f) {
			b.Fatal("not scanned")
		}
		sum += f.E + f.Last
	}
	if sum == 0 {
		b.Fatal("nothing scanned")
	}
}

// aggRing is the benchmarks' messages. A library hands over its (reused,
// cache-warm) read buffer; a small ring of messages keeps them warm
// likewise. Before a message's turn comes again, its id ("a") goes up by
// the ring's size, in place: every id is the next one, as from a server
// that loses nothing.
type aggRing struct {
	msgs [][]byte
	at   []int // index of the last digit of "a"'s value
}

const aggRingSize = 64

func newAggRing() *aggRing {
	const first = 1e12 // room for 10¹² messages
	r := &aggRing{msgs: aggTradesFrom(aggRingSize, first), at: make([]int, aggRingSize)}
	for i, m := range r.msgs {
		r.at[i] = bytes.Index(m, []byte(`"a":`)) + len(`"a":`) + len("1000000000000") - 1
	}
	return r
}

// next is the i-th message (i counting from 0 without gaps).
func (r *aggRing) next(i int) []byte {
	m := r.msgs[i%aggRingSize]
	if i >= aggRingSize {
		addDecimal(m[:r.at[i%aggRingSize]+1], aggRingSize)
	}
	return m
}

// addDecimal adds d to the decimal number at the end of p, in place; the
// number must not grow a digit.
func addDecimal(p []byte, d int) {
	for i := len(p) - 1; d > 0; i-- {
		v := int(p[i]-'0') + d%10
		d /= 10
		if v >= 10 {
			v -= 10
			d++
		}
		p[i] = byte('0' + v)
	}
}

// binarySlot is hotSlot with n aggTrades in JSON, transcoded to e.
func binarySlot(t testing.TB, e codec.Encoding, n int) (*slot, [][]byte) {
	s := hotSlot(t)
	var out [][]byte
	for _, p := range aggTrades(n) {
		m, err := codec.Append(nil, p, e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return s, out
}

// TestOnMessageBinary: binary messages are scanned as msgpack (packed alike):
// the sequence is followed, a skipped id is lost, and nothing is allocated.
func TestOnMessageBinary(t *testing.T) {
	for _, e := range []codec.Encoding{codec.Msgpack, codec.Packed} {
		s, msgs := binarySlot(t, e, 1000)
		sb := s.byName["btcusdt@aggTrade"]
		for i, m := range msgs[:100] {
			if i != 50 {
				s.OnMessage(false, m)
			}
		}
		if sb.msgs.Load() != 99 || sb.lost.Load() != 1 || sb.lastSeq.Load() != 100099 {
			t.Errorf("%v: msgs %d lost %d last %d, want 99, 1, 100099", e, sb.msgs.Load(), sb.lost.Load(), sb.lastSeq.Load())
		}
		i := 100
		allocs := testing.AllocsPerRun(5000, func() {
			s.OnMessage(false, msgs[i%len(msgs)])
			i++
		})
		if allocs != 0 {
			t.Errorf("%v: OnMessage allocates %.2f per message, want 0", e, allocs)
		}
	}
}

// BenchmarkOnMessageMsgpack is BenchmarkOnMessage on msgpack aggTrades.
func BenchmarkOnMessageMsgpack(b *testing.B) {
	s, msgs := binarySlot(b, codec.Msgpack, 64)
	s.clock = new(transport.ReadClock)
	b.ReportAllocs()
	b.SetBytes(int64(len(msgs[0])))
	for i := 0; b.Loop(); i++ {
		if i%64 == 0 {
			s.clock.Stamp(time.Now())
		}
		s.OnMessage(false, msgs[i&63])
	}
}
