package chat

import (
	"context"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport/rawws"
	"github.com/wssoak/wssoak/internal/wire"
)

// The load of a server-side soak: a room per library, paced in ticks.

// soakLoad is one room's load.
type soakLoad struct {
	cfg     SoakConfig
	room    *SoakRoom
	emit    func(SoakRecord)
	start   time.Time
	slots   []*soakSlot
	lat     *sampler.Latency // the second's
	total   *sampler.Latency // the window's
	read    atomic.Int64     // deliveries read, every session
	res     SoakResult
	truth   int64 // deliveries of ended sessions never made slow
	slow    []*soakSession
	slowMin int64        // the server's Drops before the slow ones were made
	resetN  int          // rotation of the clients a fault picks
	sched   []soakFiring // every room's faults, in order (soakSchedule)
	fired   int          // sched[:fired] went in
	netDial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// RunSoak runs the load on every room until ctx ends or the window is over,
// then writes each room's end record. emit is called from several
// goroutines, one at a time.
func RunSoak(ctx context.Context, cfg SoakConfig, emit func(SoakRecord)) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.RcvBuf <= 0 {
		cfg.RcvBuf = 64 << 10
	}
	var mu sync.Mutex
	locked := func(r SoakRecord) {
		mu.Lock()
		defer mu.Unlock()
		emit(r)
	}
	sched, schedErr := soakSchedule(cfg)
	var wg sync.WaitGroup
	for i := range cfg.Rooms {
		wg.Go(func() {
			if schedErr != nil {
				locked(SoakRecord{T: RecordEvent, Lib: cfg.Rooms[i].Lib, At: time.Now(), Kind: wire.EventLoadError, Detail: schedErr.Error()})
				locked(SoakRecord{T: RecordEnd, Lib: cfg.Rooms[i].Lib, End: &SoakResult{Err: schedErr.Error()}})
				return
			}
			l := &soakLoad{cfg: cfg, room: &cfg.Rooms[i], emit: locked, start: time.Now(), lat: sampler.NewLatency(), total: sampler.NewLatency(),
				sched: sched, res: SoakResult{FaultsAsked: int64(len(sched))}}
			rcv := cfg.RcvBuf
			l.netDial = (&net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
				var serr error
				if err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcv) }); err != nil {
					return err
				}
				return serr
			}}).DialContext
			defer l.closeAll()
			err := l.run(ctx)
			if err != nil {
				l.res.Err = err.Error()
				locked(SoakRecord{T: RecordEvent, Lib: l.room.Lib, At: time.Now(), Kind: wire.EventLoadError, Detail: err.Error()})
			}
			res := l.res
			locked(SoakRecord{T: RecordEnd, Lib: l.room.Lib, End: &res})
			if cfg.Hold {
				<-ctx.Done()
			}
		})
	}
	wg.Wait()
}

func (l *soakLoad) run(ctx context.Context) error {
	cfg := l.cfg
	perTick := (cfg.Rate*int(SoakTick/time.Millisecond)+999)/1000 + 1
	ring := perTick/max(cfg.N, 1) + 2
	l.slots = make([]*soakSlot, cfg.N)
	for i := range l.slots {
		l.slots[i] = &soakSlot{idx: i, sendAt: make([]atomic.Int64, ring)}
	}
	for _, s := range l.slots {
		if err := l.dial(ctx, s); err != nil {
			return err
		}
	}
	for _, s := range l.slots {
		if err := l.awaitReady(ctx, s.sess); err != nil {
			return err
		}
	}
	end := cfg.Start.Add(cfg.Duration)
	var (
		tick     int64
		sent     int64 // into the room over the window
		sec      int64 = 1
		secRead  int64
		payload  = make([]byte, 0, max(cfg.Payload, 24))
		frames   []byte
		sendRR   int
		readBase = l.read.Load()
		total    = int64(cfg.Duration / time.Second)
	)
	for {
		at := cfg.Start.Add(time.Duration(tick) * SoakTick)
		if !at.Before(end) {
			break
		}
		if err := sleepUntil(ctx, at); err != nil {
			return nil // the run was stopped
		}
		if late := time.Since(at); late > SoakTick {
			// Behind (a slow tick, a busy machine): the ticks missed are
			// skipped, not sent in a burst, and counted.
			skip := int64(late / SoakTick)
			tick += skip
			l.res.SkippedTicks += skip
			sent = int64(cfg.Rate) * tick * int64(SoakTick/time.Millisecond) / 1000
			continue
		}
		// Seconds ended before this tick.
		for now := time.Now(); sec <= total && !now.Before(cfg.Start.Add(time.Duration(sec)*time.Second)); sec++ {
			r := l.read.Load() - readBase
			l.second(sec, r-secRead)
			secRead = r
		}
		if err := l.settleSlow(ctx); err != nil {
			return err
		}
		if err := l.injectDue(ctx, tick); err != nil {
			return err
		}
		tick++
		want := int64(cfg.Rate) * tick * int64(SoakTick/time.Millisecond) / 1000
		n := want - sent
		if n <= 0 {
			continue
		}
		healthy := l.healthy()
		for _, s := range healthy {
			s.sess.target.Add(n) // every healthy client reads every message
		}
		// Round robin over the healthy senders, a write per sender.
		per := make(map[*soakSlot]int, len(healthy))
		for range n {
			per[healthy[sendRR%len(healthy)]]++
			sendRR++
		}
		for _, s := range healthy {
			k := per[s]
			if k == 0 {
				continue
			}
			frames = frames[:0]
			now := int64(time.Since(l.start))
			for range k {
				s.seq++
				s.sendAt[s.seq%int64(len(s.sendAt))].Store(now)
				payload = fmtSeq(payload[:0], s.seq, cfg.Payload)
				frames = rawws.AppendFrame(frames, rawws.OpText, true, payload, true)
			}
			if _, err := s.sess.c.Conn.Write(frames); err != nil {
				return fmt.Errorf("client %s: write: %w", ClientName(s.idx), err)
			}
		}
		sent += n
		l.res.Sent += n
		if err := l.awaitTick(ctx, healthy); err != nil {
			return err
		}
	}
	// A room that fell behind at the end skipped the last ticks: their
	// faults go in now, so that none is thinned.
	if err := l.settleSlow(ctx); err != nil {
		return err
	}
	if err := l.injectDue(ctx, math.MaxInt64); err != nil {
		return err
	}
	if err := sleepUntil(ctx, end); err != nil {
		return nil
	}
	for now := time.Now(); sec <= total && !now.Before(cfg.Start.Add(time.Duration(sec)*time.Second)); sec++ {
		r := l.read.Load() - readBase
		l.second(sec, r-secRead)
		secRead = r
	}
	return l.account(ctx)
}

// injectDue injects, in order, the scheduled faults due before tick (those
// of ticks skipped included). One that finds too few reading clients (the
// slow ones not dropped yet) waits, and the ones after it, for a later tick.
func (l *soakLoad) injectDue(ctx context.Context, tick int64) error {
	for l.fired < len(l.sched) && l.sched[l.fired].tick <= tick {
		ok, err := l.inject(ctx, l.sched[l.fired].f)
		if err != nil || !ok {
			return err
		}
		l.fired++
		l.res.FaultsFired++
	}
	return nil
}

// fmtSeq appends seq in decimal, padded with 'x' to size bytes.
func fmtSeq(b []byte, seq int64, size int) []byte {
	b = appendInt(b, seq)
	for len(b) < size {
		b = append(b, 'x')
	}
	return b
}

func appendInt(b []byte, v int64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// second writes the clients' second sec.
func (l *soakLoad) second(sec, read int64) {
	h := sampler.NewLatency()
	h.Drain(l.lat)
	snap := h.Snapshot()
	l.total.Merge(h)
	up := 0
	for _, s := range l.slots {
		if s.sess != nil {
			up++
		}
	}
	l.emit(SoakRecord{T: RecordSec, Lib: l.room.Lib, Sec: sec, Deliveries: read, LatP50: snap.P50, LatP99: snap.P99, LatMax: snap.Max,
		Up: up, Reconnects: l.res.Reconnects})
}

// healthy returns the slots whose client reads.
func (l *soakLoad) healthy() []*soakSlot {
	var out []*soakSlot
	for _, s := range l.slots {
		if s.sess != nil && !s.sess.slow.Load() {
			out = append(out, s)
		}
	}
	return out
}
