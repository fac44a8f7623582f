package worker

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// ReadPath is a run's per-message path (the handler a worker's connection
// reads into: scan, sequence accounting, silence, latency, counters) for one
// combined-stream connection outside a run, with no controller and no
// reporter: soak bench measures it.
type ReadPath struct{ s *slot }

// NewReadPath returns the read path of one connection to streams, as a
// worker of a plan with that one slot would run it.
func NewReadPath(tr transport.Transport, streams []string) (*ReadPath, error) {
	now := time.Now()
	plan := &wire.Plan{Version: wire.PlanVersion, Start: now, End: now.Add(24 * time.Hour), StallFactor: 10, StallRealTime: time.Minute,
		Slots: []wire.Slot{{ID: 0, Group: "bench", Subscribe: "url", Streams: streams}}}
	w, err := New(plan, tr, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("read path: %w", err)
	}
	s := w.slots[0]
	s.gotFirst = true // the first-data event of a connection: not part of the per-message cost
	return &ReadPath{s: s}, nil
}

// Handler is the handler to give Conn.Run.
func (r *ReadPath) Handler() transport.Handler { return r.s }

// SetClock sets the connection's read clock (transport.ReadClockOf of the
// dialer's connection); before Run.
// The read path publishes its counts before each read of that connection.
func (r *ReadPath) SetClock(c *transport.ReadClock) { r.s.hook(c) }

// ReadPathCounts is what the read path counted.
type ReadPathCounts struct {
	Messages, Bytes int64 // every data message, and its payload bytes
	Lost, Dup       int64 // sequence accounting over the subscriptions
}

// Counts returns the counts; after Run returned, on its goroutine.
func (r *ReadPath) Counts() ReadPathCounts {
	r.s.flush()
	c := ReadPathCounts{Messages: r.s.msgs.Load(), Bytes: r.s.bytes.Load()}
	for _, sb := range r.s.subs {
		c.Lost += sb.lost.Load()
		c.Dup += sb.dup.Load()
	}
	return c
}
