package measure

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Results are every measure's values for the columns of one run.
type Results struct {
	RunID   string
	Seconds int64  // the planned window
	Side    string // SideClient, or SideServer for a server-side soak
	Cols    []Dims // one per library, in column order (Rank)
	Rows    []Row  // every measure with a Value, in catalogue order, hidden ones included
	// Series are what each column recorded second by second and at each
	// fault, in column order: what the ranking compares.
	Series []*Series
}

// Row is one measure across the columns.
type Row struct {
	Measure *Measure
	Title   string // as shown for this run (Measure.Title, or its label)
	Parts   []Part // the values of each cell (Cell.Vals): Measure.Parts, or the run's
	Cells   []Cell // one per column of Results.Cols
}

// Libs returns the libraries of the columns, in column order.
func (r *Results) Libs() []string {
	out := make([]string, len(r.Cols))
	for i, d := range r.Cols {
		out[i] = d.Lib
	}
	return out
}

// Row returns the row of the measure with that id, or nil.
func (r *Results) Row(id string) *Row {
	for i := range r.Rows {
		if r.Rows[i].Measure.ID == id {
			return &r.Rows[i]
		}
	}
	return nil
}

// Get returns the value of measure id for the column d.
func (r *Results) Get(id string, d Dims) (Cell, bool) {
	row := r.Row(id)
	if row == nil {
		return Cell{}, false
	}
	i := slices.Index(r.Cols, d)
	if i < 0 {
		return Cell{}, false
	}
	return row.Cells[i], true
}

// runInfo is what the measures of every column share.
type runInfo struct {
	seconds        int64    // planned window; 0: open-ended
	groups         []string // connection groups in plan order
	latencySuspect bool     // latency measured across an unsynchronised clock
	signals        bool     // the database records dropped events and the lost split (store.HasSignals)
	lastSec        int64    // the last second of the window the run lived through (endSec), or recorded for any library
	noEnd          bool     // the run is recorded as running after its window, or no process writes it: it did not record its end
	outages        []store.Event
	resumedAt      float64 // the second of the window the last resume began at; 0: never resumed
	server         bool    // a server-side soak: the columns are chat servers
}

// column is what the streaming pass collected for one column (library).
type column struct {
	run    *runInfo
	worker store.Worker
	series *Series
	// digest is the run's latency merged from the stored minute digests
	// (nil: none stored, a database before them or a run without latency).
	digest *sampler.Digest
	// sent compares each subscription's messages with what the replay
	// server sent (nil: no server counts, a live target).
	sent *SentCheck
	// dropKinds are the kinds of the faults that hit the column after
	// which the server's counts and the client's may rightly differ.
	dropKinds []wire.FaultKind

	// samples
	hasWorker               bool
	msgsMax, bytesMax       int64
	wireMax                 int64 // WebSocket frame bytes read, the latest total (0 before schemaWire)
	rateSum, ratePeak, rate int64 // messages, the highest count and the number of one-second counts
	prevSec, prevTotal      int64 // the previous sample of the window with a worker half (prevOK)
	prevOK                  bool
	rssFirst, rssLast       int64
	rssPeak                 int64
	rssN                    int
	cpuSum                  float64
	cpuN                    int
	workerSecs              int64 // seconds of the window with a worker row

	// the subscriptions' latest totals
	streams        int
	seqStreams     int // of them, those that received a message: their sequence was checked
	lost, dup      int64
	lostAcross     int64 // of lost, found at a first message after a reconnect (the worker's count)
	silenceMs      int64
	silenceStream  string
	stalledStreams []string

	// events
	faults        int
	reconnects    map[string]int // by connection group
	disconnects   int
	recDurMs      []float64
	errors        int
	stalls        int
	unrepairSlots map[int]bool
	negotiated    map[string]int // connections by the server's Sec-WebSocket-Extensions answer ("" none)
	wireCheck     *WireCheck     // the frame bytes read against the replay server's written (nil: no server counts)
	restarts      int            // worker_restart events (since the last resume)
	events        int            // of the library's connections (any kind)

	// a chat server's (server-side soak)
	truth                   *store.Event             // its end account (nil: none came)
	dropped                 map[wire.FaultKind]int64 // clients dropped, by the fault that made them
	writes, writeDeliveries int64                    // write syscalls and deliveries over the window's seconds that have both

	// lost charges and dial accounts
	charges                int
	chargedLib, chargedSrc int64
	unsplit                int // charges recorded without the split (before schemaSignals)
	// the charges split by where the ids were lost
	acrossLost, acrossLib, acrossSrc int64
	connLost, connLib, connSrc       int64
	dialSlots                        int
	dials, dialFails                 int64
	statuses                         map[string]int64

	net netFinding // the blackholes of a linked run (network.go)
}

// Compute reads the run in db in one pass — the samples and events streamed
// row by row, the subscriptions' latest totals, the lost charges and dial
// accounts (one row per subscription or slot) — and computes every measure
// of the catalogue for every library that has a worker row.
func Compute(db *store.DB) (*Results, error) { return computeAt(db, time.Now()) }

// computeAt is Compute with now the instant the run's window is judged at
// (endSec).
func computeAt(db *store.DB, now time.Time) (*Results, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	workers, err := db.Workers()
	if err != nil {
		return nil, err
	}
	clock, err := db.ClockState(run)
	if err != nil {
		return nil, err
	}
	ri := &runInfo{seconds: int64(run.Planned.Seconds()), groups: PlanGroups(run.Settings["plan"]),
		latencySuspect: clock.LatencySuspect(), signals: db.HasSignals(), server: SideOf(run) == SideServer}
	res := &Results{RunID: run.ID, Seconds: ri.seconds, Side: SideOf(run)}
	cols := map[string]*column{}
	for _, w := range workers {
		cols[w.Lib] = &column{run: ri, worker: w, reconnects: map[string]int{}, unrepairSlots: map[int]bool{},
			statuses: map[string]int64{}, series: newSeries(ri.seconds, ri.latencySuspect), dropped: map[wire.FaultKind]int64{}}
		res.Cols = append(res.Cols, Dims{Lib: w.Lib})
	}
	slices.SortStableFunc(res.Cols, func(a, b Dims) int { return Rank(a.Lib) - Rank(b.Lib) })

	var maxSec int64
	err = db.EachSample(func(s *store.Sample) error {
		c := cols[s.Lib]
		if c == nil {
			return nil
		}
		maxSec = max(maxSec, s.Sec)
		c.sample(s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ri.lastSec = maxSec
	if ri.seconds > 0 {
		ri.lastSec = min(maxSec, ri.seconds)
		if end, ok := endSec(run, now, db.Owned()); ok {
			ri.lastSec = max(ri.lastSec, end)
			ri.noEnd = run.Status == store.StatusRunning
		}
	}
	for _, c := range cols {
		c.series.trim(ri.lastSec)
	}
	streams, err := db.LatestStreamSamples()
	if err != nil {
		return nil, err
	}
	for i := range streams {
		if c := cols[streams[i].Lib]; c != nil {
			c.stream(&streams[i])
		}
	}
	err = db.EachEvent(func(e *store.Event) error {
		if e.Lib == "" && (e.Kind == wire.EventOutage || e.Kind == wire.EventWriteFailed || e.Kind == wire.EventMissing) {
			ri.outages = append(ri.outages, *e)
		}
		if e.Lib == "" && e.Kind == wire.EventOutage {
			// A resume: the replay server and the workers start anew, and the
			// wire check covers what comes after (restarts before it aside).
			ri.resumedAt = e.Sec + e.DurMs/1000
			for _, c := range cols {
				c.restarts = 0
			}
		}
		if c := cols[e.Lib]; c != nil {
			c.event(e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	charges, err := db.LostCharges()
	if err != nil {
		return nil, err
	}
	for _, l := range charges {
		if c := cols[l.Lib]; c != nil {
			c.charges++
			c.chargedLib += l.Library
			c.chargedSrc += l.Source
			if !l.Split {
				c.unsplit++
				continue
			}
			c.acrossLost += l.LostAcross
			c.acrossLib += l.LibraryAcross
			c.acrossSrc += l.SourceAcross
			c.connLost += l.LostConnected
			c.connLib += l.LibraryConnected
			c.connSrc += l.SourceConnected
		}
	}
	dials, err := db.SlotDialAccounts()
	if err != nil {
		return nil, err
	}
	for _, d := range dials {
		if c := cols[d.Lib]; c != nil {
			c.dial(d)
		}
	}
	server, err := db.ServerWire()
	if err != nil {
		return nil, err
	}
	if len(server) > 0 { // the local replay server's counts; none for a live target
		for _, w := range CheckWire(server, dials) {
			if c := cols[w.Lib]; c != nil {
				w.From = ri.resumedAt
				c.wireCheck = &w
			}
		}
	}
	sent, err := db.ServerCounts()
	if err != nil {
		return nil, err
	}
	if len(sent) > 0 {
		for lib, sc := range CheckSent(sent, streams) {
			if c := cols[lib]; c != nil {
				c.sent = sc
			}
		}
	}
	lat, err := digests(db)
	if err != nil {
		return nil, err
	}
	for lib, d := range lat {
		if c := cols[lib]; c != nil {
			c.digest = d
		}
	}

	for _, m := range Catalogue {
		if m.Value == nil || !m.Of(res.Side) {
			continue
		}
		row := Row{Measure: m, Title: m.Title, Parts: m.Parts}
		if m.label != nil {
			row.Title = m.label(ri)
		}
		if m.parts != nil {
			row.Parts = m.parts(ri)
		}
		for _, d := range res.Cols {
			row.Cells = append(row.Cells, m.Value(cols[d.Lib]))
		}
		res.Rows = append(res.Rows, row)
	}
	for _, d := range res.Cols {
		res.Series = append(res.Series, cols[d.Lib].series)
	}
	return res, nil
}

// endSec is the last second of the planned window the run lived through,
// when its record tells (ok): the seconds up to it without a worker row are
// missing, whether or not their rows were lost on the way to the disk.
//   - done: the whole window;
//   - failed: up to its end instant (what the failure cut short is missing);
//   - running, when its window is over or no process writes it any more
//     (owned false: its controller died, or could not record its end, as on
//     a full disk): up to now, within the window (what never reached the
//     disk, or what its dead controller never recorded, is missing).
//
// Otherwise (interrupted: the rest was not asked for; a run still written
// inside its window: the second in progress is not missing yet) it does not
// tell: up to the last second recorded.
func endSec(run store.Run, now time.Time, owned bool) (int64, bool) {
	planned := int64(run.Planned / time.Second)
	upTo := func(t time.Time) int64 { return min(planned, max(int64(t.Sub(run.Started)/time.Second), 0)) }
	switch {
	case run.Status == "done":
		return planned, true
	case strings.HasPrefix(run.Status, "failed") && !run.Ended.IsZero():
		return upTo(run.Ended), true
	case run.Status == store.StatusRunning && (!owned || !now.Before(run.Started.Add(run.Planned))):
		return upTo(now), true
	}
	return 0, false
}

// inWindow says whether second sec is in the planned window (second 0 is
// the warm-up's, after the last the drain's).
func (c *column) inWindow(sec int64) bool {
	return sec >= 1 && (c.run.seconds == 0 || sec <= c.run.seconds)
}

func (c *column) sample(s *store.Sample) {
	if s.HasWorker {
		c.msgsMax, c.bytesMax = max(c.msgsMax, s.MsgsTotal), max(c.bytesMax, s.BytesTotal)
		c.wireMax = max(c.wireMax, s.WireBytesTotal)
		c.hasWorker = true
	}
	if !c.inWindow(s.Sec) {
		return
	}
	c.sampleSeries(s)
	// The frame for second k counts the messages since the worker's previous
	// frame: one second's only when that frame is of k−1 and the totals agree.
	if !s.HasWorker {
		c.prevOK = false
	} else {
		c.workerSecs++
		if c.prevOK && c.prevSec == s.Sec-1 && c.prevTotal+s.Msgs == s.MsgsTotal {
			put(&c.series.Msgs, s.Sec, float64(s.Msgs))
			c.rateSum += s.Msgs
			c.ratePeak = max(c.ratePeak, s.Msgs)
			c.rate++
		}
		c.prevSec, c.prevTotal, c.prevOK = s.Sec, s.MsgsTotal, true
	}
	if s.HasDrops && s.HasWorker {
		c.writes += s.Writes
		c.writeDeliveries += s.Msgs
	}
	if s.HasProc {
		if c.rssN == 0 {
			c.rssFirst = s.RSS
		}
		c.rssLast = s.RSS
		c.rssPeak = max(c.rssPeak, s.RSS)
		c.rssN++
		if s.Sec > 1 { // the first second's CPU % includes the worker's start
			c.cpuSum += s.CPUPct
			c.cpuN++
		}
	}
}

func (c *column) stream(s *store.StreamSample) {
	c.streams++
	if s.MsgsTotal > 0 {
		c.seqStreams++
	}
	c.lost += s.LostTotal
	c.lostAcross += s.LostAcrossTotal
	c.dup += s.DupTotal
	if s.MaxSilenceMs > c.silenceMs {
		c.silenceMs, c.silenceStream = s.MaxSilenceMs, s.Stream
	}
	if s.Stalled {
		c.stalledStreams = append(c.stalledStreams, s.Stream)
	}
}

func (c *column) event(e *store.Event) {
	c.events++
	c.net.event(e)
	c.eventSeries(e)
	switch e.Kind {
	case wire.EventDisconnected:
		c.reconnects[e.Group]++
		c.disconnects++
	case wire.EventReconnect:
		c.recDurMs = append(c.recDurMs, e.DurMs)
	case wire.EventFault:
		c.faults++
		if discards(e.Fault) {
			c.dropKinds = append(c.dropKinds, e.Fault)
		}
	case wire.EventWorkerRestart:
		c.restarts++
	case wire.EventTruth:
		t := *e
		c.truth = &t
	case wire.EventDropped:
		c.dropped[e.Fault] += int64(e.Code)
	case wire.EventStall:
		c.stalls++
	case wire.EventUnrepairable:
		c.unrepairSlots[e.Slot] = true
	case wire.EventConnected:
		if c.negotiated == nil {
			c.negotiated = map[string]int{}
		}
		c.negotiated[e.Detail]++
	}
	if e.IsError() {
		c.errors++
	}
}

func (c *column) dial(d store.SlotDials) {
	c.dialSlots++
	c.dials += d.Dials
	c.dialFails += d.DialFails
	for code, n := range d.Statuses {
		if code == "101" {
			// A 101 is never a refusal: databases written before
			// bad_accept counted a library's refused 101 under it.
			code = "accept"
		}
		c.statuses[code] += n
	}
	if d.Unrepairable {
		c.unrepairSlots[d.Slot] = true
	}
}

// PlanGroups returns the connection group names in plan order.
func PlanGroups(planJSON string) []string {
	var p struct {
		Slots []struct {
			Group string `json:"group"`
		} `json:"slots"`
	}
	if json.Unmarshal([]byte(planJSON), &p) != nil {
		return nil
	}
	var out []string
	for _, s := range p.Slots {
		if !slices.Contains(out, s.Group) {
			out = append(out, s.Group)
		}
	}
	return out
}

// CPUSampled reports whether the controller took a /proc sample of the
// library's worker (the store gives NaN when none was taken, e.g. when the
// run was interrupted during the warm-up, before the first one). A sampled
// 0.00 is a measurement: /proc counts 10 ms clock ticks.
func CPUSampled(w store.Worker) bool { return !math.IsNaN(w.SampledCPU) }

// nan is the number of a value that was not measured.
var nan = math.NaN()

func notMeasured() Cell { return Cell{Text: NotMeasured, Num: nan} }

// latency is the column's whole-run latency: from the stored minute
// digests (every process of the worker, within 1 %), else the worker's
// final report (its last process only, within 0.1 %).
func (c *column) latency() sampler.LatencySnap {
	if c.digest != nil && c.digest.Count() > 0 {
		return c.digest.Summary()
	}
	w := c.worker
	return sampler.LatencySnap{Count: w.LatCount, P50: w.LatP50, P99: w.LatP99, P999: w.LatP999, Max: w.LatMax, Negative: w.LatNeg}
}

func countCell(n int) Cell { return Cell{Text: fmt.Sprint(n), Num: float64(n)} }

// ran says whether the worker was heard: its hello (its record names its
// module), a second's frame or an event. A worker heard from and silent
// since had nothing to tell: its counts are 0. One that died before its
// hello told nothing: the counts of what happened to its connections are
// not measured, not 0.
func (c *column) ran() bool { return c.hasWorker || c.events > 0 || c.worker.Module != "" }

// counted is n as a count of what happened to the worker's connections:
// not measured when the worker told nothing (ran).
func (c *column) counted(n int) Cell {
	if !c.ran() {
		return notMeasured()
	}
	return countCell(n)
}

// lostWhere is the cell of the ids lost across reconnects (across) or while
// connected: "total (library / source)" once the run's end charged them,
// the worker's total alone before that, and not measured for a database
// that does not record where ids were lost, or when no subscription
// received a message (no sequence was checked).
func (c *column) lostWhere(across bool) Cell {
	if c.seqStreams == 0 || !c.run.signals || c.unsplit > 0 {
		return notMeasured()
	}
	if c.charges == 0 { // nothing lost, or not charged yet (the run has not ended)
		n := c.lostAcross
		if !across {
			n = c.lost - c.lostAcross
		}
		if n == 0 {
			return Cell{"0 (0 / 0)", 0, vals(0, 0, 0)}
		}
		return Cell{fmt.Sprintf("%d (not charged yet)", n), float64(n), vals(float64(n), nan, nan)}
	}
	n, lib, src := c.connLost, c.connLib, c.connSrc
	if across {
		n, lib, src = c.acrossLost, c.acrossLib, c.acrossSrc
	}
	return Cell{fmt.Sprintf("%d (%d / %d)", n, lib, src), float64(n), vals(float64(n), float64(lib), float64(src))}
}
