package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// maxRestarts is how often a worker that died is started again.
const maxRestarts = 5

// drain is how long the controller lets workers read after the measured
// window ends, so that messages in flight at the end are still counted.
const drain = 2 * time.Second

// accounts are what a library's processes that ended (died, or whose
// controller crashed) counted: the base its next process counts from.
type accounts struct {
	rusageUser, rusageSys, sampled     float64 // over this worker's processes so far
	sampledAny                         bool    // whether sampled holds at least one /proc sample
	unreaped                           float64 // of sampled, processes never reaped (their rusage unknown)
	msgs, bytes, reconnects, lost, dup int64
	wire                               int64                    // WebSocket frame bytes read
	dropped                            int64                    // events the worker dropped (its channel full)
	subs                               map[subKey]wire.SubStat  // per subscription, cumulative
	gaps                               map[subKey]store.SubGaps // per subscription, the lost ranges
	slots                              map[int]store.SlotDials  // per slot, the dial account
}

// sampledCPU is the sampled CPU seconds, NaN when no sample was taken
// (not measured, not 0).
func (a *accounts) sampledCPU() float64 {
	if !a.sampledAny {
		return math.NaN()
	}
	return a.sampled
}

type workerProc struct {
	lib      string      // the column's name: the store's lib, the log file's, the tag's
	col      wire.Column // what the worker runs
	ch       *child.Process
	proc     *sampler.Proc
	hello    *wire.Frame
	final    *wire.FinalReport
	secs     map[int64]*wire.SecStat
	last     *wire.SecStat // the last complete second, for the progress line
	latest   *wire.SecStat // the latest frame received
	heard    time.Time     // when the worker last sent a frame
	procs    map[int64]ProcAt
	prev     ProcAt
	restarts int
	stalls   int // stall events, for the progress line
	exited   bool
	hung     bool    // killed by the watchdog
	finalCPU float64 // CPU seconds of the last sample, taken after the final frame
	finalOK  bool    // whether that sample was taken
	acc      accounts
	subs     map[subKey]wire.SubStat  // latest cumulative totals per subscription
	gaps     map[subKey]store.SubGaps // latest cumulative lost ranges per subscription
	slots    map[int]store.SlotDials  // latest cumulative dial accounts per slot
	lastSubs *wire.Frame              // the latest subs frame: the last one when the final report follows
	started  time.Time
	res      WorkerResult
	unsaved  *store.Worker // the last record, when storing it failed: retried at the end

	// the last subs frame, sent after the connections ended: gaps and dial accounts
	finalSubs  []wire.SubStat
	finalSlots []wire.SlotStat
}

func (c *controller) startWorker(w *workerProc) error {
	pl := c.plan.For(w.col)
	pl.LocalAddr = c.columnAddr(w.col.Name)
	if m, ok := wire.MonoNow(); ok {
		pl.StartMono = m + int64(time.Until(c.epoch))
	}
	// The column's runtime is the process's environment too, so that it
	// holds from the worker's first allocation, not only from its Apply.
	ch, err := child.Start(child.Options{Name: "worker " + w.lib, Exe: c.o.Exe, Args: []string{"child", "worker"}, Spec: pl,
		Log: filepath.Join(c.dir, "worker-"+w.lib+".log"), Env: pl.Runtime.Env()})
	if err != nil {
		return err
	}
	w.ch, w.exited, w.final, w.hello, w.hung, w.finalOK, w.lastSubs = ch, false, nil, nil, false, false, nil
	w.started = c.o.Now() // stored instant
	w.heard = time.Now()  // for the watchdog's monotonic durations
	w.prev = ProcAt{}
	if w.proc, err = sampler.NewProc(ch.Pid()); err != nil {
		c.o.Log.Warn("sample worker", "lib", w.lib, "err", err)
	}
	go func() {
		err := wire.ReadFrames(ch.Out(), func(f *wire.Frame) error {
			c.frames <- frameMsg{w, f}
			return nil
		})
		if err != nil {
			c.o.Log.Error("worker frames", "lib", w.lib, "err", err)
			_, _ = io.Copy(io.Discard, ch.Out())
		}
		<-ch.Done() // every frame read before the exit is handled
		c.exits <- w
	}()
	return nil
}

func (c *controller) killWorkers() {
	for _, w := range c.workers {
		if w.ch != nil {
			w.ch.Kill()
		}
	}
}

// loop runs the sampling ticks until the window plus drain has passed (or ctx
// is done), then stops the workers and collects their final accounts.
func (c *controller) loop(ctx context.Context, end time.Time) error {
	stopAt := c.epoch.Add(end.Sub(c.plan.Start) + drain)
	stopTimer := time.NewTimer(time.Until(stopAt))
	defer stopTimer.Stop()
	k := max(int64(time.Since(c.epoch)/time.Second)+1, 1) // > 1 when a crashed run resumes
	tick := time.NewTimer(time.Until(c.epoch.Add(time.Duration(k) * time.Second)))
	defer tick.Stop()
	stopping := false
	var stopDeadline <-chan time.Time
	beginStop := func(why string) {
		if stopping {
			return
		}
		stopping = true
		c.SetState(wire.StateDraining)
		c.o.Log.Info("stopping workers", "why", why)
		for _, w := range c.workers {
			if !w.exited {
				if err := w.ch.Send("stop"); err != nil {
					c.o.Log.Warn("stop worker", "lib", w.lib, "err", err)
				}
			}
		}
		stopDeadline = time.After(20 * time.Second)
	}
	ctxDone := ctx.Done()
	started := c.startTimer()
	var runErr error
	var serverDone <-chan struct{}
	if c.server != nil {
		serverDone = c.server.Done()
	}
	for {
		if stopping && c.allExited() {
			c.writeRows(k, true)
			return runErr
		}
		select {
		case <-ctxDone:
			ctxDone = nil
			beginStop("signal")
		case <-c.o.Abort:
			c.killWorkers()
			c.drainExits(5 * time.Second)
			c.writeRows(k, true)
			return errors.New("aborted by second signal")
		case <-started:
			started = nil
			if !stopping {
				c.SetState(wire.StateRunning)
			}
		case <-stopTimer.C:
			beginStop("window ended")
		case <-stopDeadline:
			for _, w := range c.workers {
				if !w.exited {
					c.o.Log.Error("worker did not stop in time; killing", "lib", w.lib)
					w.ch.Kill()
				}
			}
			stopDeadline = nil
		case now := <-tick.C:
			if !stopping {
				c.watchdog(now)
			}
			c.sample(k, now)
			c.writeComplete(k)
			c.writeRows(k, false)
			if k%faultPollEvery == 0 && !stopping {
				c.pollFaults()
			}
			if total := int64(c.plan.End.Sub(c.plan.Start) / time.Second); k <= total && (k%10 == 0 || k == total) {
				c.progress(k, total)
			}
			k++
			if late := int64(time.Since(c.epoch) / time.Second); late >= k {
				k = late + 1
			}
			tick.Reset(time.Until(c.epoch.Add(time.Duration(k) * time.Second)))
		case m := <-c.frames:
			c.onFrame(m.w, m.f)
		case w := <-c.exits:
			c.onExit(w, stopping)
		case w := <-c.restarts:
			c.restart(w, stopping)
		case log := <-c.faultLogs:
			c.faultPoll = false
			c.recordFaults(log, false)
		case p := <-c.netPlayed():
			c.recordNetFault(p)
		case <-serverDone:
			serverDone = nil
			if !stopping {
				runErr = fmt.Errorf("replay server exited during the run (see %s)", filepath.Join(c.dir, "server.log"))
				beginStop("replay server exited")
			}
		}
	}
}

func (c *controller) allExited() bool {
	for _, w := range c.workers {
		if !w.exited {
			return false
		}
	}
	return true
}

func (c *controller) drainExits(d time.Duration) {
	deadline := time.After(d)
	for !c.allExited() {
		select {
		case m := <-c.frames:
			c.onFrame(m.w, m.f)
		case w := <-c.exits:
			w.exited = true
		case <-deadline:
			return
		}
	}
}

// watchdog kills a worker that has sent nothing for WorkerTimeout: a worker
// sends a frame every second, so silence means the process is stuck. The
// kill is a finding (worker_hung); onExit records the exit and restarts it.
func (c *controller) watchdog(now time.Time) {
	for _, w := range c.workers {
		if w.exited || w.hung || now.Sub(w.heard) < c.o.WorkerTimeout {
			continue
		}
		w.hung = true
		c.batch.Events = append(c.batch.Events, store.Event{Lib: w.lib, TS: c.o.Now(), Sec: now.Sub(c.epoch).Seconds(),
			Kind: wire.EventWorkerHung, Slot: -1, Detail: fmt.Sprintf("no frame for %s; killed", now.Sub(w.heard).Round(time.Second))})
		c.o.Log.Error("worker hung; killing it", "lib", w.lib, "silent", now.Sub(w.heard).Round(time.Second))
		w.ch.Kill()
	}
}

func (c *controller) onExit(w *workerProc, stopping bool) {
	w.exited = true
	ru, rs, _ := w.ch.Rusage()
	code := w.ch.ExitCode()
	w.acc.rusageUser += ru
	w.acc.rusageSys += rs
	switch {
	case w.final != nil && w.finalOK:
		w.acc.sampled += w.finalCPU
		w.acc.sampledAny = true
	case w.prev.OK:
		w.acc.sampled += w.prev.CPUUser + w.prev.CPUSys // died, or the final sample failed: its last sample is all we saw
		w.acc.sampledAny = true
	}
	sampled := w.acc.sampledCPU() // interrupted before the first sample: not measured, not 0
	w.res.SampledCPU, w.res.RusageCPU = sampled, w.acc.rusageUser+w.acc.rusageSys
	rec := store.Worker{Lib: w.lib, Pid: w.ch.Pid(), Started: w.started, Ended: c.o.Now(), ExitCode: code,
		RusageUser: w.acc.rusageUser, RusageSys: w.acc.rusageSys, SampledCPU: sampled, CPUUnreaped: w.acc.unreaped}
	if w.hello != nil {
		rec.Module, rec.Version, rec.Runtime = w.hello.Module, w.hello.Version, w.hello.Runtime
	}
	// Events dropped: the final report's count when the process sent one,
	// else the last second's (sent every second, so a worker that died
	// still told what it dropped up to its last frame).
	dropped := w.acc.dropped
	if w.latest != nil {
		dropped = max(dropped, w.latest.Dropped)
	}
	if f := w.final; f != nil {
		rec.MaxRSS = f.MaxRSS
		rec.LatCount, rec.LatP50, rec.LatP99, rec.LatMax = f.LatN, f.LatP50, f.LatP99, f.LatMax
		rec.LatP999, rec.LatNeg = f.LatP999, f.LatNeg
		dropped = max(dropped, w.acc.dropped+f.Dropped)
	}
	rec.DroppedEvents = dropped
	w.unsaved = nil
	if err := c.db.UpsertWorker(rec); err != nil {
		c.o.Log.Warn("record worker", "lib", w.lib, "err", err)
		w.unsaved = &rec
	}
	if stopping && w.final != nil {
		return
	}
	// A worker that died on its own is a finding: record it, and restart it
	// with backoff; its counters continue from where the dead process left them.
	detail := fmt.Sprintf("exit code %d", code)
	if err := w.ch.Err(); err != nil {
		detail = err.Error()
	}
	c.batch.Events = append(c.batch.Events, store.Event{Lib: w.lib, TS: c.o.Now(), Sec: time.Since(c.epoch).Seconds(),
		Kind: wire.EventWorkerExit, Slot: -1, Code: code, Detail: detail + " (see " + filepath.Base(w.ch.LogPath()) + ")"})
	c.o.Log.Error("worker exited", "lib", w.lib, "detail", detail)
	w.res.Err = fmt.Errorf("worker %s died (%s) and was restarted %d times", w.lib, detail, w.restarts)
	w.acc.dropped = dropped
	if w.latest != nil {
		w.acc.msgs, w.acc.bytes = w.latest.MsgsTotal, w.latest.BytesTotal
		w.acc.reconnects, w.acc.lost, w.acc.dup = w.latest.Reconnects, w.latest.Lost, w.latest.Dup
		w.acc.wire = w.latest.WireBytesTotal
	}
	w.carryOver()
	if stopping || w.restarts >= maxRestarts {
		return
	}
	w.restarts++
	w.res.Restarts = w.restarts
	w.res.Err = fmt.Errorf("worker %s died (%s) and was restarted %d times", w.lib, detail, w.restarts)
	time.AfterFunc(time.Duration(w.restarts)*time.Second, func() { c.restarts <- w })
}

// restart starts a new process for a worker that died.
func (c *controller) restart(w *workerProc, stopping bool) {
	if stopping {
		return
	}
	if err := c.startWorker(w); err != nil {
		c.o.Log.Error("restart worker", "lib", w.lib, "err", err)
		return
	}
	c.batch.Events = append(c.batch.Events, store.Event{Lib: w.lib, TS: c.o.Now(), Sec: time.Since(c.epoch).Seconds(),
		Kind: wire.EventWorkerRestart, Slot: -1, Detail: fmt.Sprintf("restart %d", w.restarts)})
}
