// Package worker is the worker role of a run: one library's connections for
// the controller's plan (dial, keepalive, reconnect, per-message accounting),
// reported as frames on stdout. It links neither the store nor the replay
// server: what it shares with the controller is in package wire.
package worker

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// Worker runs one column's connections for a plan: its library's, with the
// column's settings.
type Worker struct {
	plan   *wire.Plan
	name   string // the column's (the library's when the plan names none)
	tr     transport.Transport
	dialer *transport.Dialer // one per worker: socket options, proxy
	tls    *tls.Config       // trust for a wss target and an https proxy
	enc    codec.Encoding    // the plan's: asked for by subprotocol
	cost   burner            // the column's calibration cost per message
	fw     *wire.FrameWriter
	log    *slog.Logger
	epoch  time.Time // plan.Start on this process's monotonic clock
	// from is where this process's silences start, ns since epoch: the
	// window's start (0), or the instant Run began for a worker started inside
	// the window (restarted, or by a resume), which knows nothing of before.
	from int64
	// monoOff turns a transport.ReadClock's monotonic reading into ns since epoch.
	monoOff int64

	slots   []*slot
	events  chan wire.Event
	dropped atomic.Int64

	reconnects atomic.Int64
	connsUp    atomic.Int64

	runLat *sampler.Latency // whole run, reporter goroutine only
	secLat *sampler.Latency // one second, reporter goroutine only
	minLat *sampler.Latency // since the last hist frame, reporter goroutine only (then Run's, once it ended)
	// lastSec is the second of the last sec frame: the reporter goroutine's,
	// then Run's once it ended.
	lastSec int64

	tap func(slot int, p []byte) // tests only: sees every message as the library handed it over
}

// Run is the worker process (soak child worker): it runs the connections of
// plan.Column as plan says, and writes frames to out until it reads "stop" or
// EOF on stdin (the rest of stdin after the plan: see child.ReadSpec).
// After stopping it sends the final frame and returns when stdin reaches EOF
// (the controller samples the process in between).
func Run(ctx context.Context, plan *wire.Plan, stdin io.Reader, out io.Writer, log *slog.Logger) error {
	if plan.Version != wire.PlanVersion {
		return fmt.Errorf("plan version %d, want %d", plan.Version, wire.PlanVersion)
	}
	tr, err := transport.Lookup(plan.Column.Lib)
	if err != nil {
		return err
	}
	br := bufio.NewReader(stdin)
	w, err := New(plan, tr, out, log)
	if err != nil {
		return err
	}
	plan.Runtime.Apply() // this process only: New also runs inside tests
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		for {
			l, err := br.ReadString('\n')
			if strings.TrimSpace(l) == "stop" {
				stop()
			}
			if err != nil {
				stop()
				return
			}
		}
	}()
	if err := w.Run(ctx); err != nil {
		return err
	}
	select {
	case <-eof:
	case <-time.After(30 * time.Second):
		log.Warn("controller did not close stdin after the final frame; exiting")
	}
	return nil
}

// New prepares a worker; Run starts it.
func New(plan *wire.Plan, tr transport.Transport, out io.Writer, log *slog.Logger) (*Worker, error) {
	name := cmp.Or(plan.Column.Name, tr.Name())
	w := &Worker{
		plan:   plan,
		name:   name,
		tr:     tr,
		fw:     wire.NewFrameWriter(out),
		log:    log.With("lib", name),
		epoch:  plan.Epoch(),
		events: make(chan wire.Event, 4096),
		runLat: sampler.NewLatency(),
		secLat: sampler.NewLatency(),
		minLat: sampler.NewLatency(),
	}
	w.monoOff = transport.MonoOrigin(w.epoch)
	var err error
	if plan.Encoding != "" {
		if w.enc, err = codec.Parse(plan.Encoding); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	w.cost = newBurner(plan.Column.Settings.CalibrationCost) // calibrated before the first connection
	w.dialer = &transport.Dialer{RcvBuf: plan.RcvBuf, Timeout: plan.HandshakeTimeout}
	if plan.LocalAddr != "" {
		ip, err := netip.ParseAddr(plan.LocalAddr)
		if err != nil {
			return nil, fmt.Errorf("plan: local address: %w", err)
		}
		w.dialer.LocalAddr = &net.TCPAddr{IP: ip.AsSlice()}
	}
	if plan.Proxy != "" {
		if w.dialer.Proxy, err = endpoint.ParseProxy(plan.Proxy); err != nil {
			return nil, err
		}
	}
	if w.tls, err = transport.TLSConfig(plan.CAFiles, plan.ServerName); err != nil {
		return nil, err
	}
	w.dialer.ProxyTLS = w.tls
	for _, ps := range plan.Slots {
		s := &slot{w: w, Slot: ps, byName: make(map[string]*sub, len(ps.Streams)), lat: sampler.NewLatency(), cost: w.cost}
		for _, name := range ps.Streams {
			st, err := binance.ParseStream(name)
			if err != nil {
				return nil, fmt.Errorf("slot %d: %w", ps.ID, err)
			}
			sb := &sub{st: st, rule: st.Seq(), slot: s, stall: stallAfter(plan, st), prefix: binance.CombinedPrefix(name),
				mpref: binance.MsgpackPrefix(name)}
			s.subs = append(s.subs, sb)
			s.byName[name] = sb
		}
		s.dirty = make([]*sub, 0, len(s.subs))
		s.flushFn = s.flush
		w.slots = append(w.slots, s)
	}
	return w, nil
}

// Run runs the worker until ctx is done, then closes the connections and
// sends the final frames.
func (w *Worker) Run(ctx context.Context) error {
	w.from = max(int64(time.Since(w.epoch)), 0) // before the goroutines that read it start
	if err := w.fw.Send(&wire.Frame{Type: wire.FrameHello, Lib: w.tr.Name(), Module: w.tr.Module(),
		Version: w.tr.Version(), Pid: os.Getpid(), Go: runtime.Version(), Runtime: wire.CurrentRuntime().String()}); err != nil {
		return err
	}
	evDone := make(chan struct{})
	go func() {
		defer close(evDone)
		for ev := range w.events {
			if err := w.fw.Send(&wire.Frame{Type: wire.FrameEvent, Ev: &ev}); err != nil {
				w.log.Error("send event", "err", err)
			}
		}
	}()
	var wg sync.WaitGroup
	for _, s := range w.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx)
		}()
	}
	repDone := make(chan struct{})
	go func() {
		defer close(repDone)
		w.report(ctx)
	}()
	<-ctx.Done()
	wg.Wait()
	<-repDone
	w.sendMinute(w.lastSec) // the part minute since the last hist frame
	close(w.events)
	<-evDone
	// The slots' goroutines have ended: their gaps and dial counts are final.
	subs := w.subStats(time.Now(), nil)
	i := 0
	for _, s := range w.slots {
		for _, sb := range s.subs {
			withRanges(&subs[i], sb)
			i++
		}
	}
	if err := w.fw.Send(&wire.Frame{Type: wire.FrameSubs, Sec: w.sec(time.Now()), Subs: subs, Slots: w.slotStats()}); err != nil {
		return err
	}
	u, s, maxrss := sampler.Rusage()
	snap := w.runLat.Snapshot()
	return w.fw.Send(&wire.Frame{Type: wire.FrameFinal, Fin: &wire.FinalReport{
		RusageUser: u, RusageSys: s, MaxRSS: maxrss,
		LatN: snap.Count, LatP50: snap.P50, LatP99: snap.P99, LatP999: snap.P999, LatMax: snap.Max, LatNeg: snap.Negative,
		Dropped: w.dropped.Load(),
	}})
}

func (w *Worker) sec(now time.Time) int64 { return int64(now.Sub(w.epoch) / time.Second) }

func (w *Worker) emit(ev wire.Event) {
	if ev.TS == 0 {
		now := time.Now()
		ev.TS, ev.Mono = now.UnixNano(), int64(now.Sub(w.epoch))
	}
	select {
	case w.events <- ev:
	default:
		w.dropped.Add(1)
	}
}

// report sends a sec frame at every second boundary after the plan's start,
// then a subs frame when the loss accounts of a subscription or the dial
// account of a slot changed during the second (those only), and every
// plan.SubsEvery seconds (every subscription's totals). The controller thus
// holds every account to the second: a resume after it died continues from
// its last recorded second.
func (w *Worker) report(ctx context.Context) {
	var prevMsgs, prevBytes, prevWire, sentAcct int64
	k := int64(1)
	if now := w.sec(time.Now()); now >= 1 {
		k = now + 1
	}
	var ms runtime.MemStats
	for {
		t := time.NewTimer(time.Until(w.epoch.Add(time.Duration(k) * time.Second)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		now := time.Now()
		var msgs, bytes, wireN, lost, dup int64
		w.secLat.Reset()
		for _, s := range w.slots {
			msgs += s.msgs.Load()
			bytes += s.bytes.Load()
			wireN += s.wireBytes()
			w.secLat.Drain(s.lat)
			for _, sb := range s.subs {
				lost += sb.lost.Load()
				dup += sb.dup.Load()
				w.checkStall(sb, now)
			}
		}
		w.runLat.Merge(w.secLat)
		w.minLat.Merge(w.secLat)
		snap := w.secLat.Snapshot()
		runtime.ReadMemStats(&ms)
		st := &wire.SecStat{
			Msgs: msgs - prevMsgs, Bytes: bytes - prevBytes, MsgsTotal: msgs, BytesTotal: bytes,
			Goroutines: runtime.NumGoroutine(), HeapBytes: int64(ms.HeapAlloc),
			ConnsUp: int(w.connsUp.Load()), Reconnects: w.reconnects.Load(), Lost: lost, Dup: dup,
			LatN: snap.Count, LatP50: snap.P50, LatP99: snap.P99, LatMax: snap.Max,
			Dropped:   w.dropped.Load(),
			WireBytes: wireN - prevWire, WireBytesTotal: wireN,
		}
		prevMsgs, prevBytes, prevWire = msgs, bytes, wireN
		if err := w.fw.Send(&wire.Frame{Type: wire.FrameSec, Sec: k, Stat: st}); err != nil {
			w.log.Error("send sec frame", "err", err)
		}
		w.lastSec = k
		changed := func(sb *sub) bool { return sb.account() != sb.sent }
		if k%max(w.plan.SubsEvery, 1) == 0 {
			changed = nil // every subscription
		}
		subs := w.subStats(now, changed)
		var slots []wire.SlotStat
		if n := w.acctChanges(); n != sentAcct {
			slots, sentAcct = w.slotStats(), n
		}
		if len(subs) > 0 || slots != nil {
			if err := w.fw.Send(&wire.Frame{Type: wire.FrameSubs, Sec: k, Subs: subs, Slots: slots}); err != nil {
				w.log.Error("send subs frame", "err", err)
			}
		}
		if k%digestEvery == 0 {
			w.sendMinute(k)
		}
		k++
		if late := w.sec(time.Now()); late >= k { // skipped seconds (suspended process): say so by the gap
			k = late + 1
		}
	}
}

// digestEvery is the seconds between two hist frames: a minute, so that a
// day's latency is stored in 1,440 digests per library and a report can
// merge any stretch of the run from them.
const digestEvery = 60

// sendMinute sends the latency recorded since the last hist frame as a
// digest stamped with second sec, and starts the next; nothing when no
// latency was recorded. It allocates (the digest): once a minute, off the
// per-message path.
func (w *Worker) sendMinute(sec int64) {
	if w.minLat.Snapshot().Count == 0 { // negative values are counted too (as 1 µs)
		return
	}
	d := sampler.NewDigest()
	d.AddLatency(w.minLat)
	w.minLat.Reset()
	if err := w.fw.Send(&wire.Frame{Type: wire.FrameHist, Sec: sec, Hist: d.Encode()}); err != nil {
		w.log.Error("send hist frame", "err", err)
	}
}

// slotStats are the dial accounts of the slots as of now.
func (w *Worker) slotStats() []wire.SlotStat {
	out := make([]wire.SlotStat, 0, len(w.slots))
	for _, s := range w.slots {
		s.amu.Lock()
		st := wire.SlotStat{Slot: s.Slot.ID, Group: s.Slot.Group, Dials: s.dials, DialFails: s.dialFails, Unrepairable: s.unrepairable}
		for key, n := range s.statuses {
			if st.Statuses == nil {
				st.Statuses = map[string]int64{}
			}
			st.Statuses[key] = n
		}
		s.amu.Unlock()
		st.WireBytes = s.wireBytes()
		out = append(out, st)
	}
	return out
}

// acctChanges is how often the slots' dial accounts changed so far.
func (w *Worker) acctChanges() int64 {
	var n int64
	for _, s := range w.slots {
		n += s.acctN.Load()
	}
	return n
}

// withRanges adds the subscription's lost ranges to st and marks its loss
// account sent (reporter only, or after the slots ended).
func withRanges(st *wire.SubStat, sb *sub) {
	st.Gaps, st.GapAcross, st.GapOverflow, st.GapOverflowAcross = sb.ranges()
	sb.sent = sb.account()
}

// subStats are the totals of the subscriptions that pick selects (nil:
// every one). A subscription whose loss account changed since it was last
// sent carries its lost ranges (withRanges), and is then marked sent.
func (w *Worker) subStats(now time.Time, pick func(*sub) bool) []wire.SubStat {
	mono := int64(now.Sub(w.epoch))
	if end := int64(w.plan.End.Sub(w.plan.Start)); mono > end && end > 0 {
		mono = end // silence is measured inside the window
	}
	var out []wire.SubStat
	for _, s := range w.slots {
		for _, sb := range s.subs {
			if pick != nil && !pick(sb) {
				continue
			}
			ms := sb.maxSilence.Load()
			if open := mono - max(sb.lastSeen.Load(), w.from); open > ms {
				ms = open
			}
			out = append(out, wire.SubStat{
				Slot: s.Slot.ID, Group: s.Slot.Group, Stream: sb.st.Name,
				Msgs: sb.msgs.Load(), Bytes: sb.bytes.Load(),
				Lost: sb.lost.Load(), LostAcross: sb.lostAcross.Load(), Dup: sb.dup.Load(), OOO: sb.ooo.Load(), Regress: sb.regress.Load(),
				MaxSilenceMs: ms / 1e6, LastSeq: sb.lastSeq.Load(), Stalls: sb.stalls, Stalled: sb.stalled,
			})
			if sb.account() != sb.sent {
				withRanges(&out[len(out)-1], sb)
			}
		}
	}
	return out
}
