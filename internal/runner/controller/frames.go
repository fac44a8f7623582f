package controller

import (
	"time"

	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

type frameMsg struct {
	w *workerProc
	f *wire.Frame
}

func (c *controller) onFrame(w *workerProc, f *wire.Frame) {
	w.heard = time.Now()
	switch f.Type {
	case wire.FrameHello:
		w.hello = f
		// The record keeps the CPU accounts of the library's earlier
		// processes: a resume after a crash reads them back.
		if err := c.db.UpsertWorker(store.Worker{Lib: w.lib, Module: f.Module, Version: f.Version, Pid: f.Pid, Started: w.started,
			DroppedEvents: w.acc.dropped, Runtime: f.Runtime, RusageUser: w.acc.rusageUser, RusageSys: w.acc.rusageSys,
			SampledCPU: w.acc.sampledCPU(), CPUUnreaped: w.acc.unreaped}); err != nil {
			c.o.Log.Warn("record worker", "lib", w.lib, "err", err)
		}
	case wire.FrameSec:
		if st := f.Stat; st != nil {
			st.MsgsTotal += w.acc.msgs // continue across a restart
			st.BytesTotal += w.acc.bytes
			st.Reconnects += w.acc.reconnects
			st.Lost += w.acc.lost
			st.Dup += w.acc.dup
			st.Dropped += w.acc.dropped
			st.WireBytesTotal += w.acc.wire
			w.secs[f.Sec] = st
			w.latest = st
			c.writeComplete(f.Sec)
		}
	case wire.FrameSubs:
		w.lastSubs = f
		for _, s := range f.Subs {
			if g, changed := w.carryGaps(s); changed {
				c.batch.Gaps = append(c.batch.Gaps, g)
			}
			s = w.carrySub(s)
			c.batch.StreamSamples = append(c.batch.StreamSamples, store.StreamSample{Lib: w.lib, Slot: s.Slot, Group: s.Group,
				Stream: s.Stream, Sec: f.Sec, MsgsTotal: s.Msgs, BytesTotal: s.Bytes, LostTotal: s.Lost, DupTotal: s.Dup,
				OOOTotal: s.OOO, MaxSilenceMs: s.MaxSilenceMs, LastSeq: s.LastSeq, StallsTotal: s.Stalls, Stalled: s.Stalled,
				RegressTotal: s.Regress, LostAcrossTotal: s.LostAcross})
		}
		for _, s := range f.Slots {
			d := w.carrySlot(s)
			d.Interim = true // the end's account replaces it
			c.batch.Dials = append(c.batch.Dials, d)
		}
	case wire.FrameEvent:
		ev := f.Ev
		if ev == nil {
			return
		}
		ts := time.Unix(0, ev.TS)
		ev.Detail = endpoint.Mask(ev.Detail) // a library's error text may quote a URL
		c.batch.Events = append(c.batch.Events, store.Event{Lib: w.lib, TS: ts, Sec: float64(ev.Mono) / 1e9,
			Kind: ev.Kind, Slot: ev.Slot, Group: ev.Group, Stream: ev.Stream, Code: ev.Code, Detail: ev.Detail, DurMs: ev.DurMs})
		if ev.Kind == wire.EventStall {
			w.stalls++
		}
		if ev.Kind == wire.EventDisconnected || ev.Kind == wire.EventDialError || ev.Kind == wire.EventUnrepairable {
			c.o.Log.Info("worker event", "lib", w.lib, "kind", ev.Kind, "slot", ev.Slot, "code", ev.Code, "detail", ev.Detail)
		}
	case wire.FrameHist:
		// Checked before it is stored: a digest the report cannot decode
		// would fail every report of the run.
		if _, err := sampler.DecodeDigest(f.Hist); err != nil {
			c.o.Log.Warn("latency digest", "lib", w.lib, "sec", f.Sec, "err", err)
			return
		}
		c.batch.Digests = append(c.batch.Digests, store.LatencyDigest{Lib: w.lib, Sec: f.Sec, Digest: f.Hist})
	case wire.FrameFinal:
		w.final = f.Fin
		// The subs frame just before is the last, sent once the connections
		// ended: its gaps and dial accounts are final.
		if w.lastSubs != nil {
			w.finalSubs, w.finalSlots = w.lastSubs.Subs, w.lastSubs.Slots
		}
		// The worker has stopped its connections and waits for us: take the
		// last process sample now, then let it exit and compare with the kernel.
		if w.proc != nil {
			if s, err := w.proc.Sample(); err == nil {
				w.finalCPU, w.finalOK = s.CPUUser+s.CPUSys, true
			}
		}
		w.ch.CloseStdin()
	}
}
