package worker

import (
	"sync"
	"time"
)

// Binance closes a connection that sends it more than 5 messages in a second, counting
// every text message, ping and pong. The worker keeps what it starts itself (SUBSCRIBE,
// its keepalive pings) plus the pongs the library has sent to at most ctlMax within any
// ctlWindow: the spare message and the longer window leave room for a server ping whose
// pong cannot wait, and for the network bunching messages that left further apart. What the
// worker starts is also spaced at least ctlGap after the last message, so a busy machine that
// delays a burst cannot deliver it together with the next window's messages.
const (
	ctlMax    = 4
	ctlWindow = 1100 * time.Millisecond
	ctlGap    = ctlWindow / ctlMax
)

// ctlBudget is one connection's account of messages sent toward that limit.
type ctlBudget struct {
	mu   sync.Mutex
	sent [ctlMax]time.Time // the latest ctlMax sends, a ring
	next int               // index of the oldest
}

// reset starts the account of a new connection.
func (b *ctlBudget) reset() {
	b.mu.Lock()
	b.sent, b.next = [ctlMax]time.Time{}, 0
	b.mu.Unlock()
}

// note records a message already sent (a pong the library wrote on its own).
func (b *ctlBudget) note(now time.Time) {
	b.mu.Lock()
	b.sent[b.next] = now
	b.next = (b.next + 1) % ctlMax
	b.mu.Unlock()
}

// take records a send at now if the budget allows one, else returns how long to wait.
func (b *ctlBudget) take(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if last := b.sent[(b.next+ctlMax-1)%ctlMax]; !last.IsZero() && now.Sub(last) < ctlGap {
		return ctlGap - now.Sub(last)
	}
	if oldest := b.sent[b.next]; !oldest.IsZero() && now.Sub(oldest) < ctlWindow {
		return ctlWindow - now.Sub(oldest)
	}
	b.sent[b.next] = now
	b.next = (b.next + 1) % ctlMax
	return 0
}

// wait blocks until the budget allows one more message and records it; false when done
// closed first.
func (b *ctlBudget) wait(done <-chan struct{}) bool {
	for {
		d := b.take(time.Now())
		if d == 0 {
			return true
		}
		t := time.NewTimer(d)
		select {
		case <-done:
			t.Stop()
			return false
		case <-t.C:
		}
	}
}
