// Package serverside is the server-side soak (a profile with side:
// server), a role of its own beside the client soak's controller, sharing
// its lifecycle (controller.Lifecycle: the run directory, the database and
// its writer, the end). The libraries run as chat servers (package chat),
// one process each ("soak chatserver", the workers of this kind), side by
// side under one load process ("soak child chatsoak", chat.RunSoak) that
// this role spawns too and that injects the faults.
//
// Every second the role samples each server's process (RSS, CPU, FDs,
// threads, by pid as for the client soak's workers) and reads its /_stats
// (deliveries, connections, goroutines, written bytes, slow clients dropped
// in the second); the load client's second (latency p50/p99/max,
// reconnects) joins it into one samples row per server and second, keyed by
// the library as the client soak's rows are, so that report and export show
// the servers side by side. The load's fault, reconnect and drop notices
// are events; at the end each server's truth (the clients' deliveries
// against the server's writes, the drops against the slow readers and
// half-open clients injected) is a truth event and, when it fails, a note.
package serverside

import (
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
	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/runner/controller"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// soak is one server-side run.
type soak struct {
	*controller.Lifecycle
	o controller.Options
}

// serverProc is one library's chat server process.
type serverProc struct {
	lib   string
	ch    *child.Process
	proc  *sampler.Proc
	stats string // its /_stats URL
	url   string
	prev  controller.ProcAt
	last  chat.Stats
	has   bool
	rows  map[int64]*store.Sample // seconds sampled, waiting for the load's half
	end   *chat.SoakResult
	recon int64 // the load's latest reconnect count
	began time.Time
}

// Run runs a side: server profile (o.Profile), recording it in
// <OutDir>/<run-id>/soak.db as the client soak records its runs. ctx
// cancellation stops the run gracefully; such a run cannot be resumed.
func Run(ctx context.Context, o controller.Options) (*controller.Result, error) {
	if o.Profile == nil || !o.Profile.Server() {
		return nil, errors.New("serverside: the profile is not a side: server one")
	}
	l, err := controller.Begin(o)
	if err != nil {
		return nil, err
	}
	s := &soak{Lifecycle: l, o: l.Options()}
	res, err := s.run(ctx)
	return l.End(ctx, res, err)
}

func (s *soak) run(ctx context.Context) (*controller.Result, error) {
	p := s.o.Profile
	mono, wall := time.Now(), s.o.Now()
	start := wall.Add(time.Duration(p.Warmup)).Truncate(time.Millisecond)
	end := start.Add(time.Duration(p.Duration))
	s.SetEpoch(mono.Add(start.Sub(wall)))
	hostInfo, err := sampler.HostInfo()
	if err != nil {
		s.o.Log.Warn("host info", "err", err)
	}
	chatJSON, _ := json.Marshal(p.Chat)
	if err := s.Record(store.Run{ID: s.ID(), Name: p.Name, Target: "local chat servers", ProfileText: p.Text, Status: "running",
		GoVersion: runtime.Version(), Started: start, Planned: time.Duration(p.Duration), Host: hostInfo,
		Settings: map[string]string{"plan": `{"local":true,"side":"server"}`, "profile_path": p.Path, "side": "server",
			"chat": string(chatJSON), "libraries": strings.Join(p.Libraries, ",")}}); err != nil {
		return nil, err
	}
	var servers []*serverProc
	defer func() {
		for _, sv := range servers {
			sv.ch.Stop(5 * time.Second)
		}
	}()
	for _, lib := range p.Libraries {
		sv, err := s.startChatServer(ctx, lib)
		if err != nil {
			return nil, err
		}
		servers = append(servers, sv)
	}
	cfg := chat.SoakConfig{Hold: true, N: p.Chat.N, Rate: p.Chat.Rate, Payload: int(p.Chat.Payload), Start: start, Duration: time.Duration(p.Duration)}
	for _, sv := range servers {
		cfg.Rooms = append(cfg.Rooms, chat.SoakRoom{Lib: sv.lib, URL: sv.url, Stats: sv.stats})
	}
	for _, f := range p.ServerFaults() {
		cfg.Faults = append(cfg.Faults, chat.SoakFault{Kind: f.Kind, At: f.At, Every: f.Every, N: f.N, Size: f.Size})
	}
	load, err := child.Start(child.Options{Name: "load", Exe: s.o.Exe, Args: []string{"child", "chatsoak"}, Spec: cfg,
		Log: filepath.Join(s.Dir(), "load.log")})
	if err != nil {
		return nil, err
	}
	defer load.Stop(5 * time.Second)
	recs := make(chan chat.SoakRecord, 256)
	go func() {
		defer close(recs)
		if err := child.Each(load, func(r chat.SoakRecord) { recs <- r }); err != nil {
			s.o.Log.Warn("load records", "err", err)
		}
	}()
	s.o.Log.Info("server-side run started", "run", s.ID(), "dir", s.Dir(), "libraries", p.Libraries, "n", p.Chat.N, "rate", p.Chat.Rate,
		"start", start.Format(time.RFC3339), "duration", time.Duration(p.Duration))

	runErr := s.loop(ctx, servers, recs, end.Sub(start))
	load.Stop(5 * time.Second)
	loadCPU := ""
	if u, sy, ok := load.Rusage(); ok && p.Duration > 0 {
		// The load's own CPU, so a reader sees when the client, not the server, was the limit.
		loadCPU = fmt.Sprintf("; the load process (all rooms): %.2f CPU s, %.1f %% of one core over the window", u+sy, 100*(u+sy)/time.Duration(p.Duration).Seconds())
	}
	res := &controller.Result{}
	for _, sv := range servers {
		wr := controller.WorkerResult{Lib: sv.lib, SampledCPU: sv.prev.CPU()}
		ev := truthEvent(sv.end)
		ev.Lib, ev.TS, ev.Sec = sv.lib, s.o.Now(), time.Since(s.Epoch()).Seconds()
		if ev.Code != 0 {
			wr.Err = fmt.Errorf("%s: %s", sv.lib, ev.Detail)
		}
		ev.Detail += loadCPU
		s.AddEvent(ev)
		res.Workers = append(res.Workers, wr)
	}
	s.Flush()
	for i, sv := range servers {
		sv.ch.Stop(5 * time.Second)
		// Stopped by SIGTERM at the end: the server's own exit status (0
		// when it shut down cleanly, -1 when it had to be killed) and when.
		rec := store.Worker{Lib: sv.lib, Module: "chat server", Pid: sv.ch.Pid(), ExitCode: sv.ch.ExitCode(),
			Started: sv.began, Ended: s.o.Now(), SampledCPU: sv.prev.CPU(), MaxRSS: sv.last.MaxRSSKiB * 1024}
		if u, sy, ok := sv.ch.Rusage(); ok {
			rec.RusageUser, rec.RusageSys = u, sy
			res.Workers[i].RusageCPU = u + sy
		}
		if e := sv.end; e != nil {
			rec.LatCount, rec.LatP50, rec.LatP99, rec.LatP999, rec.LatMax = e.LatCount, e.LatP50, e.LatP99, e.LatP999, e.LatMax
			if e.Server != nil {
				rec.MaxRSS = e.Server.MaxRSSKiB * 1024
			}
		}
		if werr := s.o.EndRetry.Do("record worker "+sv.lib, func() error { return s.DB().UpsertWorker(rec) }); werr != nil {
			s.o.Log.Warn("record worker", "lib", sv.lib, "err", werr)
		}
	}
	return res, runErr
}

// truthEvent is a server's end account as the load client gave it (nil:
// none came): Code 0 when exact, 1 with what differs.
func truthEvent(e *chat.SoakResult) store.Event {
	ev := store.Event{Kind: wire.EventTruth, Slot: -1}
	switch {
	case e == nil:
		ev.Code, ev.Detail = 1, "no account from the load client"
	case e.Err != "":
		ev.Code, ev.Detail = 1, "the load stopped: "+e.Err
	default:
		if terr := e.Truth(); terr != nil {
			ev.Code, ev.Detail = 1, terr.Error()
		} else {
			ev.Detail = fmt.Sprintf("exact: clients read %d deliveries, the server wrote %d (less %d to the %d clients it dropped: %d slow readers, %d half-open, as injected); %d resets and %d closed for oversize messages, %d reconnects",
				e.Deliveries, e.Server.Deliveries, e.Server.DroppedDeliveries, e.Server.Drops, e.SlowDropped, e.HalfOpenDrop,
				e.Resets, e.Oversize, e.Reconnects)
		}
	}
	if e != nil && e.SkippedTicks > 0 {
		ev.Detail += fmt.Sprintf("; the load fell behind and skipped %d ticks of %s", e.SkippedTicks, chat.SoakTick)
	}
	return ev
}

// startChatServer starts one library's chat server on a free loopback
// port; it ends on SIGTERM.
func (s *soak) startChatServer(ctx context.Context, lib string) (*serverProc, error) {
	p := s.o.Profile
	log := filepath.Join(s.Dir(), "server-"+lib+".log")
	ch, err := child.Start(child.Options{Name: "chat server " + lib, Exe: s.o.Exe, Log: log, StopSignal: syscall.SIGTERM,
		Args: []string{"chatserver", "-lib", lib, "-n", strconv.Itoa(p.Chat.N), "-queue", strconv.Itoa(p.Chat.Queue), "-addr", "127.0.0.1:0"}})
	if err != nil {
		return nil, err
	}
	line, err := ch.ReadLine(ctx, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("no address: %w (see %s)", err, log)
	}
	ch.DiscardOut()
	addr := strings.TrimSpace(string(line))
	sv := &serverProc{lib: lib, ch: ch, url: "ws://" + addr + "/", stats: "http://" + addr + chat.StatsPath, rows: map[int64]*store.Sample{},
		began: s.o.Now()}
	if sv.proc, err = sampler.NewProc(ch.Pid()); err != nil {
		ch.Stop(5 * time.Second)
		return nil, err
	}
	return sv, nil
}

// loop samples every second until the load's end records came (or the
// window plus a grace passed, or a signal).
func (s *soak) loop(ctx context.Context, servers []*serverProc, recs <-chan chat.SoakRecord, window time.Duration) error {
	byLib := map[string]*serverProc{}
	for _, sv := range servers {
		byLib[sv.lib] = sv
	}
	client := &http.Client{Timeout: 900 * time.Millisecond}
	defer client.CloseIdleConnections()
	epoch := s.Epoch()
	k := int64(1)
	tick := time.NewTimer(time.Until(epoch.Add(time.Second)))
	defer tick.Stop()
	graceEnd := time.NewTimer(time.Until(epoch.Add(window + 60*time.Second)))
	defer graceEnd.Stop()
	total := int64(window / time.Second)
	ends := 0
	for ends < len(servers) || k <= total {
		select {
		case <-ctx.Done():
			s.writeRows(servers, 1<<62)
			return nil
		case <-s.o.Abort:
			s.writeRows(servers, 1<<62)
			return errors.New("aborted by second signal")
		case <-graceEnd.C:
			s.writeRows(servers, 1<<62)
			return fmt.Errorf("the load client gave no end account within 60 s of the window's end")
		case now := <-tick.C:
			switch k {
			case 1:
				s.SetState(wire.StateRunning)
			case total + 1:
				s.SetState(wire.StateDraining) // the servers' end accounts are awaited
			}
			if k <= total {
				for _, sv := range servers {
					s.sample(sv, k, now, client)
				}
				s.SampleHost(k, now)
				if k%10 == 0 || k == total {
					s.progress(servers, k, total)
				}
			}
			// A second whose load half has not come two seconds later is
			// written without it.
			s.writeRows(servers, k-2)
			k++
			tick.Reset(time.Until(epoch.Add(time.Duration(k) * time.Second)))
		case r, ok := <-recs:
			if !ok {
				s.writeRows(servers, 1<<62)
				return fmt.Errorf("the load client ended before its account (%d of %d servers; see load.log)", ends, len(servers))
			}
			sv := byLib[r.Lib]
			if sv == nil {
				continue
			}
			switch r.T {
			case chat.RecordSec:
				row := sv.rows[r.Sec]
				if row == nil {
					row = &store.Sample{Lib: sv.lib, Sec: r.Sec, TS: epoch.Add(time.Duration(r.Sec) * time.Second)}
					sv.rows[r.Sec] = row
				}
				row.LatP50, row.LatP99, row.LatMax, row.ReconnectsTotal = r.LatP50, r.LatP99, r.LatMax, r.Reconnects
				row.HasWorker = true
				sv.recon = max(sv.recon, r.Reconnects)
				if row.HasProc {
					s.addRow(sv, row)
					s.Flush()
				}
			case chat.RecordEvent:
				sec := r.At.Sub(s.o.Now()).Seconds() + time.Since(epoch).Seconds() // the record's instant on the run's seconds
				s.AddEvent(loadEvents(sv.lib, r, sec)...)
				s.Flush()
			case chat.RecordEnd:
				sv.end = r.End
				ends++
			}
		}
	}
	s.writeRows(servers, 1<<62)
	return nil
}

// loadEvents are the events of lib's server for a load's event record at
// second sec of the run: the record's, as the load named it, and before a
// reconnect a disconnected event per client reset (as a client soak records
// a reset: abnormal closure) or closed by the server.
func loadEvents(lib string, r chat.SoakRecord, sec float64) []store.Event {
	ev := store.Event{Lib: lib, TS: r.At, Sec: sec, Kind: r.Kind, Fault: r.Fault, Slot: -1, Code: r.Count, Detail: r.Detail, DurMs: r.DurMs}
	var out []store.Event
	if r.Kind == wire.EventReconnect {
		for i := range r.Count {
			d := store.Event{Lib: lib, TS: ev.TS, Sec: ev.Sec, Kind: wire.EventDisconnected, Slot: -1, Group: "chat",
				Code: 1006, Detail: "reset by the load client (fault)"}
			if i < len(r.Codes) { // closed by the server for an oversize message
				d.Code, d.Detail = r.Codes[i], "closed by the server after an oversize message (fault)"
			}
			out = append(out, d)
		}
	}
	return append(out, ev)
}

// sample takes second k of a server: its process and its /_stats.
func (s *soak) sample(sv *serverProc, k int64, now time.Time, client *http.Client) {
	row := sv.rows[k]
	if row == nil {
		row = &store.Sample{Lib: sv.lib, Sec: k, TS: s.Epoch().Add(time.Duration(k) * time.Second)}
		sv.rows[k] = row
	}
	if pa, err := sv.prev.Next(sv.proc, now); err == nil {
		sv.prev = pa
		pa.Fill(row)
	}
	if st, err := fetchStats(client, sv.stats); err == nil {
		if sv.has {
			row.Msgs, row.Bytes = st.Deliveries-sv.last.Deliveries, st.Wchar-sv.last.Wchar
			row.Drops, row.Writes = st.Drops-sv.last.Drops, st.Syscw-sv.last.Syscw
		} else {
			row.Msgs, row.Bytes, row.Drops, row.Writes = st.Deliveries, st.Wchar, st.Drops, st.Syscw
		}
		row.HasDrops = true
		row.MsgsTotal, row.BytesTotal = st.Deliveries, st.Wchar
		row.Goroutines, row.ConnsUp = st.Goroutines, st.Conns
		sv.last, sv.has = st, true
	}
	if row.HasWorker {
		s.addRow(sv, row)
		s.Flush()
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

// addRow moves a second of sv into the batch. A row whose process half
// never came (the load's second after the window) is left out.
func (s *soak) addRow(sv *serverProc, row *store.Sample) {
	delete(sv.rows, row.Sec)
	if !row.HasProc {
		return
	}
	if !row.HasWorker {
		// The server's half alone: latency unknown, but the server's counts are there.
		row.HasWorker = true
		row.ReconnectsTotal = sv.recon
	}
	s.AddSample(*row)
}

// writeRows writes every pending second up to k.
func (s *soak) writeRows(servers []*serverProc, k int64) {
	for _, sv := range servers {
		for sec, row := range sv.rows {
			if sec <= k {
				s.addRow(sv, row)
			}
		}
	}
	s.Flush()
}

// progress prints a progress report every 10 s.
func (s *soak) progress(servers []*serverProc, k, total int64) {
	items := make([]controller.ProgressItem, 0, len(servers))
	for _, sv := range servers {
		items = append(items, controller.ProgressItem{Name: sv.lib, Counts: []controller.ProgressCount{
			{N: sv.last.Deliveries, Unit: "deliveries"}, {N: int64(sv.last.Conns), Unit: "clients"}, {N: sv.last.Drops, Unit: "drops"}}})
	}
	s.Progress(fmt.Sprintf("[%4ds/%ds]", k, total), items)
}
