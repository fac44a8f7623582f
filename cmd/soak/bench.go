package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// benchCmd runs soak bench.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("bench", stdout, stderr)
	a := benchFlags(fset)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	p, err := loadBench(fset, *a.profile)
	if err != nil {
		return err
	}
	var sizes []int
	if set["sweep"] {
		if set["scenarios"] {
			return usageError{errors.New("flag -sweep: not with -scenarios: the sweep's scenarios are its sizes")}
		}
		if len(p.Encodings) > 0 {
			return usageError{errors.New("flag -sweep: not with -encodings: the sweep reads json")}
		}
		if slices.ContainsFunc(p.Compression, wire.Compression.Enabled) {
			return usageError{errors.New("flag -sweep: not with -compression: the sweep reads plain frames")}
		}
		if sizes, err = parseSweep(*a.sweep); err != nil {
			return usageError{fmt.Errorf("flag -sweep: %w", err)}
		}
		if p.Scenarios, err = bench.SweepScenarios(sizes); err != nil {
			return usageError{fmt.Errorf("flag -sweep: %s: %w", *a.sweep, err)}
		}
		if !set["paths"] {
			p.Paths = []string{bench.PathBare}
		}
	}
	cfg, notes := benchConfig(p)
	if sizes != nil {
		var ss []string
		for _, n := range sizes {
			ss = append(ss, fmt.Sprint(n))
		}
		notes = append(notes, fmt.Sprintf("message-size sweep %s: %d sizes (bytes) %s", *a.sweep, len(sizes), strings.Join(ss, ", ")))
	}
	if *a.format != "table" && *a.format != "gobench" {
		return usageError{fmt.Errorf("flag -format: %q is not a format: want table or gobench", *a.format)}
	}
	id := "bench-" + time.Now().UTC().Format("20060102-150405")
	dir := filepath.Join(*a.out, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError{fmt.Errorf("flag -out: %w", err)}
	}
	if err := writeProbe(dir); err != nil {
		return usageError{fmt.Errorf("flag -out: %w", err)}
	}
	if cfg.Exe, err = os.Executable(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	cfg.Progress = stderr
	host, _ := sampler.HostInfo()
	versions := map[string]string{}
	for _, lib := range cfg.Libs {
		if tr, err := transport.Lookup(lib); err == nil {
			versions[lib] = tr.Module() + "@" + tr.Version()
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	hs := sampler.NewHost()
	_, hsErr := hs.Sample() // the CPU counters at the start: steal and busy over the bench, below
	results, runErr := bench.Run(ctx, cfg)
	elapsed := time.Since(start)
	if s, err := hs.Sample(); err == nil && hsErr == nil {
		host["steal_during"] = fmt.Sprintf("%.1f %%", s.StealPct)
		host["cpu_busy_during"] = fmt.Sprintf("%.1f %%", s.CPUPct)
	}
	agg := bench.Aggregate(results)
	header := benchHeader(id, host, versions, cfg, results, notes, elapsed)
	var tbuf, gbuf bytes.Buffer
	if sizes != nil {
		bench.PrintSweep(&tbuf, cfg, agg, header)
	} else {
		bench.PrintTable(&tbuf, cfg, agg, header)
	}
	if err := bench.WriteGobench(&gbuf, host, versions, agg); err != nil {
		return err
	}
	rec := struct {
		ID       string            `json:"id"`
		Host     map[string]string `json:"host"`
		Versions map[string]string `json:"versions"`
		Config   bench.Config      `json:"config"`
		Elapsed  float64           `json:"elapsed_s"`
		Results  []bench.Result    `json:"results"`
	}{id, host, versions, cfg, elapsed.Seconds(), results}
	rec.Config.Progress = nil
	js, _ := json.MarshalIndent(rec, "", " ")
	for name, b := range map[string][]byte{"results.json": js, "table.txt": tbuf.Bytes(), "bench.txt": gbuf.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	sweep := ""
	if sizes != nil {
		sweep = *a.sweep
	}
	if err := writeBenchDB(filepath.Join(dir, "soak.db"), id, sweep, host, versions, rec.Config, start, elapsed, runErr, results); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if *a.format == "gobench" {
		_, _ = stdout.Write(gbuf.Bytes())
	} else {
		_, _ = stdout.Write(tbuf.Bytes())
		fmt.Fprintf(stdout, "\nresults: %s (soak.db, results.json, table.txt, bench.txt for benchstat)\n", dir)
	}
	if runErr != nil {
		return fmt.Errorf("bench: %w", runErr)
	}
	return nil
}

// parseSweep reads -sweep LO..HI, two sizes as a profile writes them (9KB,
// 128KiB, 900000), and returns the sweep's sizes in log steps.
func parseSweep(s string) ([]int, error) {
	a, b, ok := strings.Cut(s, "..")
	var lo, hi profile.ByteSize
	var err error
	if ok {
		if lo, err = profile.ParseByteSize(a); err == nil {
			hi, err = profile.ParseByteSize(b)
		}
	}
	if !ok || err != nil || lo < 1 || hi < 1 {
		return nil, fmt.Errorf("%q is not a size range: want LO..HI, such as 9KB..900KB", s)
	}
	if lo > hi || int64(hi) > 1<<40 {
		return nil, fmt.Errorf("%s: want LO at most HI, such as 9KB..900KB", s)
	}
	return bench.SweepSizes(int(lo), int(hi))
}

// writeProbe checks that dir takes a file.
func writeProbe(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func benchHeader(id string, host, versions map[string]string, cfg bench.Config, rs []bench.Result, notes []string, elapsed time.Duration) []string {
	encs := ""
	if len(cfg.Encodings) > 0 {
		encs = fmt.Sprintf(" × %d encoding(s) (%s)", len(cfg.Encodings), strings.Join(cfg.Encodings, ", "))
	}
	h := []string{fmt.Sprintf("soak bench %s: %d scenario(s)%s × %d path(s) × %d librar(ies) + raw, %d counted round(s) after a warm-up, %.0f s",
		id, len(cfg.Scenarios), encs, len(cfg.Paths), len(cfg.Libs), cfg.Runs, elapsed.Seconds())}
	h = append(h, fmt.Sprintf("host: %s; %s logical CPUs; kernel %s; clocksource %s; governor %s; load %s; steal %s of all CPUs during the bench; %s/%s %s",
		orDash(host["cpu_model"]), orDash(host["cpu_logical"]), orDash(host["kernel"]), orDash(host["clocksource"]),
		orDash(host["cpu_governor"]), orDash(host["load_at_start"]), orDash(host["steal_during"]), runtime.GOOS, runtime.GOARCH, runtime.Version()))
	rts := map[string]bool{}
	for _, r := range rs {
		rts[r.Runtime.String()] = true
	}
	h = append(h, "client runtime: "+strings.Join(slices.Sorted(mapsKeys(rts)), " | "))
	rcv := "kernel default (autotuning)"
	if cfg.RcvBuf > 0 {
		rcv = fmt.Sprint(cfg.RcvBuf, " bytes")
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
	return append(h, notes...)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
