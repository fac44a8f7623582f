package chat

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The end accounting of a server-side soak's room: what the clients read
// against what the server says it wrote.

// SoakResult is a room's account at the end.
type SoakResult struct {
	Sent           int64 `json:"sent"`
	Deliveries     int64 `json:"deliveries"`        // read by the clients never made slow
	SlowDeliveries int64 `json:"slow_deliveries"`   // read by the slow and half-open clients before they stopped
	Resets         int64 `json:"resets"`            // clients reset
	Reconnects     int64 `json:"reconnects"`        // clients dialled again after a reset or an oversize close
	Oversize       int64 `json:"oversize"`          // clients that sent an oversize message (each closed by the server)
	SlowInjected   int64 `json:"slow_injected"`     // clients made slow
	SlowDropped    int64 `json:"slow_dropped"`      // of those, dropped by the server (its count rose by exactly them, naming them)
	HalfOpen       int64 `json:"half_open"`         // clients made half-open
	HalfOpenDrop   int64 `json:"half_open_dropped"` // of those, dropped by the server (as SlowDropped)
	Rejoins        int64 `json:"rejoins"`           // slots dialled again after their drop
	SkippedTicks   int64 `json:"skipped_ticks"`     // ticks not sent because the load was behind by more than a tick
	FaultsAsked    int64 `json:"faults_asked"`      // fault instants in the window (the schedule's, alike for every room)
	FaultsFired    int64 `json:"faults_fired"`      // of those, injected
	// The broadcast latency over the window (send instant to receipt), µs.
	LatCount, LatP50, LatP99, LatP999, LatMax int64
	Server                                    *Stats `json:"server,omitempty"`
	Err                                       string `json:"err,omitempty"`
}

// Truth says whether the clients' count equals the server's exactly, and
// every slow client was dropped and no other.
func (r *SoakResult) Truth() error {
	if r.Server == nil {
		return errors.New("no server count")
	}
	var errs []error
	if want := r.Server.Deliveries - r.Server.DroppedDeliveries; r.Deliveries != want {
		errs = append(errs, fmt.Errorf("clients read %d deliveries, the server wrote %d (%d, less %d to dropped clients)",
			r.Deliveries, want, r.Server.Deliveries, r.Server.DroppedDeliveries))
	}
	if r.SlowDropped != r.SlowInjected || r.HalfOpenDrop != r.HalfOpen || r.Server.Drops != r.SlowInjected+r.HalfOpen {
		errs = append(errs, fmt.Errorf("%d slow readers and %d half-open clients injected, %d and %d seen dropped, the server dropped %d",
			r.SlowInjected, r.HalfOpen, r.SlowDropped, r.HalfOpenDrop, r.Server.Drops))
	}
	if r.FaultsFired != r.FaultsAsked {
		errs = append(errs, fmt.Errorf("%d of %d faults fired (the rest waited for reading clients the room did not have)", r.FaultsFired, r.FaultsAsked))
	}
	if r.Reconnects != r.Resets+r.Oversize {
		errs = append(errs, fmt.Errorf("%d clients reset, %d closed for an oversize message, %d reconnected", r.Resets, r.Oversize, r.Reconnects))
	}
	return errors.Join(errs...)
}

// account closes the room's account at the window's end: nothing is in
// flight to a reading client then; the slow ones not yet dropped stay as
// they are (the truth then fails, saying so).
func (l *soakLoad) account(ctx context.Context) error {
	if err := l.settleSlow(ctx); err != nil {
		return err
	}
	st, err := FetchStats(ctx, l.room.Stats, 5*time.Second)
	if err != nil {
		return err
	}
	l.res.Server = &st
	for _, s := range l.slots {
		if s.sess != nil && !s.sess.slow.Load() {
			l.res.Deliveries += s.sess.got.Load()
		}
	}
	l.res.Deliveries += l.truth
	t := l.total.Snapshot()
	l.res.LatCount, l.res.LatP50, l.res.LatP99, l.res.LatP999, l.res.LatMax = t.Count, t.P50, t.P99, t.P999, t.Max
	return nil
}
