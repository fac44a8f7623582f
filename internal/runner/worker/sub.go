package worker

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

// sub is one subscription of a slot. Counters are written only by the slot's
// read goroutine (a load and a store, no read-modify-write) and read by the
// reporter; msgs, bytes, lastSeen and lastSeq are the read goroutine's own
// n, nb and seen as of its latest publish (slot.flush).
type sub struct {
	st     binance.Stream
	rule   binance.Seq
	slot   *slot
	stall  time.Duration
	prefix []byte // binance.CombinedPrefix of the stream
	mpref  []byte // binance.MsgpackPrefix of the stream (binary messages)

	msgs, bytes             atomic.Int64
	lastSeen, maxSilence    atomic.Int64 // ns on the worker's monotonic clock since epoch
	lost, dup, ooo, regress atomic.Int64
	lostAcross              atomic.Int64 // of lost, found at the first message on a new connection
	lastSeq                 atomic.Int64
	n, nb, seen             int64            // read goroutine only: msgs, bytes, lastSeen
	dirty                   bool             // read goroutine only: counted since the latest publish
	seq                     binance.SeqState // read goroutine only
	fresh                   bool             // read goroutine only: no message yet on the current connection
	stalled                 bool             // reporter only
	stalledAt               int64            // reporter only
	stalls                  int64            // reporter only

	// gaps is written by the read goroutine and read by the reporter, under
	// gmu: a gap is rare, so the lock is off the per-message path. gapsN
	// counts its changes (an id found lost and another found late in one
	// second change the ranges, not the count).
	gmu   sync.Mutex
	gaps  gapSet
	gapsN atomic.Int64
	// sent is what the reporter last sent of the loss accounts (reporter only).
	sent lossAccount
}

// lossAccount is what a subscription has lost and how: the part of its
// state that a subs frame carries as soon as it changes, so that the
// controller holds it to the second (a resume continues from it).
type lossAccount struct {
	lost, across, dup, ooo, regress, gapsN, stalls int64
	stalled                                        bool
}

// account is the subscription's loss account now (reporter only).
func (sb *sub) account() lossAccount {
	return lossAccount{lost: sb.lost.Load(), across: sb.lostAcross.Load(), dup: sb.dup.Load(), ooo: sb.ooo.Load(),
		regress: sb.regress.Load(), gapsN: sb.gapsN.Load(), stalls: sb.stalls, stalled: sb.stalled}
}

// ranges returns the ids the subscription lost so far (gapSet.ranges) and
// the overflows.
func (sb *sub) ranges() (r [][2]int64, across []bool, overflow, overflowAcross int64) {
	sb.gmu.Lock()
	defer sb.gmu.Unlock()
	r, across = sb.gaps.ranges()
	return r, across, sb.gaps.overflow, sb.gaps.overflowAcross
}

// latBatch is how many latencies the read goroutine holds before it records
// them under the histogram's lock, if no socket read came first.
const latBatch = 256

// flush publishes what the read goroutine counted since its previous flush:
// one lock for the latencies and a few stores per subscription that had
// messages, per batch. Read goroutine only (the read clock's BeforeRead hook,
// after each message when there is no hook, and when Run returned).
func (s *slot) flush() {
	if !s.pending {
		return
	}
	s.pending = false
	if s.latN > 0 {
		s.lat.RecordBatch(s.latBuf[:s.latN])
		s.latN = 0
	}
	s.msgs.Store(s.n)
	s.bytes.Store(s.nb)
	for _, sb := range s.dirty {
		sb.dirty = false
		sb.msgs.Store(sb.n)
		sb.bytes.Store(sb.nb)
		sb.lastSeen.Store(sb.seen)
		sb.lastSeq.Store(sb.seq.Last())
	}
	s.dirty = s.dirty[:0] // the subscriptions live as long as the slot: nothing to release
}

// inc adds to a counter that only one goroutine writes: no read-modify-write.
func inc(a *atomic.Int64, d int64) { a.Store(a.Load() + d) }

// incNonZero is inc that skips the store (a full barrier on amd64) when d is 0.
func incNonZero(a *atomic.Int64, d int64) {
	if d != 0 {
		inc(a, d)
	}
}

// OnMessage is the per-message hot path. It allocates nothing and takes no
// lock: what it counts is published once per socket read (flush).
//
// A message's receive time is the end of the socket read that delivered its
// last byte (the connection's ReadClock): one clock reading per read serves
// every message that arrived in it, and no later processing delays it.
//
// Text messages are JSON; binary ones msgpack or packed (the encoding the
// plan asked for; control replies and serverShutdown stay JSON text).
//
// A column with a calibration cost burns it here, after the accounting; a
// column without one pays a test of a field.
func (s *slot) OnMessage(text bool, p []byte) {
	s.onMessage(text, p)
	if s.cost.steps != 0 {
		s.burnLast = s.cost.burn(s.burnLast)
	}
	if !s.batch {
		s.flush()
	}
}

func (s *slot) onMessage(text bool, p []byte) {
	if s.w.tap != nil {
		s.w.tap(s.Slot.ID, p)
	}
	var wall, mono int64 // receive time: Unix ns, and ns since epoch on the monotonic clock
	if c := s.clock; c != nil {
		wall, mono = c.Load()
		mono -= s.w.monoOff
	}
	if wall == 0 { // no read clock, or not stamped yet (the bytes came otherwise)
		now := time.Now()
		wall, mono = now.UnixNano(), int64(now.Sub(s.w.epoch))
	}
	s.n++
	s.nb += int64(len(p))
	s.pending = true
	// Plans always use combined connections (/stream): every event names its stream.
	sb := s.last
	var data []byte
	var ok bool
	if sb != nil {
		if text {
			data, ok = binance.SplitPrefixed(p, sb.prefix)
		} else {
			data, ok = binance.SplitPrefixedMsgpack(p, sb.mpref)
		}
	}
	if !ok {
		var name []byte
		if text {
			name, data, ok = binance.SplitCombined(p)
		} else {
			name, data, ok = binance.SplitCombinedMsgpack(p)
		}
		sb = nil
		if ok {
			sb = s.byName[string(name)]
		}
	}
	if sb == nil {
		// A control reply (counted for the slot, not for a stream), or an
		// unwrapped event such as serverShutdown.
		if text && bytes.Contains(p, serverShutdown) {
			s.w.emit(wire.Event{Kind: wire.EventServerShutdown, Slot: s.Slot.ID, Group: s.Slot.Group})
		}
		return
	}
	s.last = sb
	if !s.gotFirst {
		s.firstData(s.w.epoch.Add(time.Duration(mono)))
	}
	sb.n++
	sb.nb += int64(len(p))
	if !sb.dirty {
		sb.dirty = true
		s.dirty = append(s.dirty, sb) // within its capacity, len(s.subs)
	}
	if gap := mono - max(sb.seen, s.w.from); gap > sb.maxSilence.Load() && mono > 0 {
		sb.maxSilence.Store(gap)
	}
	sb.seen = mono
	var f binance.Fields
	var scanned bool
	if text {
		scanned = binance.Scan(data, sb.st.Kind, &f)
	} else {
		scanned = binance.ScanMsgpack(data, sb.st.Kind, &f)
	}
	if !scanned {
		if sb.fresh {
			s.back(sb, 0)
		}
		return
	}
	if f.E > 0 {
		e := f.E
		if e < 1e14 { // milliseconds
			e *= 1000
		}
		s.latBuf[s.latN] = wall/1000 - e
		if s.latN++; s.latN == latBatch {
			s.lat.RecordBatch(s.latBuf[:])
			s.latN = 0
		}
	}
	var lost int64
	if f.HasSeq {
		prev := sb.seq.Last()
		c := sb.seq.Observe(sb.rule, &f)
		if c != (binance.SeqCounts{}) {
			incNonZero(&sb.lost, c.Lost)
			incNonZero(&sb.dup, c.Dup)
			incNonZero(&sb.ooo, c.OutOfOrder)
			incNonZero(&sb.regress, c.Regress)
			// Ids missing at the first message on a new connection were lost
			// across the reconnect; any other gap, while the connection was up.
			switch {
			case c.Lost > 0: // every rule's gap starts right after the highest id seen before
				sb.gmu.Lock()
				sb.gaps.add(prev+1, prev+c.Lost, sb.fresh)
				sb.gmu.Unlock()
				inc(&sb.gapsN, 1)
				if sb.fresh {
					inc(&sb.lostAcross, c.Lost)
				}
			case c.Lost < 0: // a late id that was counted lost when it was skipped
				sb.gmu.Lock()
				across := sb.gaps.remove(f.Last)
				sb.gmu.Unlock()
				inc(&sb.gapsN, 1)
				if across {
					inc(&sb.lostAcross, c.Lost)
				}
			}
			lost = c.Lost
		}
	}
	if sb.fresh {
		s.back(sb, lost)
	}
	if f.Shutdown {
		s.w.emit(wire.Event{Kind: wire.EventServerShutdown, Slot: s.Slot.ID, Group: s.Slot.Group})
	}
}

var serverShutdown = []byte(`"serverShutdown"`)
