package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// RunAndRecord runs the client bench cfg (Run) and records it in rec.Dir:
// results.json (every run), table.txt (the header and the table, or the
// sweep's), bench.txt (Go benchmark lines) and soak.db (a run of kind
// bench). An error is a bench that could not be recorded; a bench that
// stopped before its end is recorded as far as it went, with
// Recorded.RunErr.
func RunAndRecord(ctx context.Context, cfg Config, rec Recording) (*Recorded, error) {
	var err error
	if cfg.Exe, err = executable(cfg.Exe); err != nil {
		return nil, err
	}
	host, _ := sampler.HostInfo()
	versions := libVersions(cfg.Libs)
	var results []Result
	var runErr error
	start, elapsed := timeRun(host, true, func() { results, runErr = Run(ctx, cfg) })
	cfg.Progress = nil
	agg := Aggregate(results)
	header := clientHeader(rec, host, versions, cfg, results, elapsed)
	var tbuf, fbuf, gbuf bytes.Buffer
	if rec.Sweep != "" {
		PrintSweep(&tbuf, cfg, agg, header, true)
		PrintSweep(&fbuf, cfg, agg, header, false)
	} else {
		PrintTable(&tbuf, cfg, agg, header, true)
		PrintTable(&fbuf, cfg, agg, header, false)
	}
	if err := WriteGobench(&gbuf, host, versions, agg); err != nil {
		return nil, err
	}
	js, _ := json.MarshalIndent(struct {
		ID       string            `json:"id"`
		Host     map[string]string `json:"host"`
		Versions map[string]string `json:"versions"`
		Config   Config            `json:"config"`
		Elapsed  float64           `json:"elapsed_s"`
		Results  []Result          `json:"results"`
	}{rec.ID, host, versions, cfg, elapsed.Seconds(), results}, "", " ")
	if err := writeFiles(rec.Dir, map[string][]byte{"results.json": js, "table.txt": tbuf.Bytes(), "bench.txt": gbuf.Bytes()}); err != nil {
		return nil, err
	}
	settings := map[string]string{}
	for lib, v := range versions {
		settings["version "+lib] = v
	}
	if rec.Sweep != "" {
		settings["sweep"] = rec.Sweep
	}
	rows := make([]store.BenchResult, len(results))
	for i, r := range results {
		rows[i] = r.Row()
	}
	run := store.Run{ID: rec.ID, Name: "bench", Target: "firehose", Started: start, Ended: start.Add(elapsed), Host: host, Settings: settings}
	if err := writeRun(filepath.Join(rec.Dir, "soak.db"), run, cfg, runErr, func(db *store.DB) error { return db.WriteBenchResults(rows) }); err != nil {
		return nil, err
	}
	return &Recorded{Table: tbuf.Bytes(), Fitted: fbuf.Bytes(), Gobench: gbuf.Bytes(), RunErr: runErr}, nil
}

// libVersions are the libraries' module@version, by library.
func libVersions(libs []string) map[string]string {
	versions := map[string]string{}
	for _, lib := range libs {
		if tr, err := transport.Lookup(lib); err == nil {
			versions[lib] = tr.Module() + "@" + tr.Version()
		}
	}
	return versions
}

// clientHeader is the lines the client bench's table starts with: what ran,
// the host, the clients' runtime, the size of a run, deflate, the
// libraries' versions, then rec's notes and the sweep's sizes.
func clientHeader(rec Recording, host, versions map[string]string, cfg Config, rs []Result, elapsed time.Duration) []string {
	encs := ""
	if len(cfg.Encodings) > 0 {
		encs = fmt.Sprintf(" × %d encoding(s) (%s)", len(cfg.Encodings), strings.Join(cfg.Encodings, ", "))
	}
	h := []string{fmt.Sprintf("soak bench %s: %d scenario(s)%s × %d path(s) × %d librar(ies) + raw, %d counted round(s) after a warm-up, %.0f s",
		rec.ID, len(cfg.Scenarios), encs, len(cfg.Paths), len(cfg.Libs), cfg.Runs, elapsed.Seconds())}
	h = append(h, fmt.Sprintf("host: %s; %s logical CPUs; kernel %s; clocksource %s; governor %s; load %s; steal %s of all CPUs during the bench; %s/%s %s",
		orDash(host["cpu_model"]), orDash(host["cpu_logical"]), orDash(host["kernel"]), orDash(host["clocksource"]),
		orDash(host["cpu_governor"]), orDash(host["load_at_start"]), orDash(host["steal_during"]), runtime.GOOS, runtime.GOARCH, runtime.Version()))
	rts := map[string]bool{}
	for _, r := range rs {
		rts[r.Runtime.String()] = true
	}
	h = append(h, "client runtime: "+strings.Join(slices.Sorted(maps.Keys(rts)), " | "))
	rcv := "kernel default (autotuning)"
	if cfg.RcvBuf > 0 {
		rcv = fmt.Sprintf("%d bytes asked", cfg.RcvBuf) + effectiveRcvBuf(rs)
	}
	nDesc := fmt.Sprintf("%d bytes of payload per run", cfg.BytesPerRun)
	if cfg.N > 0 {
		nDesc = fmt.Sprintf("%d messages per run", cfg.N)
	}
	h = append(h, fmt.Sprintf("%s; SO_RCVBUF %s", nDesc, rcv))
	if slices.ContainsFunc(cfg.Compression, wire.Compression.Enabled) {
		var cs []string
		for _, c := range cfg.Compression {
			cs = append(cs, c.String())
		}
		d := cfg.Deflate.WithDefaults()
		h = append(h, fmt.Sprintf("permessage-deflate: %s (rows +deflate: on, +deflate_nct: no_context_takeover); firehose window %d bits, level %d, each batch compressed once per negotiated parameters; raw and ceiling rows read plain frames",
			strings.Join(cs, ", "), d.WindowBits, d.Level))
	}
	var vs []string
	for _, lib := range cfg.Libs {
		vs = append(vs, versions[lib])
	}
	h = append(h, "libraries: "+strings.Join(vs, ", "))
	h = append(h, rec.Notes...)
	if rec.Sweep != "" {
		var ss []string
		for _, n := range rec.Sizes {
			ss = append(ss, fmt.Sprint(n))
		}
		h = append(h, fmt.Sprintf("message-size sweep %s: %d sizes (bytes) %s", rec.Sweep, len(rec.Sizes), strings.Join(ss, ", ")))
	}
	return h
}

// effectiveRcvBuf is what the kernel made of the SO_RCVBUF asked, as the
// clients read it back (getsockopt: the kernel doubles the value asked and
// applies its minimum and maximum): ", effective N bytes", or a range when
// the clients saw several; "" when none read it.
func effectiveRcvBuf(rs []Result) string {
	lo, hi := 0, 0
	for _, r := range rs {
		if r.RcvBuf <= 0 {
			continue
		}
		if lo == 0 || r.RcvBuf < lo {
			lo = r.RcvBuf
		}
		hi = max(hi, r.RcvBuf)
	}
	switch {
	case lo == 0:
		return ""
	case lo == hi:
		return fmt.Sprintf(", effective %d bytes (getsockopt)", lo)
	}
	return fmt.Sprintf(", effective %d–%d bytes (getsockopt)", lo, hi)
}
