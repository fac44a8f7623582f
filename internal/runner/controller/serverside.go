package controller

// The server-side soak (a profile with side: server): the libraries as chat
// servers (package chat), one process each ("soak chatserver", the workers
// of this kind), side by side under one load process ("soak chatsoak",
// chat.RunSoak) that the controller spawns too and that injects the faults.
// Every second the controller samples each server's process (RSS, CPU, FDs,
// threads, by pid as for the client soak's workers) and reads its /_stats
// (deliveries, connections, goroutines, written bytes, slow clients dropped
// in the second); the load client's
// second (latency p50/p99/max, reconnects) joins it into one samples row per
// server and second, keyed by the library as the client soak's rows are, so
// that report and export show the servers side by side. The load's fault,
// reconnect and drop notices are events; at the end each server's truth
// (the clients' deliveries against the server's writes, the drops against
// the slow readers and half-open clients injected) is a "truth" event and, when it fails, a note.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Event kinds of a server-side soak (besides wire.EventFault and
// wire.EventReconnect).
const (
	EventDropped   wire.EventKind = "dropped"    // a server dropped slow clients (Code: how many; Fault: slow_reader or half_open)
	EventTruth     wire.EventKind = "truth"      // a server's end account: Code 0 when exact, 1 when not
	EventLoadError wire.EventKind = "load_error" // the load on a server stopped with an error
)

// serverProc is one library's chat server process.
type serverProc struct {
	lib   string
	ch    *child
	proc  *sampler.Proc
	stats string // its /_stats URL
	url   string
	prev  procAt
	last  chat.Stats
	has   bool
	rows  map[int64]*store.Sample // seconds sampled, waiting for the load's half
	end   *chat.SoakResult
	recon int64 // the load's latest reconnect count
}

// runServerSide runs a side: server profile (Run calls it).
func runServerSide(ctx context.Context, o Options) (*Result, error) {
	runID, dir, lock, db, err := createRun(o)
	if err != nil {
		return nil, err
	}
	if o.Observer != nil {
		o.Observer.RunStarted(dir, filepath.Join(dir, "soak.db"))
	}
	c := &controller{o: o, db: db, dir: dir, batch: new(store.Batch), writes: make(chan *store.Batch, 8), written: make(chan error, 1), host: sampler.NewHost()}
	go c.writer()
	res, err := c.serverSide(ctx, runID)
	close(c.writes)
	if werr := <-c.written; werr != nil && err == nil {
		err = werr
	}
	status := "done"
	switch {
	case err != nil:
		status = "failed: " + err.Error()
	case ctx.Err() != nil:
		status = "interrupted"
	}
	ended := o.Now()
	err = errors.Join(err, o.EndRetry.Do("record the run's end", func() error { return db.FinishRun(ended, status) }))
	err = errors.Join(err, db.CloseWith(o.EndRetry))
	if res == nil {
		res = &Result{}
	}
	res.RunID, res.Dir, res.DBPath, res.lock, res.Profile = runID, dir, filepath.Join(dir, "soak.db"), lock, o.Profile
	return res, err
}

func (c *controller) serverSide(ctx context.Context, runID string) (*Result, error) {
	p := c.o.Profile
	mono, wall := time.Now(), c.o.Now()
	start := wall.Add(time.Duration(p.Warmup)).Truncate(time.Millisecond)
	end := start.Add(time.Duration(p.Duration))
	c.epoch = mono.Add(start.Sub(wall))
	hostInfo, err := sampler.HostInfo()
	if err != nil {
		c.o.Log.Warn("host info", "err", err)
	}
	chatJSON, _ := json.Marshal(p.Chat)
	if err := c.db.CreateRun(store.Run{ID: runID, Name: p.Name, Target: "local chat servers", ProfileText: p.Text, Status: "running",
		GoVersion: runtime.Version(), Started: start, Planned: time.Duration(p.Duration), Host: hostInfo,
		Settings: map[string]string{"plan": `{"local":true,"side":"server"}`, "profile_path": p.Path, "side": "server",
			"chat": string(chatJSON), "libraries": strings.Join(p.Libraries, ",")}}); err != nil {
		return nil, err
	}
	var servers []*serverProc
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	for _, lib := range p.Libraries {
		s, err := c.startChatServer(lib)
		if err != nil {
			return nil, err
		}
		servers = append(servers, s)
	}
	cfg := chat.SoakConfig{Hold: true, N: p.Chat.N, Rate: p.Chat.Rate, Payload: int(p.Chat.Payload), Start: start, Duration: time.Duration(p.Duration)}
	for _, s := range servers {
		cfg.Rooms = append(cfg.Rooms, chat.SoakRoom{Lib: s.lib, URL: s.url, Stats: s.stats})
	}
	for _, f := range p.ServerFaults() {
		cfg.Faults = append(cfg.Faults, chat.SoakFault{Kind: f.Kind, At: f.At, Every: f.Every, N: f.N, Size: f.Size})
	}
	b, _ := json.Marshal(cfg)
	load, err := startChild("load", c.o.Exe, []string{"chatsoak"}, b, filepath.Join(c.dir, "load.log"))
	if err != nil {
		return nil, err
	}
	defer load.stop(5 * time.Second)
	recs := make(chan chat.SoakRecord, 256)
	go func() {
		defer close(recs)
		sc := bufio.NewScanner(load.out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var r chat.SoakRecord
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				recs <- r
			}
		}
		load.wait()
	}()
	c.o.Log.Info("server-side run started", "run", runID, "dir", c.dir, "libraries", p.Libraries, "n", p.Chat.N, "rate", p.Chat.Rate,
		"start", start.Format(time.RFC3339), "duration", time.Duration(p.Duration))

	runErr := c.serverLoop(ctx, servers, recs, end.Sub(start))
	load.stop(5 * time.Second)
	loadCPU := ""
	if u, sy, ok := load.rusage(); ok && p.Duration > 0 {
		// The load's own CPU, so a reader sees when the client, not the server, was the limit.
		loadCPU = fmt.Sprintf("; the load process (all rooms): %.2f CPU s, %.1f %% of one core over the window", u+sy, 100*(u+sy)/time.Duration(p.Duration).Seconds())
	}
	res := &Result{}
	for _, s := range servers {
		wr := WorkerResult{Lib: s.lib, SampledCPU: s.prev.CPUUser + s.prev.CPUSys}
		ev := store.Event{Lib: s.lib, TS: c.o.Now(), Sec: time.Since(c.epoch).Seconds(), Kind: EventTruth, Slot: -1}
		switch {
		case s.end == nil:
			ev.Code, ev.Detail = 1, "no account from the load client"
		case s.end.Err != "":
			ev.Code, ev.Detail = 1, "the load stopped: "+s.end.Err
		default:
			if terr := s.end.Truth(); terr != nil {
				ev.Code, ev.Detail = 1, terr.Error()
			} else {
				ev.Detail = fmt.Sprintf("exact: clients read %d deliveries, the server wrote %d (less %d to the %d clients it dropped: %d slow readers, %d half-open, as injected); %d resets and %d closed for oversize messages, %d reconnects",
					s.end.Deliveries, s.end.Server.Deliveries, s.end.Server.DroppedDeliveries, s.end.Server.Drops, s.end.SlowDropped, s.end.HalfOpenDrop,
					s.end.Resets, s.end.Oversize, s.end.Reconnects)
			}
		}
		if s.end != nil && s.end.SkippedTicks > 0 {
			ev.Detail += fmt.Sprintf("; the load fell behind and skipped %d ticks of %s", s.end.SkippedTicks, chat.SoakTick)
		}
		if ev.Code != 0 {
			wr.Err = fmt.Errorf("%s: %s", s.lib, ev.Detail)
		}
		ev.Detail += loadCPU
		c.batch.Events = append(c.batch.Events, ev)
		res.Workers = append(res.Workers, wr)
	}
	c.flush()
	for i, s := range servers {
		s.stop()
		rec := store.Worker{Lib: s.lib, Module: "chat server", Pid: s.ch.pid(), ExitCode: s.ch.cmd.ProcessState.ExitCode(),
			SampledCPU: s.prev.CPUUser + s.prev.CPUSys, MaxRSS: s.last.MaxRSSKiB * 1024}
		if u, sy, ok := s.ch.rusage(); ok {
			rec.RusageUser, rec.RusageSys = u, sy
			res.Workers[i].RusageCPU = u + sy
		}
		if e := s.end; e != nil {
			rec.LatCount, rec.LatP50, rec.LatP99, rec.LatP999, rec.LatMax = e.LatCount, e.LatP50, e.LatP99, e.LatP999, e.LatMax
			if e.Server != nil {
				rec.MaxRSS = e.Server.MaxRSSKiB * 1024
			}
		}
		if werr := c.o.EndRetry.Do("record worker "+s.lib, func() error { return c.db.UpsertWorker(rec) }); werr != nil {
			c.o.Log.Warn("record worker", "lib", s.lib, "err", werr)
		}
	}
	return res, runErr
}

// startChatServer starts one library's chat server on a free loopback port.
func (c *controller) startChatServer(lib string) (*serverProc, error) {
	p := c.o.Profile
	args := []string{"chatserver", "-lib", lib, "-n", strconv.Itoa(p.Chat.N), "-queue", strconv.Itoa(p.Chat.Queue), "-addr", "127.0.0.1:0"}
	ch, err := startChild("server "+lib, c.o.Exe, args, nil, filepath.Join(c.dir, "server-"+lib+".log"))
	if err != nil {
		return nil, err
	}
	line, err := ch.out.ReadString('\n')
	if err != nil {
		ch.kill()
		return nil, fmt.Errorf("chat server %s: no address: %w", lib, err)
	}
	addr := strings.TrimSpace(line)
	go func() {
		for {
			if _, err := ch.out.ReadString('\n'); err != nil {
				break
			}
		}
		ch.wait()
	}()
	s := &serverProc{lib: lib, ch: ch, url: "ws://" + addr + "/", stats: "http://" + addr + chat.StatsPath, rows: map[int64]*store.Sample{}}
	if s.proc, err = sampler.NewProc(ch.pid()); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// stop ends the server (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (s *serverProc) stop() {
	select {
	case <-s.ch.done:
		return
	default:
	}
	_ = s.ch.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.ch.done:
	case <-time.After(5 * time.Second):
		s.ch.kill()
		<-s.ch.done
	}
}

// serverLoop samples every second until the load's end records came (or
// the window plus a grace passed, or a signal).
func (c *controller) serverLoop(ctx context.Context, servers []*serverProc, recs <-chan chat.SoakRecord, window time.Duration) error {
	byLib := map[string]*serverProc{}
	for _, s := range servers {
		byLib[s.lib] = s
	}
	client := &http.Client{Timeout: 900 * time.Millisecond}
	defer client.CloseIdleConnections()
	k := int64(1)
	tick := time.NewTimer(time.Until(c.epoch.Add(time.Second)))
	defer tick.Stop()
	graceEnd := time.NewTimer(time.Until(c.epoch.Add(window + 60*time.Second)))
	defer graceEnd.Stop()
	total := int64(window / time.Second)
	ends := 0
	var errs []error
	for ends < len(servers) || k <= total {
		select {
		case <-ctx.Done():
			c.writeServerRows(servers, 1<<62)
			return nil
		case <-c.o.Abort:
			c.writeServerRows(servers, 1<<62)
			return errors.New("aborted by second signal")
		case <-graceEnd.C:
			c.writeServerRows(servers, 1<<62)
			return fmt.Errorf("the load client gave no end account within 60 s of the window's end")
		case now := <-tick.C:
			if k <= total {
				for _, s := range servers {
					c.sampleServer(s, k, now, client)
				}
				hs, err := c.host.Sample()
				if err == nil {
					c.batch.Host = append(c.batch.Host, store.HostSample{Sec: k, TS: now, Load1: hs.Load1, Load5: hs.Load5, Load15: hs.Load15,
						CPUPct: hs.CPUPct, StealPct: hs.StealPct, IOWaitPct: hs.IOWaitPct, MemUsed: int64(hs.MemUsed), MemAvail: int64(hs.MemAvailable)})
				}
				if k%60 == 1 { // the clock's sync state, as a client soak records it
					if cs, err := sampler.ReadClock(); err == nil {
						c.batch.Clock = append(c.batch.Clock, store.ClockSample{Sec: k, TS: now, Synced: cs.Synced, State: cs.State,
							Status: cs.Status, EstErrorUs: cs.EstErrorUs, MaxErrorUs: cs.MaxErrorUs})
					}
				}
				if k%10 == 0 || k == total {
					c.serverProgress(servers, k, total)
				}
			}
			// A second whose load half has not come two seconds later is
			// written without it.
			c.writeServerRows(servers, k-2)
			k++
			tick.Reset(time.Until(c.epoch.Add(time.Duration(k) * time.Second)))
		case r, ok := <-recs:
			if !ok {
				c.writeServerRows(servers, 1<<62)
				return errors.Join(append(errs, fmt.Errorf("the load client ended before its account (%d of %d servers; see load.log)", ends, len(servers)))...)
			}
			s := byLib[r.Lib]
			if s == nil {
				continue
			}
			switch r.T {
			case "sec":
				row := s.rows[r.Sec]
				if row == nil {
					row = &store.Sample{Lib: s.lib, Sec: r.Sec, TS: c.epoch.Add(time.Duration(r.Sec) * time.Second)}
					s.rows[r.Sec] = row
				}
				row.LatP50, row.LatP99, row.LatMax, row.ReconnectsTotal = r.LatP50, r.LatP99, r.LatMax, r.Reconnects
				row.HasWorker = true
				s.recon = max(s.recon, r.Reconnects)
				if row.HasProc {
					c.addServerRow(s, row)
					c.flush()
				}
			case "event":
				ev := store.Event{Lib: s.lib, TS: r.At, Sec: r.At.Sub(c.o.Now()).Seconds() + time.Since(c.epoch).Seconds(), Slot: -1, Code: r.Count, Detail: r.Detail}
				switch r.Kind {
				case "fault":
					ev.Kind, ev.Fault = wire.EventFault, wire.FaultKind(r.Fault)
				case "reconnect":
					// A disconnected event per client reset (as a client
					// soak records a reset: abnormal closure), then the
					// reconnect with the time they took to be back.
					for i := range r.Count {
						d := store.Event{Lib: s.lib, TS: ev.TS, Sec: ev.Sec, Kind: wire.EventDisconnected, Slot: -1, Group: "chat",
							Code: 1006, Detail: "reset by the load client (fault)"}
						if i < len(r.Codes) { // closed by the server for an oversize message
							d.Code, d.Detail = r.Codes[i], "closed by the server after an oversize message (fault)"
						}
						c.batch.Events = append(c.batch.Events, d)
					}
					ev.Kind, ev.DurMs, ev.Code = wire.EventReconnect, r.DurMs, r.Count
				case "dropped":
					ev.Kind, ev.Fault = EventDropped, wire.FaultKind(r.Fault)
				default:
					ev.Kind = EventLoadError
				}
				c.batch.Events = append(c.batch.Events, ev)
				c.flush()
			case "end":
				s.end = r.End
				ends++
			}
		}
	}
	c.writeServerRows(servers, 1<<62)
	return errors.Join(errs...)
}

// sampleServer takes second k of a server: its process and its /_stats.
func (c *controller) sampleServer(s *serverProc, k int64, now time.Time, client *http.Client) {
	row := s.rows[k]
	if row == nil {
		row = &store.Sample{Lib: s.lib, Sec: k, TS: c.epoch.Add(time.Duration(k) * time.Second)}
		s.rows[k] = row
	}
	if ps, err := s.proc.Sample(); err == nil {
		pa := procAt{ProcSample: ps, at: now, ok: true}
		if s.prev.ok {
			if dt := now.Sub(s.prev.at).Seconds(); dt > 0 {
				pa.pct = 100 * (ps.CPUUser + ps.CPUSys - s.prev.CPUUser - s.prev.CPUSys) / dt
			}
		}
		s.prev = pa
		row.HasProc = true
		row.RSS, row.CPUUser, row.CPUSys, row.CPUPct = int64(ps.RSS), ps.CPUUser, ps.CPUSys, pa.pct
		row.FDs, row.Threads = int(ps.FDs), int(ps.Threads)
	}
	if st, err := fetchStats(client, s.stats); err == nil {
		if s.has {
			row.Msgs, row.Bytes = st.Deliveries-s.last.Deliveries, st.Wchar-s.last.Wchar
			row.Drops = st.Drops - s.last.Drops
		} else {
			row.Msgs, row.Bytes, row.Drops = st.Deliveries, st.Wchar, st.Drops
		}
		row.HasDrops = true
		row.MsgsTotal, row.BytesTotal = st.Deliveries, st.Wchar
		row.Goroutines, row.ConnsUp = st.Goroutines, st.Conns
		s.last, s.has = st, true
	}
	if row.HasWorker {
		c.addServerRow(s, row)
		c.flush()
	}
}

func fetchStats(client *http.Client, url string) (chat.Stats, error) {
	var st chat.Stats
	resp, err := client.Get(url)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("server stats: status %d", resp.StatusCode)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// addServerRow moves a second of s into the batch. A row whose process half
// never came (the load's second after the window) is left out.
func (c *controller) addServerRow(s *serverProc, row *store.Sample) {
	delete(s.rows, row.Sec)
	if !row.HasProc {
		return
	}
	if !row.HasWorker {
		// The server's half alone: latency unknown, but the server's counts are there.
		row.HasWorker = true
		row.ReconnectsTotal = s.recon
	}
	c.batch.Samples = append(c.batch.Samples, *row)
}

// writeServerRows writes every pending second up to k.
func (c *controller) writeServerRows(servers []*serverProc, k int64) {
	for _, s := range servers {
		for sec, row := range s.rows {
			if sec <= k {
				c.addServerRow(s, row)
			}
		}
	}
	c.flush()
}

// serverProgress prints a progress line every 10 s.
func (c *controller) serverProgress(servers []*serverProc, k, total int64) {
	if c.o.Progress == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%d/%ds]", k, total)
	for _, s := range servers {
		fmt.Fprintf(&b, " %s %d conns %d drops %d deliveries", s.lib, s.last.Conns, s.last.Drops, s.last.Deliveries)
	}
	fmt.Fprintln(c.o.Progress, b.String())
}
