package chat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/wssoak/wssoak/internal/transport/rawws"
	"github.com/wssoak/wssoak/internal/wire"
)

// The clients of a server-side soak's room: their sessions (one connection
// each, in turn) and the read loop that checks every delivery.

// soakSlot is one client of a room over the run: its sessions in turn.
type soakSlot struct {
	idx    int
	seq    int64          // messages sent (the tick loop's)
	sendAt []atomic.Int64 // ns since the room's start, by seq % len
	sess   *soakSession
}

// soakSession is one connection of a slot.
type soakSession struct {
	slot    *soakSlot
	c       *rawws.Conn
	last    []int64 // by sender: the last sequence number read
	got     atomic.Int64
	target  atomic.Int64
	reached chan struct{}
	ready   chan struct{}
	done    chan struct{}
	stop    chan struct{}  // closed when the session is ended by the load
	slow    atomic.Bool    // slow_reader or half_open: no more I/O
	fault   wire.FaultKind // which of the two (set and read by the load's goroutine)
	ending  atomic.Bool    // reset or closed by the load: a read error is expected
	closing atomic.Bool    // sent an oversize message: the server's close is expected
	err     error
}

// end ends s's session: reset (RST) or closed; its count goes to the truth
// unless it was slow.
func (l *soakLoad) end(s *soakSlot, reset bool) {
	ss := s.sess
	if ss == nil {
		return
	}
	s.sess = nil
	ss.ending.Store(true)
	close(ss.stop)
	if tc, ok := ss.c.Conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = ss.c.Conn.Close()
	<-ss.done
	if ss.slow.Load() {
		l.res.SlowDeliveries += ss.got.Load()
	} else {
		l.truth += ss.got.Load()
	}
}

func (l *soakLoad) closeAll() {
	for _, s := range l.slots {
		if s.sess != nil {
			ss := s.sess
			_, _ = ss.c.Conn.Write(rawws.AppendFrame(nil, rawws.OpClose, true, []byte{0x03, 0xe8}, true))
			ss.ending.Store(true)
			select {
			case <-ss.stop:
			default:
				close(ss.stop)
			}
			_ = ss.c.Conn.Close()
			<-ss.done
		}
	}
}

// dial starts a new session of s (between ticks: nothing in flight).
func (l *soakLoad) dial(ctx context.Context, s *soakSlot) error {
	dctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	c, err := rawws.Dial(dctx, l.room.URL+"?name="+ClientName(s.idx), rawws.Options{NetDial: l.netDial, BufferSize: 64 << 10})
	if err != nil {
		return fmt.Errorf("client %s: %w", ClientName(s.idx), err)
	}
	ss := &soakSession{slot: s, c: c, last: make([]int64, len(l.slots)), reached: make(chan struct{}, 1),
		ready: make(chan struct{}), done: make(chan struct{}), stop: make(chan struct{})}
	for i, o := range l.slots {
		ss.last[i] = o.seq
	}
	s.sess = ss
	go func() {
		defer close(ss.done)
		ss.err = l.readLoop(ss)
	}()
	return nil
}

// rejoin starts a new session of s and waits for its ready (between ticks):
// a client back after a fault.
func (l *soakLoad) rejoin(ctx context.Context, s *soakSlot) error {
	if err := l.dial(ctx, s); err != nil {
		return err
	}
	return l.awaitReady(ctx, s.sess)
}

func (l *soakLoad) awaitReady(ctx context.Context, ss *soakSession) error {
	t := time.NewTimer(l.cfg.Timeout)
	defer t.Stop()
	select {
	case <-ss.ready:
		return nil
	case <-ss.done:
		return fmt.Errorf("client %s before ready: %w", ClientName(ss.slot.idx), ss.err)
	case <-t.C:
		return fmt.Errorf("client %s: no ready within %s", ClientName(ss.slot.idx), l.cfg.Timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitTick waits until every healthy client has read every broadcast sent.
func (l *soakLoad) awaitTick(ctx context.Context, healthy []*soakSlot) error {
	t := time.NewTimer(l.cfg.Timeout)
	defer t.Stop()
	for _, s := range healthy {
		ss := s.sess
		for ss.got.Load() < ss.target.Load() {
			select {
			case <-ss.reached:
			case <-ss.done:
				return fmt.Errorf("client %s: %w", ClientName(s.idx), cmpErr(ss.err))
			case <-t.C:
				return fmt.Errorf("client %s: read %d of %d broadcasts within %s", ClientName(s.idx), ss.got.Load(), ss.target.Load(), l.cfg.Timeout)
			case <-ctx.Done():
				return nil
			}
		}
	}
	return nil
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("connection ended")
	}
	return err
}

// readLoop reads a session's messages and checks every delivery.
func (l *soakLoad) readLoop(ss *soakSession) error {
	m, err := ss.c.Next(true)
	if err != nil {
		return fmt.Errorf("read ready: %w", err)
	}
	if string(m.Payload) != Ready {
		return fmt.Errorf("first message %q, want %q", trim(m.Payload), Ready)
	}
	close(ss.ready)
	reads := int64(-1)
	var now int64
	for {
		if ss.slow.Load() {
			<-ss.stop // a slow reader reads nothing more
			return nil
		}
		m, err := ss.c.Next(true)
		if err != nil {
			if ss.ending.Load() || ss.slow.Load() || ss.closing.Load() {
				return nil
			}
			return err
		}
		if r := ss.c.Counts().Reads; r != reads {
			reads, now = r, int64(time.Since(l.start))
		}
		from, seq, err := nextDelivery(m.Payload, ss.last)
		if err != nil {
			return err
		}
		ss.last[from] = seq
		snd := l.slots[from].sendAt
		l.lat.Record((now - snd[seq%int64(len(snd))].Load()) / 1000)
		l.read.Add(1)
		if ss.got.Add(1) == ss.target.Load() {
			select {
			case ss.reached <- struct{}{}:
			default:
			}
		}
	}
}
