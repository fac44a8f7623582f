package controller

import (
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// checkWire compares, per library and slot, the frame bytes each worker
// read with what the replay server wrote to that library's connections
// (server, one row per connection tag), and records the result as a
// wire_truth event per library (the end table's "Wire bytes: client =
// server" row computes the same from the stored counts). A worker without a
// final account (it died at the end) is left out; one that restarted is
// not compared (its slot counts cover the last process only), and says so.
// A resumed run's server is the one started by the resume: the bytes read
// since then are compared with its counts, and the event says so.
func (c *controller) checkWire(server []store.ServerWire) {
	var dials []store.SlotDials
	restarts := map[string]int{}
	for _, w := range c.workers {
		if w.finalSubs == nil {
			continue
		}
		restarts[w.lib] = w.restarts
		for _, s := range w.finalSlots {
			dials = append(dials, store.SlotDials{Lib: w.lib, Slot: s.Slot, Group: s.Group, WireBytes: s.WireBytes})
		}
	}
	for _, w := range measure.CheckWire(server, dials) {
		w.From = c.resumedAt
		detail := w.String()
		if n := restarts[w.Lib]; n > 0 {
			detail = measure.Restarted(n)
			c.o.Log.Info("wire bytes: "+detail, "lib", w.Lib)
		} else if w.OK() {
			c.o.Log.Info("wire bytes: client = server", "lib", w.Lib, "slots", w.Slots, "bytes", w.Client,
				"echo_read", w.EchoRead, "echo_unread", w.EchoUnread, "echo_bytes", w.EchoBytes)
		} else {
			c.o.Log.Warn("wire bytes: client ≠ server", "lib", w.Lib, "detail", detail)
		}
		c.batch.Events = append(c.batch.Events, store.Event{Lib: w.Lib, TS: c.o.Now(), Sec: time.Since(c.epoch).Seconds(),
			Kind: wire.EventWireTruth, Slot: -1, Detail: detail})
	}
}
