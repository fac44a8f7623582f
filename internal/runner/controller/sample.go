package controller

import (
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/store"
)

// sample takes the process samples for second k (taken at epoch + k s).
func (c *controller) sample(k int64, now time.Time) {
	for _, w := range c.workers {
		if w.exited || w.proc == nil {
			continue
		}
		pa, err := w.prev.Next(w.proc, now)
		if err != nil {
			continue
		}
		w.prev = pa
		w.procs[k] = pa
	}
	c.SampleHost(k, now)
}

// writeRows writes one row per worker for every second before k still
// pending (at tick k, second k-1's frame may not have come, so it waits one
// tick at most). With all set, every pending second is written. Most seconds
// are written earlier, by writeComplete, as soon as both halves are in.
func (c *controller) writeRows(k int64, all bool) {
	for _, w := range c.workers {
		var secs []int64
		for s := range w.procs {
			secs = append(secs, s)
		}
		for s := range w.secs {
			if _, ok := w.procs[s]; !ok {
				secs = append(secs, s)
			}
		}
		slices.Sort(secs)
		for _, s := range secs {
			if s >= k && !all {
				continue
			}
			c.addRow(w, s)
		}
	}
	c.Flush()
}

// writeComplete writes second s at once when every running worker has both
// its halves (its frame for s and the process sample taken at s), so that a
// controller killed at any instant loses at most the second in progress.
func (c *controller) writeComplete(s int64) {
	n := 0
	for _, w := range c.workers {
		if w.exited {
			continue
		}
		_, okW := w.secs[s]
		_, okP := w.procs[s]
		if !okW || !okP {
			return
		}
		n++
	}
	if n == 0 {
		return
	}
	for _, w := range c.workers {
		if !w.exited {
			c.addRow(w, s)
		}
	}
	c.Flush()
}

// addRow moves second s of w (either half may be missing) into the batch.
func (c *controller) addRow(w *workerProc, s int64) {
	row := store.Sample{Lib: w.lib, Sec: s, TS: c.epoch.Add(time.Duration(s) * time.Second)}
	if st, ok := w.secs[s]; ok {
		w.last = st // the progress line shows the last written second
		row.HasWorker = true
		row.Msgs, row.Bytes, row.MsgsTotal, row.BytesTotal = st.Msgs, st.Bytes, st.MsgsTotal, st.BytesTotal
		row.Goroutines, row.HeapBytes, row.ConnsUp = st.Goroutines, st.HeapBytes, st.ConnsUp
		row.ReconnectsTotal, row.LostTotal, row.DupTotal = st.Reconnects, st.Lost, st.Dup
		row.LatP50, row.LatP99, row.LatMax = st.LatP50, st.LatP99, st.LatMax
		row.WireBytes, row.WireBytesTotal, row.DroppedTotal = st.WireBytes, st.WireBytesTotal, st.Dropped
	}
	if pa, ok := w.procs[s]; ok {
		pa.Fill(&row)
	}
	c.batch.Samples = append(c.batch.Samples, row)
	delete(w.secs, s)
	delete(w.procs, s)
}
