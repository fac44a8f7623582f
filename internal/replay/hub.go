package replay

import (
	"container/heap"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/codec"
)

// variant selects how an event is rendered for a connection.
type variant uint8

const (
	varCombined variant = 1 << iota // wrapped as {"stream":…,"data":…}
	varMicro                        // time fields in µs
	// The two bits above hold the connection's encoding (codec.Encoding).
	varEncShift = 2
	numVariants = 4 << varEncShift
)

// encodingVariant is the variant bits of encoding e.
func encodingVariant(e codec.Encoding) variant { return variant(e) << varEncShift }

// sub is one connection's subscription to one live topic.
type sub struct {
	c   *Conn
	tp  *topic
	v   variant
	idx int // position in tp.subs[v]
	st  *streamStat
	f   *subFault // a stream fault in progress; nil almost always
}

// topic is one stream with a generator. Its schedule is kept in virtual time
// (ns since Start at real rates); wall time = Start + virtual/Speed.
type topic struct {
	name   string
	st     binance.Stream
	rng    *rand.Rand
	gen    generator
	period int64   // virtual ns between ticks; 0 for real-time streams
	rate   float64 // mean events per virtual second for real-time streams

	vnext    int64 // virtual time of the next event
	nextWall int64 // its wall time (Unix ns)
	done     bool  // no more events (Stop reached or rate 0)

	// burst regime of real-time streams
	burst     bool
	mult      float64
	regimeEnd int64

	subs [numVariants][]*sub
	nsub int
	rot  int // fan-out starts at subscriber rot % n (rotates every event)
	hidx int // index in the heap; -1 when not scheduled
}

type topicHeap []*topic

func (h topicHeap) Len() int           { return len(h) }
func (h topicHeap) Less(i, j int) bool { return h[i].nextWall < h[j].nextWall }
func (h topicHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].hidx = i; h[j].hidx = j }
func (h *topicHeap) Push(x any)        { t := x.(*topic); t.hidx = len(*h); *h = append(*h, t) }
func (h *topicHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.hidx = -1
	return t
}

// hub owns every topic and the single scheduler goroutine that fires them.
type hub struct {
	seed    int64
	speed   float64
	startAt time.Time // Config.Start, with its monotonic reading
	startNs int64
	stopNs  int64 // 0 = never
	rates   map[string]float64
	env     genEnv

	mu      sync.Mutex
	topics  map[string]*topic
	sched   topicHeap
	scratch []byte
	wrapped []byte // the combined JSON of an event, before another encoding

	wake chan struct{}
	quit chan struct{}
	done chan struct{}
}

// now is the schedule's clock: wall nanoseconds as of Start, advanced by the
// monotonic clock, so a step of the wall clock neither bursts nor pauses it.
func (h *hub) now() int64 { return h.startNs + int64(time.Since(h.startAt)) }

func newHub(cfg *Config) *hub {
	h := &hub{
		seed:    cfg.Seed,
		speed:   cfg.Speed,
		startAt: cfg.Start,
		startNs: cfg.Start.UnixNano(),
		rates:   cfg.Rates,
		env:     genEnv{tradeRate: cfg.Rates["trade"], symbols: cfg.Symbols},
		topics:  make(map[string]*topic),
		wake:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if !cfg.Stop.IsZero() {
		h.stopNs = cfg.Stop.UnixNano()
	}
	return h
}

// newTopic builds the topic of st, or nil when st is served silently.
func (h *hub) newTopic(st binance.Stream) *topic {
	f := fnv.New64a()
	f.Write([]byte(st.Name))
	r := rand.New(rand.NewPCG(uint64(h.seed), f.Sum64()))
	tp := &topic{name: st.Name, st: st, rng: r, hidx: -1}
	if tp.gen = newGenerator(st, r, h.env); tp.gen == nil {
		return nil
	}
	if st.Period > 0 {
		tp.period = int64(st.Period)
		tp.vnext = r.Int64N(tp.period) // per-stream phase
	} else {
		tp.rate = h.rates[st.Kind.String()]
		tp.regimeEnd = int64(r.ExpFloat64() * 45e9)
		tp.vnext = 0
		tp.advanceRealTime()
	}
	h.setWall(tp)
	return tp
}

func (h *hub) setWall(tp *topic) {
	if tp.done {
		return
	}
	tp.nextWall = h.startNs + int64(float64(tp.vnext)/h.speed)
	if h.stopNs != 0 && tp.nextWall >= h.stopNs {
		tp.done = true
	}
}

// advance moves the topic's schedule to its next event.
func (h *hub) advance(tp *topic) {
	if tp.period > 0 {
		tp.vnext += tp.period
	} else {
		tp.advanceRealTime()
	}
	h.setWall(tp)
}

// advanceRealTime draws the next arrival of a Poisson process whose rate is
// multiplied by 5–10 during bursts of 2–6 s, about once every 45 s.
func (tp *topic) advanceRealTime() {
	if tp.rate <= 0 {
		tp.done = true
		return
	}
	v := tp.vnext
	for {
		if v >= tp.regimeEnd {
			if tp.burst {
				tp.burst = false
				tp.regimeEnd = v + int64(tp.rng.ExpFloat64()*45e9)
			} else {
				tp.burst, tp.mult = true, 5+5*tp.rng.Float64()
				tp.regimeEnd = v + int64(2e9+4e9*tp.rng.Float64())
			}
		}
		rate := tp.rate
		if tp.burst {
			rate *= tp.mult
		}
		gap := tp.rng.ExpFloat64() / rate * 1e9
		if gap < 1 {
			gap = 1 // ids and times must move forward
		}
		if float64(v)+gap < float64(tp.regimeEnd) || gap > math.MaxInt64/4 {
			tp.vnext = v + int64(gap)
			return
		}
		v = tp.regimeEnd
	}
}

// subscribe attaches s to the topic of st, creating or resuming it. It
// returns false when the stream is silent (no topic).
func (h *hub) subscribe(s *sub, st binance.Stream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	tp, ok := h.topics[st.Name]
	if !ok {
		if tp = h.newTopic(st); tp == nil {
			return false
		}
		h.topics[st.Name] = tp
	}
	s.tp = tp
	h.attach(s)
	if tp.nsub == 1 && tp.hidx < 0 && !tp.done {
		// Resume: skip (without rendering) every event already due, so
		// the schedule is the same whenever subscribers come.
		now := h.now()
		for !tp.done && tp.nextWall < now {
			tp.gen.step(tp.rng, tp.nextWall)
			h.advance(tp)
		}
		if !tp.done {
			heap.Push(&h.sched, tp)
			h.kick()
		}
	}
	return true
}

func (h *hub) attach(s *sub) {
	tp := s.tp
	s.idx = len(tp.subs[s.v])
	tp.subs[s.v] = append(tp.subs[s.v], s)
	tp.nsub++
}

func (h *hub) detach(s *sub) {
	tp := s.tp
	l := tp.subs[s.v]
	last := len(l) - 1
	l[s.idx] = l[last]
	l[s.idx].idx = s.idx
	l[last] = nil
	tp.subs[s.v] = l[:last]
	tp.nsub--
}

// unsubscribe detaches s; a topic without subscribers is paused.
func (h *hub) unsubscribe(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.detach(s)
	if tp := s.tp; tp.nsub == 0 && tp.hidx >= 0 {
		heap.Remove(&h.sched, tp.hidx)
	}
}

// setVariant moves s to another rendering variant.
func (h *hub) setVariant(s *sub, v variant) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.detach(s)
	s.v = v
	h.attach(s)
}

func (h *hub) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// run is the scheduler: it fires due topics in time order and sleeps until the next one.
func (h *hub) run() {
	defer close(h.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := h.fireDue()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-h.wake:
		case <-h.quit:
			return
		}
	}
}

// fireDue fires every due event and returns the time until the next one.
func (h *hub) fireDue() time.Duration {
	for {
		h.mu.Lock()
		now := h.now()
		n := 0
		for len(h.sched) > 0 && h.sched[0].nextWall <= now && n < 512 {
			tp := h.sched[0]
			h.fire(tp)
			h.advance(tp)
			if tp.done {
				heap.Pop(&h.sched)
			} else {
				heap.Fix(&h.sched, 0)
			}
			n++
		}
		wait := time.Hour
		if len(h.sched) > 0 {
			wait = time.Duration(h.sched[0].nextWall - now)
		}
		h.mu.Unlock()
		if n < 512 {
			return max(wait, 0)
		}
		select { // let subscribers in between long batches
		case <-h.quit:
			return 0
		default:
		}
	}
}

// fire steps the generator, renders each variant that has subscribers at most
// once, and hands the same bytes to every subscriber's queue.
func (h *hub) fire(tp *topic) {
	if !tp.gen.step(tp.rng, tp.nextWall) {
		return
	}
	seq := tp.gen.seq()
	// The first subscriber served is a different one on every event, so that
	// no library is always first (or last) into its queue.
	tp.rot++
	for _, raw := range [2]variant{0, varMicro} {
		rendered := false
		for _, e := range codec.Encodings() {
			ev := raw | encodingVariant(e)
			plain, combined := tp.subs[ev], tp.subs[ev|varCombined]
			if len(plain) == 0 && len(combined) == 0 {
				continue
			}
			if !rendered {
				h.scratch = tp.gen.render(h.scratch[:0], raw == varMicro)
				rendered = true
			}
			// One allocation holds both renderings; subscribers share it read-only.
			n := 0
			if len(plain) > 0 {
				n += len(h.scratch)
			}
			if len(combined) > 0 {
				n += len(tp.name) + len(h.scratch) + len(wrapHead) + len(wrapMid) + 1
			}
			buf := make([]byte, 0, n)
			if len(plain) > 0 {
				buf = h.encode(buf, h.scratch, e)
				h.deliver(tp, plain, buf[:len(buf):len(buf)], seq, e)
			}
			if len(combined) > 0 {
				from := len(buf)
				if e == codec.JSON {
					buf = appendCombined(buf, tp.name, h.scratch)
				} else {
					h.wrapped = appendCombined(h.wrapped[:0], tp.name, h.scratch)
					buf = h.encode(buf, h.wrapped, e)
				}
				h.deliver(tp, combined, buf[from:], seq, e)
			}
		}
	}
}

// encode appends the JSON event p in encoding e. The generators' JSON always
// transcodes; should it not, the event goes out as JSON (and a test fails).
func (h *hub) encode(dst, p []byte, e codec.Encoding) []byte {
	out, err := codec.Append(dst, p, e)
	if err != nil {
		return append(dst, p...)
	}
	return out
}

// deliver hands data to every subscriber in subs, starting at a rotating one.
func (h *hub) deliver(tp *topic, subs []*sub, data []byte, seq int64, e codec.Encoding) {
	for i := range subs {
		s := subs[(i+tp.rot)%len(subs)]
		if it := (item{data: data, st: s.st, seq: seq, at: tp.nextWall, bin: e.Binary()}); s.f == nil {
			s.c.enqueue(it)
		} else {
			h.deliverFaulted(s, it)
		}
	}
}

const (
	wrapHead = `{"stream":"`
	wrapMid  = `","data":`
)

// appendCombined appends {"stream":"<name>","data":<payload>}.
func appendCombined(b []byte, name string, payload []byte) []byte {
	b = append(b, wrapHead...)
	b = append(b, name...)
	b = append(b, wrapMid...)
	b = append(b, payload...)
	return append(b, '}')
}

func (h *hub) start() { go h.run() }

func (h *hub) stop() {
	close(h.quit)
	<-h.done
}
