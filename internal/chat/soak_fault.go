package chat

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/transport/rawws"
	"github.com/wssoak/wssoak/internal/wire"
)

// The faults the load of a server-side soak injects between two ticks.

// pick returns k healthy slots, rotating over the room, one healthy slot
// left out at least; nil when the room has too few now (slow clients not
// yet dropped): the fault then waits, it is not thinned.
func (l *soakLoad) pick(k int) []*soakSlot {
	h := l.healthy()
	if k < 1 || k > len(h)-1 {
		return nil
	}
	var out []*soakSlot
	for i := range k {
		out = append(out, h[(l.resetN+i)%len(h)])
	}
	l.resetN += k
	return out
}

// inject applies a fault between two ticks; false when the room has too
// few reading clients for it now.
func (l *soakLoad) inject(ctx context.Context, f SoakFault) (bool, error) {
	targets := l.pick(f.N)
	if len(targets) == 0 {
		return false, nil
	}
	return true, l.apply(ctx, f, targets)
}

// apply applies a fault to its targets.
func (l *soakLoad) apply(ctx context.Context, f SoakFault, targets []*soakSlot) error {
	names := make([]string, len(targets))
	for i, s := range targets {
		names[i] = ClientName(s.idx)
	}
	l.emit(SoakRecord{T: RecordEvent, Lib: l.room.Lib, At: time.Now(), Kind: wire.EventFault, Fault: f.Kind, Count: len(targets),
		Detail: fmt.Sprintf("%s of %d clients: %v", f.Kind, len(targets), names)})
	switch f.Kind {
	case wire.FaultReset:
		st0, err := FetchStats(ctx, l.room.Stats, 0)
		if err != nil {
			return err
		}
		for _, s := range targets {
			l.end(s, true)
		}
		l.res.Resets += int64(len(targets))
		resetAt := time.Now()
		// The server must have seen them leave before anything else is sent
		// (else it may count a write to a connection already reset).
		if err := l.awaitStats(ctx, func(st Stats) bool { return leaves(st) >= leaves(st0)+int64(len(targets)) }); err != nil {
			return fmt.Errorf("reset %v: the server did not see them leave: %w", names, err)
		}
		for _, s := range targets {
			if err := l.rejoin(ctx, s); err != nil {
				return err
			}
			l.res.Reconnects++
		}
		l.emit(SoakRecord{T: RecordEvent, Lib: l.room.Lib, At: time.Now(), Kind: wire.EventReconnect, Count: len(targets),
			DurMs: float64(time.Since(resetAt).Microseconds()) / 1000, Detail: fmt.Sprintf("%d clients reset and back: %v", len(targets), names)})
	case wire.FaultOversize:
		if err := l.oversize(ctx, f, targets, names); err != nil {
			return err
		}
	case wire.FaultSlowReader, wire.FaultHalfOpen:
		// Both cease all I/O on the socket and keep it open (no close, no
		// FIN): on loopback a half-open peer is exactly that.
		if len(l.slow) == 0 {
			st0, err := FetchStats(ctx, l.room.Stats, 0)
			if err != nil {
				return err
			}
			l.slowMin = st0.Drops
		}
		for _, s := range targets {
			s.sess.fault = f.Kind
			s.sess.slow.Store(true)
			l.slow = append(l.slow, s.sess)
		}
		if f.Kind == wire.FaultHalfOpen {
			l.res.HalfOpen += int64(len(targets))
		} else {
			l.res.SlowInjected += int64(len(targets))
		}
	default:
		return fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	return nil
}

// oversize has each target send one message of f.Size bytes; the server must
// close every one of them and broadcast none; they then dial again.
func (l *soakLoad) oversize(ctx context.Context, f SoakFault, targets []*soakSlot, names []string) error {
	st0, err := FetchStats(ctx, l.room.Stats, 0)
	if err != nil {
		return err
	}
	at := time.Now()
	frame := rawws.AppendFrame(nil, rawws.OpText, true, make([]byte, f.Size), true)
	for _, s := range targets {
		s.sess.closing.Store(true)
		// The server may close before it has read it all: a failed write is expected.
		_ = s.sess.c.Conn.SetWriteDeadline(time.Now().Add(l.cfg.Timeout))
		_, _ = s.sess.c.Conn.Write(frame)
	}
	t := time.NewTimer(l.cfg.Timeout)
	defer t.Stop()
	codes := make([]int, len(targets))
	for i, s := range targets {
		select {
		case <-s.sess.done:
			codes[i] = s.sess.c.Counts().CloseCode // 0: the connection ended without a close frame
		case <-t.C:
			return fmt.Errorf("oversize: client %s not closed by the server within %s", ClientName(s.idx), l.cfg.Timeout)
		case <-ctx.Done():
			return nil
		}
	}
	if err := l.awaitStats(ctx, func(st Stats) bool { return leaves(st) >= leaves(st0)+int64(len(targets)) }); err != nil {
		return fmt.Errorf("oversize %v: the server did not see them leave: %w", names, err)
	}
	st1, err := FetchStats(ctx, l.room.Stats, 0)
	if err != nil {
		return err
	}
	if st1.Broadcasts != st0.Broadcasts {
		return fmt.Errorf("oversize %v: the server broadcast %d messages while nothing but the oversize ones was sent", names, st1.Broadcasts-st0.Broadcasts)
	}
	l.res.Oversize += int64(len(targets))
	for _, s := range targets {
		l.end(s, false)
		if err := l.rejoin(ctx, s); err != nil {
			return err
		}
		l.res.Reconnects++
	}
	l.emit(SoakRecord{T: RecordEvent, Lib: l.room.Lib, At: time.Now(), Kind: wire.EventReconnect, Count: len(targets), Codes: codes,
		DurMs: float64(time.Since(at).Microseconds()) / 1000, Detail: fmt.Sprintf("%d clients closed by the server for a %d-byte message (close codes %v) and back: %v", len(targets), f.Size, codes, names)})
	return nil
}

// settleSlow checks whether the server dropped the slow clients; when it
// has dropped every one (and no other), their slots dial again.
func (l *soakLoad) settleSlow(ctx context.Context) error {
	if len(l.slow) == 0 {
		return nil
	}
	st, err := FetchStats(ctx, l.room.Stats, 0)
	if err != nil {
		return err
	}
	if st.Drops < l.slowMin+int64(len(l.slow)) {
		return nil // not yet
	}
	var names, want []string
	for _, s := range l.slow {
		want = append(want, ClientName(s.slot.idx))
	}
	if st.Drops > l.slowMin+int64(len(l.slow)) {
		return fmt.Errorf("the server dropped %d clients, %d were slow: %v", st.Drops-l.slowMin, len(l.slow), want)
	}
	if len(st.Dropped) == int(st.Drops) { // the names are all there (at most 100 are kept)
		names = slices.Clone(st.Dropped[len(st.Dropped)-len(l.slow):])
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			return fmt.Errorf("the server dropped %v, the slow clients were %v", names, want)
		}
	}
	// A dropped event per fault kind, so that each is counted apart.
	for _, kind := range []wire.FaultKind{wire.FaultSlowReader, wire.FaultHalfOpen} {
		var of []string
		for _, s := range l.slow {
			if s.fault == kind {
				of = append(of, ClientName(s.slot.idx))
			}
		}
		if len(of) == 0 {
			continue
		}
		if kind == wire.FaultHalfOpen {
			l.res.HalfOpenDrop += int64(len(of))
		} else {
			l.res.SlowDropped += int64(len(of))
		}
		l.emit(SoakRecord{T: RecordEvent, Lib: l.room.Lib, At: time.Now(), Kind: wire.EventDropped, Fault: kind, Count: len(of),
			Detail: fmt.Sprintf("the server dropped exactly the %d %s clients %v (of %d it dropped now: %v)", len(of), kind, of, len(l.slow), want)})
	}
	slow := l.slow
	l.slow = nil
	for _, ss := range slow {
		s := ss.slot
		l.end(s, false)
		if err := l.rejoin(ctx, s); err != nil {
			return err
		}
		l.res.Rejoins++
	}
	return nil
}

// leaves is the clients that left the room on their own (a drop is a leave
// too, and a slow client may be dropped while the load waits for others).
func leaves(st Stats) int64 { return st.Left - st.Drops }

// awaitStats polls the server's counts until ok, within the timeout.
func (l *soakLoad) awaitStats(ctx context.Context, ok func(Stats) bool) error {
	deadline := time.Now().Add(l.cfg.Timeout)
	for {
		st, err := FetchStats(ctx, l.room.Stats, 0)
		if err != nil {
			return err
		}
		if ok(st) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", l.cfg.Timeout)
		}
		if err := sleepUntil(ctx, time.Now().Add(2*time.Millisecond)); err != nil {
			return err
		}
	}
}
