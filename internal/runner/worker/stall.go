package worker

import (
	"fmt"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

// stallAfter is the silence after which a subscription of the given stream counts as stalled.
// A stream Binance serves silently (retired or unknown) has no cadence to
// wait for: it stalls after StallMin, so the run reports it early.
func stallAfter(p *wire.Plan, st binance.Stream) time.Duration {
	if silentByDesign(st) {
		return p.StallMin
	}
	if st.Period > 0 {
		return max(time.Duration(float64(st.Period)*p.StallFactor), p.StallMin)
	}
	return p.StallRealTime
}

// silentByDesign: Binance accepts a subscription to a retired or unknown
// stream and never sends anything on it.
func silentByDesign(st binance.Stream) bool { return st.Retired || st.Kind == binance.KindUnknown }

// checkStall records a stall when a subscription stays silent past its threshold,
// and its end when data comes back. Silence before the window starts, or before
// this process started, does not count.
func (w *Worker) checkStall(sb *sub, now time.Time) {
	mono := int64(now.Sub(w.epoch))
	if sb.stall <= 0 || mono > int64(w.plan.End.Sub(w.plan.Start)) {
		return // the source stops at the end of the window: that is no stall
	}
	silence := mono - max(sb.lastSeen.Load(), w.from)
	switch {
	case !sb.stalled && silence > int64(sb.stall):
		sb.stalled, sb.stalledAt = true, mono
		sb.stalls++
		w.emit(wire.Event{Kind: wire.EventStall, Slot: sb.slot.Slot.ID, Group: sb.slot.Slot.Group, Stream: sb.st.Name,
			Detail: fmt.Sprintf("silent %.1fs (threshold %s)", float64(silence)/1e9, sb.stall)})
	case sb.stalled && silence <= int64(sb.stall):
		sb.stalled = false
		w.emit(wire.Event{Kind: wire.EventStallEnd, Slot: sb.slot.Slot.ID, Group: sb.slot.Slot.Group, Stream: sb.st.Name,
			DurMs: float64(mono-sb.stalledAt) / 1e6})
	}
}
