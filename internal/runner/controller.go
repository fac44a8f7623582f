package runner

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/metrics"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// maxRestarts is how often a worker that died is started again.
const maxRestarts = 5

// drain is how long the controller lets workers read after the measured
// window ends, so that messages in flight at the end are still counted.
const drain = 2 * time.Second

// Options configure one soak run.
type Options struct {
	Profile  *profile.Profile
	OutDir   string          // parent of the run directory; default "out"
	Exe      string          // the soak binary to re-execute; default os.Executable()
	Log      *slog.Logger    // default: discard
	Progress io.Writer       // a progress line every 10 s; nil = none
	Abort    <-chan struct{} // closed on a second signal: kill the children at once
	Now      func() time.Time
	// WorkerTimeout: a worker that sent no frame for this long is killed
	// (event worker_hung) and restarted. Default 30 s.
	WorkerTimeout time.Duration
	// Resume is the directory of a run whose controller died: the run goes
	// on in the same database up to its original end instant, with an
	// outage event for the time nothing was recorded. Profile is then
	// taken from the run, and OutDir is not used.
	Resume string
	// WriteBacklog is how many batches (about one a second) are kept in
	// memory while database writes fail; beyond it the oldest is dropped and
	// recorded as missing. Default 600.
	WriteBacklog int
	// ProgressInPlace rewrites one progress line (for a terminal) instead of
	// printing a new line every 10 s.
	ProgressInPlace bool
	// Observer, if set, is told where the run writes, then sees every batch
	// once it is committed to the database.
	Observer Observer
	// EndRetry retries the writes at the end of the run (the last batches,
	// lost charges, server counts, worker records, the run's status, the
	// final checkpoint) within one budget; the caller may go on using it
	// for its own (the table). Default: store.DefaultRetryBudget.
	EndRetry *store.Retry
}

// Observer watches a run from the outside (the live view). Its methods run
// on the controller's writer goroutine, once a second: they must be quick
// and must not keep the batch, which is not changed after the call.
type Observer interface {
	RunStarted(dir, dbPath string)
	Observe(b *store.Batch)
}

// Result describes a finished run.
type Result struct {
	RunID   string
	Dir     string
	DBPath  string
	Workers []WorkerResult
	Profile *profile.Profile // the profile the run used (resumed: the one stored with it), not parsed again after the run

	lock *rundir.Lock
}

// Release gives up the run directory, which Run leaves locked so that the
// caller can finish writing into it (the table, the report) before another
// process may take it (a -resume). Safe on nil.
func (r *Result) Release() {
	if r != nil {
		r.lock.Release()
	}
}

// WorkerResult is one library's process account.
type WorkerResult struct {
	Lib                   string
	SampledCPU, RusageCPU float64 // seconds: last gopsutil sample vs the kernel's rusage at exit
	Restarts              int
	Err                   error
}

// ServeReady is the first line a child replay server prints on stdout.
type ServeReady struct {
	Addr string `json:"addr"`
}

type workerProc struct {
	lib      string
	ch       *child
	proc     *metrics.Proc
	hello    *Frame
	final    *FinalReport
	secs     map[int64]*SecStat
	last     *SecStat  // the last complete second, for the progress line
	latest   *SecStat  // the latest frame received
	heard    time.Time // when the worker last sent a frame
	procs    map[int64]procAt
	prev     procAt
	restarts int
	stalls   int // stall events, for the progress line
	exited   bool
	hung     bool    // killed by the watchdog
	finalCPU float64 // CPU seconds of the last sample, taken after the final frame
	finalOK  bool    // whether that sample was taken
	acc      struct {
		rusageUser, rusageSys, sampled float64 // over this worker's processes so far
		sampledAny                     bool    // whether sampled holds at least one /proc sample
		// totals of the processes that died (or of the controller that crashed)
		msgs, bytes, reconnects, lost, dup int64
		subs                               map[subKey]SubStat // per subscription, cumulative
	}
	subs    map[subKey]SubStat // latest cumulative totals per subscription
	started time.Time
	res     WorkerResult
	unsaved *store.Worker // the last record, when storing it failed: retried at the end

	// the last subs frame, sent after the connections ended: gaps and dial accounts
	finalSubs  []SubStat
	finalSlots []SlotStat
}

type procAt struct {
	metrics.ProcSample
	at  time.Time
	ok  bool
	pct float64
}

type frameMsg struct {
	w *workerProc
	f *Frame
}

type controller struct {
	o        Options
	plan     *Plan
	db       *store.DB
	dir      string
	epoch    time.Time
	workers  []*workerProc
	frames   chan frameMsg
	exits    chan *workerProc
	restarts chan *workerProc
	batch    *store.Batch
	writes   chan *store.Batch
	written  chan error
	host     *metrics.Host
	server   *child
	addr     string
	resumed  *resumed // set when continuing a crashed run
	// progressed: a progress line was printed
	progressed bool
	ca         *cert.Authority // the replay server's throwaway CA (replay.tls)

	local      *http.Client        // to the local replay server; made by the main goroutine
	faultLogs  chan []wire.Applied // the server's fault log, polled during the run
	faultPoll  bool                // a poll is in flight
	faultsSeen int                 // entries of the server's fault log already recorded
}

// Run performs one soak run: it starts the replay server (local target), one
// worker per library, samples them every second, and records everything in
// <OutDir>/<run-id>/soak.db. ctx cancellation stops the run gracefully.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.OutDir == "" {
		o.OutDir = "out"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WorkerTimeout <= 0 {
		o.WorkerTimeout = 30 * time.Second
	}
	if o.WriteBacklog <= 0 {
		o.WriteBacklog = defaultWriteBacklog
	}
	if o.EndRetry == nil {
		o.EndRetry = &store.Retry{Budget: store.DefaultRetryBudget, Log: o.Log}
	}
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find executable: %w", err)
		}
		o.Exe = exe
	}
	var (
		runID, dir string
		db         *store.DB
		rs         *resumed
		lock       *rundir.Lock // held until the caller's Result.Release
		err        error
	)
	if o.Resume != "" {
		if rs, err = openResumed(o.Resume); err != nil {
			return nil, err
		}
		o.Profile, db, dir, runID, lock = rs.profile, rs.db, o.Resume, rs.run.ID, rs.lock
	}
	p := o.Profile
	if err := preflight(ctx, p.Target, p.Proxy); err != nil {
		if db != nil {
			db.Close()
		}
		lock.Release()
		return nil, err
	}
	if rs == nil {
		if runID, dir, lock, db, err = createRun(o); err != nil {
			return nil, err
		}
	}
	if o.Observer != nil {
		o.Observer.RunStarted(dir, filepath.Join(dir, "soak.db"))
	}
	c := &controller{o: o, db: db, dir: dir, frames: make(chan frameMsg, 1024), exits: make(chan *workerProc, 16), restarts: make(chan *workerProc, 16),
		batch: new(store.Batch), writes: make(chan *store.Batch, 8), written: make(chan error, 1), host: metrics.NewHost(), resumed: rs}
	go c.writer()
	res, err := c.run(ctx, runID)
	if c.progressed && o.ProgressInPlace {
		fmt.Fprintln(o.Progress) // end the line rewritten in place
	}
	close(c.writes)
	if werr := <-c.written; werr != nil && err == nil {
		err = werr
	}
	status := "done"
	switch {
	case err != nil:
		status = "failed: " + transport.Mask(err.Error())
	case ctx.Err() != nil:
		status = "interrupted"
	}
	// A full disk at the end: retried, then reported with the rest; the
	// caller still prints the table.
	ended := o.Now()
	err = errors.Join(err, o.EndRetry.Do("record the run's end", func() error { return db.FinishRun(ended, status) }))
	err = errors.Join(err, db.CloseWith(o.EndRetry))
	if res == nil {
		res = &Result{RunID: runID}
	}
	res.RunID, res.Dir, res.DBPath, res.lock = runID, dir, filepath.Join(dir, "soak.db"), lock
	res.Profile = p
	return res, err
}

// createRun makes a new run's directory (private: see rundir), takes its
// lock and creates its database, mode 0600 like every file of the run.
func createRun(o Options) (runID, dir string, lock *rundir.Lock, db *store.DB, err error) {
	runID = o.Now().UTC().Format("20060102-150405") + "-" + sanitize(o.Profile.Name)
	if dir, err = rundir.Create(o.OutDir, runID); err != nil {
		return "", "", nil, nil, err
	}
	if lock, err = rundir.TakeLock(dir); err != nil {
		return "", "", nil, nil, err
	}
	path := filepath.Join(dir, "soak.db")
	if err = rundir.CreateEmpty(path); err != nil {
		lock.Release()
		return "", "", nil, nil, fmt.Errorf("create db: %w", err)
	}
	if db, err = store.Open(path); err != nil {
		lock.Release()
		return "", "", nil, nil, err
	}
	return runID, dir, lock, db, nil
}

func (c *controller) flush() {
	b := c.batch
	if len(b.Samples)+len(b.StreamSamples)+len(b.Events)+len(b.Host)+len(b.Clock) == 0 {
		return
	}
	c.batch = new(store.Batch)
	c.writes <- b
}

func (c *controller) run(ctx context.Context, runID string) (*Result, error) {
	p := c.o.Profile
	local := p.Target == "" || p.Target == "local"
	warmup := time.Duration(p.Warmup)
	// Wall clock (Options.Now) for the instants stored and shown; the
	// monotonic clock (mono) for every duration and for the seconds grid.
	mono, wall := time.Now(), c.o.Now()
	start := wall.Add(warmup).Truncate(time.Millisecond)
	end := start.Add(time.Duration(p.Duration))
	serverStart := start
	if rs := c.resumed; rs != nil {
		// The window stays the original one; the replay server's schedule
		// starts anew after the warm-up (it cannot replay the missed part).
		start, end = rs.plan.Start, rs.plan.End
		serverStart = wall.Add(warmup).Truncate(time.Millisecond)
	}
	c.epoch = mono.Add(start.Sub(wall))
	if rs := c.resumed; rs != nil && !serverStart.Before(end) {
		// Too late to go on: record the outage up to the end instead.
		c.addOutage(c.epoch.Add(end.Sub(start)), "the run's end passed before the resume")
		c.flush()
		return nil, fmt.Errorf("resume: run %s ended at %s; nothing is left to run (outage recorded)", runID, end.Format(time.RFC3339))
	}

	hostInfo, err := metrics.HostInfo()
	if err != nil {
		c.o.Log.Warn("host info", "err", err)
	}
	target := p.Target
	var caFile string
	if local {
		if p.Replay.TLS {
			if caFile, err = c.makeCA(end); err != nil {
				return nil, err
			}
		}
		if err := c.startServer(ctx, serverStart, end); err != nil {
			return nil, err
		}
		defer c.stopServer()
		target = "ws://" + c.addr
		if c.ca != nil {
			target = "wss://" + c.addr
		}
	}
	for _, w := range p.Warnings {
		c.o.Log.Warn("profile", "warning", w)
	}
	if c.resumed != nil {
		c.plan = c.resumed.plan
		c.plan.Target = target
		if err := c.reopen(); err != nil {
			return nil, err
		}
	} else if err := c.create(ctx, runID, target, local, start, end, hostInfo, caFile); err != nil {
		return nil, err
	}
	plan := c.plan
	for _, lib := range p.Libraries {
		w := &workerProc{lib: lib, secs: map[int64]*SecStat{}, procs: map[int64]procAt{}, res: WorkerResult{Lib: lib}}
		if c.resumed != nil {
			c.resumed.carry(w)
		}
		if err := c.startWorker(w); err != nil {
			c.killWorkers()
			return nil, err
		}
		c.workers = append(c.workers, w)
	}
	c.o.Log.Info("run started", "run", runID, "dir", c.dir, "target", transport.Mask(target), "proxy", transport.Mask(plan.Proxy), "libraries", p.Libraries,
		"slots", len(plan.Slots), "start", start.Format(time.RFC3339), "duration", time.Duration(p.Duration))

	err = c.loop(ctx, end)
	res := &Result{}
	for _, w := range c.workers {
		res.Workers = append(res.Workers, w.res)
	}
	for _, w := range c.workers {
		if rec := w.unsaved; rec != nil {
			if werr := c.o.EndRetry.Do("record worker "+w.lib, func() error { return c.db.UpsertWorker(*rec) }); werr != nil {
				c.o.Log.Warn("record worker", "lib", w.lib, "err", werr)
			}
		}
	}
	if terr := c.saveTruth(); terr != nil {
		c.o.Log.Warn("lost charges", "err", terr)
	}
	if local && err == nil {
		if serr := c.saveServerCounts(); serr != nil {
			c.o.Log.Warn("server counts", "err", serr)
		}
	}
	if local && c.addr != "" {
		if ferr := c.saveFaults(); ferr != nil {
			c.o.Log.Warn("server faults", "err", ferr)
		}
	}
	if c.local != nil {
		c.local.CloseIdleConnections()
	}
	c.flush()
	return res, err
}

// create resolves the symbols, builds the plan and records the new run.
func (c *controller) create(ctx context.Context, runID, target string, local bool, start, end time.Time, hostInfo map[string]string, caFile string) error {
	p := c.o.Profile
	symbols, err := c.resolveSymbols(ctx)
	if err != nil {
		return err
	}
	plan, err := BuildPlan(p, runID, target, local)
	if err != nil {
		return err
	}
	if caFile != "" {
		plan.CAFiles = append(plan.CAFiles, caFile)
	}
	plan.Start, plan.End = start, end
	c.plan = plan
	planJSON, _ := json.Marshal(plan)
	// Proxy credentials are in the plan the workers get, never in what is stored.
	return c.db.CreateRun(store.Run{
		ID: runID, Name: p.Name, Target: transport.Mask(target), ProfileText: transport.Mask(p.Text), Status: "running",
		GoVersion: runtime.Version(), Started: start, Planned: time.Duration(p.Duration), Host: hostInfo,
		Settings: map[string]string{"plan": transport.Mask(string(planJSON)), "profile_path": p.Path,
			"keepalive":  fmt.Sprintf("%s/%s", plan.PingInterval, plan.PongTimeout),
			"read_limit": fmt.Sprint(plan.ReadLimit), "rcvbuf": fmt.Sprint(plan.RcvBuf), "symbols": symbols,
			"proxy": transport.Mask(plan.Proxy), "tls_ca": strings.Join(plan.CAFiles, ","), "tls_server_name": plan.ServerName},
	})
}

// resolveSymbols turns every {top: N, quote: Q} of the profile into a symbol
// list, from one GET /api/v3/ticker/24hr (so a top 20 is the head of the top
// 50), and returns the lists as JSON for the run's settings ("" when the
// profile lists its symbols). It runs once per run: every worker gets the plan
// built from these lists.
func (c *controller) resolveSymbols(ctx context.Context) (string, error) {
	p := c.o.Profile
	if !p.NeedsResolve() {
		return "", nil
	}
	base := p.RESTBase(c.localBase())
	var tickers []binance.Ticker24h
	client, err := c.httpClient(base != c.localBase())
	if err != nil {
		return "", err
	}
	got, err := p.ResolveSymbols(func(t profile.Top) ([]string, error) {
		if tickers == nil {
			var err error
			if tickers, err = binance.FetchTickers24h(ctx, client, base); err != nil {
				return nil, err
			}
		}
		return binance.TopSymbols(tickers, t.N, t.Quote)
	})
	if err != nil {
		return "", err
	}
	lists := map[string][]string{}
	for t, l := range got {
		lists[t.String()] = l
		c.o.Log.Info("symbols resolved", "rule", t.String(), "from", base+"/api/v3/ticker/24hr", "symbols", strings.Join(l, ","))
	}
	b, _ := json.Marshal(lists)
	return string(b), nil
}

func (c *controller) startServer(ctx context.Context, start, end time.Time) error {
	cfg := c.o.Profile.ReplayConfig() // handed to the server on stdin
	cfg.Start, cfg.Stop = start, end
	if c.ca != nil {
		cfg.CertFile, cfg.KeyFile = filepath.Join(c.dir, "server.pem"), filepath.Join(c.dir, "server-key.pem")
	}
	b, _ := json.Marshal(cfg)
	ch, err := startChild("replay server", c.o.Exe, []string{"serve", "-child", "-addr", "127.0.0.1:0"}, b, filepath.Join(c.dir, "server.log"))
	if err != nil {
		return err
	}
	c.server = ch
	ready := make(chan error, 1)
	go func() {
		line, err := ch.out.ReadBytes('\n')
		if err != nil {
			ready <- fmt.Errorf("replay server exited before it was ready (see %s)", filepath.Join(c.dir, "server.log"))
			return
		}
		var r ServeReady
		if err := json.Unmarshal(line, &r); err != nil || r.Addr == "" {
			ready <- fmt.Errorf("replay server: bad ready line %q", truncate(line, 80))
			return
		}
		c.addr = r.Addr
		ready <- nil
		_, _ = io.Copy(io.Discard, ch.out)
	}()
	go ch.wait()
	select {
	case err = <-ready:
	case <-time.After(10 * time.Second):
		err = errors.New("replay server not ready after 10s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		ch.stop(2 * time.Second)
		return err
	}
	return nil
}

// localBase is the http(s) base URL of the local replay server.
func (c *controller) localBase() string {
	if c.ca != nil {
		return "https://" + c.addr
	}
	return "http://" + c.addr
}

// httpClient is the controller's client for its own requests: to the local replay server
// directly, trusting its throwaway CA; to a remote REST base (remote true) the way the
// workers connect: through the profile's proxy, with its TLS trust and server name.
func (c *controller) httpClient(remote bool) (*http.Client, error) {
	tr := &http.Transport{Proxy: nil, TLSHandshakeTimeout: 10 * time.Second}
	if !remote {
		if c.ca != nil {
			tr.TLSClientConfig = &tls.Config{RootCAs: c.ca.Pool(), MinVersion: tls.VersionTLS12}
		}
		return &http.Client{Transport: tr, Timeout: 20 * time.Second}, nil
	}
	p := c.o.Profile
	var cas []string
	if p.TLS.CA != "" {
		cas = []string{p.TLS.CA}
	}
	tc, err := transport.TLSConfig(cas, "")
	if err != nil {
		return nil, err
	}
	d := &transport.Dialer{Timeout: 10 * time.Second, ProxyTLS: tc}
	if p.Proxy != "" {
		if d.Proxy, err = transport.ParseProxy(p.Proxy); err != nil {
			return nil, err
		}
	}
	tr.DialContext, tr.TLSClientConfig = d.DialContext, tc
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}, nil
}

// makeCA writes a throwaway CA and the replay server's certificate (valid until a day
// after end) into the run directory, and returns the CA file the workers trust.
func (c *controller) makeCA(end time.Time) (string, error) {
	ca, err := cert.New(time.Until(end)+24*time.Hour, cert.LocalHosts...)
	if err != nil {
		return "", fmt.Errorf("replay tls: %w", err)
	}
	files, err := ca.Write(c.dir)
	if err != nil {
		return "", fmt.Errorf("replay tls: %w", err)
	}
	c.ca = ca
	return files.CA, nil
}

func (c *controller) stopServer() {
	if c.server != nil {
		c.server.stop(5 * time.Second)
	}
}

func (c *controller) saveServerCounts() error {
	var st replay.Stats
	if err := c.getLocal("/_soak/stats", &st); err != nil {
		return err
	}
	var rows []store.ServerCount
	for _, cn := range st.Conns {
		for name, s := range cn.Streams {
			rows = append(rows, store.ServerCount{Tag: cn.Tag, Stream: name, Sent: s.Sent, Bytes: s.Bytes, FirstSeq: s.FirstSeq, LastSeq: s.LastSeq})
		}
	}
	return c.o.EndRetry.Do("store server counts", func() error { return c.db.SaveServerCounts(rows) })
}

// saveTruth compares the libraries' lost ids per subscription and stores who
// each is charged to, with every slot's dial account.
func (c *controller) saveTruth() error {
	finals := map[string][]SubStat{}
	var dials []store.SlotDials
	for _, w := range c.workers {
		if w.finalSubs == nil {
			continue // no final account (the worker died at the end): nothing to compare
		}
		finals[w.lib] = w.finalSubs
		for _, s := range w.finalSlots {
			dials = append(dials, store.SlotDials{Lib: w.lib, Slot: s.Slot, Group: s.Group, Dials: s.Dials,
				DialFails: s.DialFails, Statuses: s.Statuses, Unrepairable: s.Unrepairable})
		}
	}
	if len(finals) == 0 {
		return nil
	}
	lost := chargeLost(finals)
	return c.o.EndRetry.Do("store lost charges", func() error { return c.db.SaveTruth(lost, dials) })
}

func (c *controller) startWorker(w *workerProc) error {
	pl := *c.plan
	pl.Lib = w.lib
	if m, ok := monoNow(); ok {
		pl.StartMono = m + int64(time.Until(c.epoch))
	}
	b, _ := json.Marshal(&pl)
	ch, err := startChild("worker "+w.lib, c.o.Exe, []string{"worker", "-lib", w.lib}, b, filepath.Join(c.dir, "worker-"+w.lib+".log"))
	if err != nil {
		return err
	}
	w.ch, w.exited, w.final, w.hello, w.hung, w.finalOK = ch, false, nil, nil, false, false
	w.started = c.o.Now() // stored instant
	w.heard = time.Now()  // for the watchdog's monotonic durations
	w.prev = procAt{}
	if w.proc, err = metrics.NewProc(ch.pid()); err != nil {
		c.o.Log.Warn("sample worker", "lib", w.lib, "err", err)
	}
	go func() {
		err := readFrames(ch.out, func(f *Frame) error {
			c.frames <- frameMsg{w, f}
			return nil
		})
		if err != nil {
			c.o.Log.Error("worker frames", "lib", w.lib, "err", err)
			_, _ = io.Copy(io.Discard, ch.out)
		}
		ch.wait()
		c.exits <- w
	}()
	return nil
}

func (c *controller) killWorkers() {
	for _, w := range c.workers {
		if w.ch != nil {
			w.ch.kill()
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
		c.o.Log.Info("stopping workers", "why", why)
		for _, w := range c.workers {
			if !w.exited {
				if err := w.ch.send("stop"); err != nil {
					c.o.Log.Warn("stop worker", "lib", w.lib, "err", err)
				}
			}
		}
		stopDeadline = time.After(20 * time.Second)
	}
	ctxDone := ctx.Done()
	var runErr error
	var serverDone <-chan struct{}
	if c.server != nil {
		serverDone = c.server.done
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
		case <-stopTimer.C:
			beginStop("window ended")
		case <-stopDeadline:
			for _, w := range c.workers {
				if !w.exited {
					c.o.Log.Error("worker did not stop in time; killing", "lib", w.lib)
					w.ch.kill()
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
			c.recordFaults(log)
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
			Kind: "worker_hung", Slot: -1, Detail: fmt.Sprintf("no frame for %s; killed", now.Sub(w.heard).Round(time.Second))})
		c.o.Log.Error("worker hung; killing it", "lib", w.lib, "silent", now.Sub(w.heard).Round(time.Second))
		w.ch.kill()
	}
}

// sample takes the process samples for second k (taken at epoch + k s).
func (c *controller) sample(k int64, now time.Time) {
	for _, w := range c.workers {
		if w.exited || w.proc == nil {
			continue
		}
		s, err := w.proc.Sample()
		if err != nil {
			continue
		}
		pa := procAt{ProcSample: s, at: now, ok: true}
		if w.prev.ok {
			if dt := now.Sub(w.prev.at).Seconds(); dt > 0 {
				pa.pct = 100 * (s.CPUUser + s.CPUSys - w.prev.CPUUser - w.prev.CPUSys) / dt
			}
		}
		w.prev = pa
		w.procs[k] = pa
	}
	hs, err := c.host.Sample()
	if err == nil {
		c.batch.Host = append(c.batch.Host, store.HostSample{Sec: k, TS: now, Load1: hs.Load1, Load5: hs.Load5, Load15: hs.Load15,
			CPUPct: hs.CPUPct, StealPct: hs.StealPct, IOWaitPct: hs.IOWaitPct, MemUsed: int64(hs.MemUsed), MemAvail: int64(hs.MemAvailable)})
	}
	if k%60 == 1 { // the clock's sync state (latency depends on it): the window's first second, then every minute
		if cs, err := metrics.ReadClock(); err == nil {
			c.batch.Clock = append(c.batch.Clock, store.ClockSample{Sec: k, TS: now, Synced: cs.Synced, State: cs.State,
				Status: cs.Status, EstErrorUs: cs.EstErrorUs, MaxErrorUs: cs.MaxErrorUs})
		}
	}
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
	c.flush()
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
	c.flush()
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
	}
	if pa, ok := w.procs[s]; ok {
		row.HasProc = true
		row.RSS, row.CPUUser, row.CPUSys, row.CPUPct = int64(pa.RSS), pa.CPUUser, pa.CPUSys, pa.pct
		row.FDs, row.Threads = int(pa.FDs), int(pa.Threads)
	}
	c.batch.Samples = append(c.batch.Samples, row)
	delete(w.secs, s)
	delete(w.procs, s)
}

func (c *controller) onFrame(w *workerProc, f *Frame) {
	w.heard = time.Now()
	switch f.Type {
	case frameHello:
		w.hello = f
		if err := c.db.UpsertWorker(store.Worker{Lib: w.lib, Module: f.Module, Version: f.Version, Pid: f.Pid, Started: w.started}); err != nil {
			c.o.Log.Warn("record worker", "lib", w.lib, "err", err)
		}
	case frameSec:
		if st := f.Stat; st != nil {
			st.MsgsTotal += w.acc.msgs // continue across a restart
			st.BytesTotal += w.acc.bytes
			st.Reconnects += w.acc.reconnects
			st.Lost += w.acc.lost
			st.Dup += w.acc.dup
			w.secs[f.Sec] = st
			w.latest = st
			c.writeComplete(f.Sec)
		}
	case frameSubs:
		if f.Slots != nil {
			w.finalSubs, w.finalSlots = f.Subs, f.Slots
		}
		for _, s := range f.Subs {
			s = w.carrySub(s)
			c.batch.StreamSamples = append(c.batch.StreamSamples, store.StreamSample{Lib: w.lib, Slot: s.Slot, Group: s.Group,
				Stream: s.Stream, Sec: f.Sec, MsgsTotal: s.Msgs, BytesTotal: s.Bytes, LostTotal: s.Lost, DupTotal: s.Dup,
				OOOTotal: s.OOO, MaxSilenceMs: s.MaxSilenceMs, LastSeq: s.LastSeq, StallsTotal: s.Stalls, Stalled: s.Stalled})
		}
	case frameEvent:
		ev := f.Ev
		if ev == nil {
			return
		}
		ts := time.Unix(0, ev.TS)
		ev.Detail = transport.Mask(ev.Detail) // a library's error text may quote a URL
		c.batch.Events = append(c.batch.Events, store.Event{Lib: w.lib, TS: ts, Sec: float64(ev.Mono) / 1e9,
			Kind: ev.Kind, Slot: ev.Slot, Group: ev.Group, Stream: ev.Stream, Code: ev.Code, Detail: ev.Detail, DurMs: ev.DurMs})
		if ev.Kind == "stall" {
			w.stalls++
		}
		if ev.Kind == "disconnected" || ev.Kind == "dial_error" || ev.Kind == "unrepairable" {
			c.o.Log.Info("worker event", "lib", w.lib, "kind", ev.Kind, "slot", ev.Slot, "code", ev.Code, "detail", ev.Detail)
		}
	case frameFinal:
		w.final = f.Fin
		// The worker has stopped its connections and waits for us: take the
		// last process sample now, then let it exit and compare with the kernel.
		if w.proc != nil {
			if s, err := w.proc.Sample(); err == nil {
				w.finalCPU, w.finalOK = s.CPUUser+s.CPUSys, true
			}
		}
		w.ch.closeStdin()
	}
}

func (c *controller) onExit(w *workerProc, stopping bool) {
	w.exited = true
	ru, rs, _ := w.ch.rusage()
	code := -1
	if w.ch.cmd.ProcessState != nil {
		code = w.ch.cmd.ProcessState.ExitCode()
	}
	w.acc.rusageUser += ru
	w.acc.rusageSys += rs
	switch {
	case w.final != nil && w.finalOK:
		w.acc.sampled += w.finalCPU
		w.acc.sampledAny = true
	case w.prev.ok:
		w.acc.sampled += w.prev.CPUUser + w.prev.CPUSys // died, or the final sample failed: its last sample is all we saw
		w.acc.sampledAny = true
	}
	sampled := w.acc.sampled
	if !w.acc.sampledAny {
		sampled = math.NaN() // interrupted before the first sample: not measured, not 0
	}
	w.res.SampledCPU, w.res.RusageCPU = sampled, w.acc.rusageUser+w.acc.rusageSys
	rec := store.Worker{Lib: w.lib, Pid: w.ch.pid(), Started: w.started, Ended: c.o.Now(), ExitCode: code,
		RusageUser: w.acc.rusageUser, RusageSys: w.acc.rusageSys, SampledCPU: sampled}
	if w.hello != nil {
		rec.Module, rec.Version = w.hello.Module, w.hello.Version
	}
	if f := w.final; f != nil {
		rec.MaxRSS = f.MaxRSS
		rec.LatCount, rec.LatP50, rec.LatP99, rec.LatMax = f.LatN, f.LatP50, f.LatP99, f.LatMax
	}
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
	if w.ch.err != nil {
		detail = w.ch.err.Error()
	}
	c.batch.Events = append(c.batch.Events, store.Event{Lib: w.lib, TS: c.o.Now(), Sec: time.Since(c.epoch).Seconds(),
		Kind: "worker_exit", Slot: -1, Code: code, Detail: detail + " (see " + filepath.Base(w.ch.log.Name()) + ")"})
	c.o.Log.Error("worker exited", "lib", w.lib, "detail", detail)
	w.res.Err = fmt.Errorf("worker %s died (%s) and was restarted %d times", w.lib, detail, w.restarts)
	if w.latest != nil {
		w.acc.msgs, w.acc.bytes = w.latest.MsgsTotal, w.latest.BytesTotal
		w.acc.reconnects, w.acc.lost, w.acc.dup = w.latest.Reconnects, w.latest.Lost, w.latest.Dup
		w.acc.subs = maps.Clone(w.subs)
	}
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
		Kind: "worker_restart", Slot: -1, Detail: fmt.Sprintf("restart %d", w.restarts)})
}

func (c *controller) progress(k, total int64) {
	if c.o.Progress == nil {
		return
	}
	var parts []string
	for _, w := range c.workers {
		if st := w.last; st != nil {
			parts = append(parts, fmt.Sprintf("%s %d msg/s, %d reconnects, %d stalls", w.lib, st.Msgs, st.Reconnects, w.stalls))
		}
	}
	line := fmt.Sprintf("[%4ds/%ds] %s", k, total, strings.Join(parts, " | "))
	if c.o.ProgressInPlace {
		fmt.Fprintf(c.o.Progress, "\r\x1b[K%s", line) // back to column 0, clear the old line
	} else {
		fmt.Fprintln(c.o.Progress, line)
	}
	c.progressed = true
}

func sanitize(s string) string {
	if s == "" {
		return "run"
	}
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			b[i] = '-'
		}
	}
	return string(b)
}

// preflight checks that the first hop answers on TCP, so that an unreachable URL is one
// clear error instead of a run of failed dials: the proxy when there is one (the workers
// never connect to the target themselves then, and a local target is reached through
// it too), else a remote target's host. Credentials are the proxy's to judge, per dial.
func preflight(ctx context.Context, target, proxy string) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	if proxy != "" {
		px, err := transport.ParseProxy(proxy)
		if err != nil {
			return err
		}
		c, err := d.DialContext(ctx, "tcp", px.Addr)
		if err != nil {
			return fmt.Errorf("proxy %s unreachable: %w", px, err)
		}
		return c.Close()
	}
	if target == "" || target == "local" {
		return nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("target %q: %w", target, err)
	}
	port := u.Port()
	switch {
	case u.Scheme != "ws" && u.Scheme != "wss":
		return fmt.Errorf("target %q: scheme must be ws or wss", target)
	case u.Hostname() == "":
		return fmt.Errorf("target %q: no host", target)
	case port == "" && u.Scheme == "wss":
		port = "443"
	case port == "":
		port = "80"
	}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("target %s unreachable: %w", target, err)
	}
	return c.Close()
}
