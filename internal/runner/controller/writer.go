package controller

import (
	"fmt"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Failed writes (disk full, file too large, I/O error) do not stop a run.
// The writer keeps the batches it could not write, in order, and retries them
// with backoff (writeRetryMin doubling to writeRetryMax) while new batches
// queue behind them, so a disk that fills and is freed again loses nothing.
// Only when more than Options.WriteBacklog batches are waiting (about that many seconds:
// the controller flushes about once a second) is the oldest dropped; what it
// held is recorded as a "missing" event naming the seconds lost. Every failure
// is logged, and the episode is recorded as a "write_failed" event once writes
// work again. At the end, pending batches are retried within
// Options.EndRetry's budget, shared with the end's other writes.
var (
	writeRetryMin = store.RetryMin
	writeRetryMax = store.RetryMax
)

const defaultWriteBacklog = 600

// writeEpisode is one stretch of failing writes.
type writeEpisode struct {
	since     time.Time
	attempts  int
	lastErr   error
	dropped   int   // batches dropped
	lostFrom  int64 // seconds of sample rows dropped (inclusive range), -1 = none
	lostTo    int64
	lostRows  int
	lostOther int // stream samples, events and host samples dropped
}

// writer is the one goroutine that writes to the database: one transaction per batch.
func (l *Lifecycle) writer() {
	var (
		pending []*store.Batch
		ep      *writeEpisode
		retry   <-chan time.Time
		backoff = writeRetryMin
		n       int
	)
	// drain writes the pending batches in order; false when one failed.
	drain := func() bool {
		for len(pending) > 0 {
			b := pending[0]
			if err := l.db.Write(b); err != nil {
				if ep == nil {
					ep = &writeEpisode{since: time.Now(), lostFrom: -1}
				}
				ep.attempts++
				ep.lastErr = err
				l.o.Log.Error("write failed; keeping the batch and retrying", "err", err, "pending", len(pending),
					"attempt", ep.attempts, "retry_in", backoff)
				return false
			}
			pending = pending[1:]
			if l.o.Observer != nil {
				l.o.Observer.Observe(b)
			}
			if n++; n%300 == 0 {
				if err := l.db.Checkpoint(); err != nil {
					l.o.Log.Warn("checkpoint", "err", err)
				}
			}
		}
		if ep != nil {
			l.recordEpisode(ep)
			ep = nil
		}
		return true
	}
	schedule := func(ok bool) {
		if ok {
			retry, backoff = nil, writeRetryMin
			return
		}
		retry = time.After(backoff)
		backoff = min(2*backoff, writeRetryMax)
	}
	for {
		select {
		case b, open := <-l.writes:
			if !open {
				if len(pending) > 0 {
					_ = l.o.EndRetry.Do("write the last batches", func() error {
						if drain() {
							return nil
						}
						return ep.lastErr
					})
				}
				if len(pending) > 0 {
					for _, b := range pending {
						ep.drop(b)
					}
					l.o.Log.Error("writes still failing at the end: data lost", "batches", ep.dropped,
						"seconds", ep.lostRange(), "err", ep.lastErr)
					l.written <- fmt.Errorf("%d batches not written (%s), their rows lost: %w", ep.dropped, ep.lostRange(), ep.lastErr)
					return
				}
				l.written <- nil
				return
			}
			pending = append(pending, b)
			if len(pending) > l.o.WriteBacklog {
				ep.drop(pending[0])
				pending = pending[1:]
			}
			if retry == nil { // not waiting out a backoff
				schedule(drain())
			}
		case <-retry:
			retry = nil
			schedule(drain())
		}
	}
}

func (ep *writeEpisode) drop(b *store.Batch) {
	ep.dropped++
	for _, s := range b.Samples {
		if ep.lostFrom < 0 || s.Sec < ep.lostFrom {
			ep.lostFrom = s.Sec
		}
		ep.lostTo = max(ep.lostTo, s.Sec)
		ep.lostRows++
	}
	ep.lostOther += len(b.StreamSamples) + len(b.Events) + len(b.Host) + len(b.Dials) + len(b.Gaps) + len(b.Digests)
}

func (ep *writeEpisode) lostRange() string {
	if ep.lostFrom < 0 {
		return "no sample seconds"
	}
	return fmt.Sprintf("seconds %d–%d", ep.lostFrom, ep.lostTo)
}

// recordEpisode writes, once writes work again, what the failure cost.
func (l *Lifecycle) recordEpisode(ep *writeEpisode) {
	now := time.Now()
	sec := func(t time.Time) float64 { return t.Sub(l.epoch).Seconds() }
	b := &store.Batch{Events: []store.Event{{TS: ep.since, Sec: sec(ep.since), Kind: wire.EventWriteFailed, Slot: -1,
		Code: ep.attempts, DurMs: float64(now.Sub(ep.since).Milliseconds()),
		Detail: fmt.Sprintf("database writes failed for %s (%d attempts, last: %v); %d batches dropped",
			now.Sub(ep.since).Round(time.Millisecond), ep.attempts, ep.lastErr, ep.dropped)}}}
	if ep.dropped > 0 {
		b.Events = append(b.Events, store.Event{TS: ep.since, Sec: float64(max(ep.lostFrom, 0)), Kind: wire.EventMissing, Slot: -1,
			Code: ep.lostRows, Detail: fmt.Sprintf("%s not recorded (%d sample rows, %d other rows): writes failed", ep.lostRange(), ep.lostRows, ep.lostOther)})
	}
	l.o.Log.Warn("writes work again", "failed_for", now.Sub(ep.since).Round(time.Millisecond), "attempts", ep.attempts,
		"dropped_batches", ep.dropped, "lost", ep.lostRange())
	if err := l.db.Write(b); err != nil {
		l.o.Log.Error("record write failure", "err", err)
	}
}
