package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/metrics"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// defaultBenchProfile is read when -profile is not given and it exists.
const defaultBenchProfile = "profiles/bench.yaml"

// benchProfile is the YAML of a bench profile (profiles/bench.yaml documents every key).
type benchProfile struct {
	Scenarios   []string `yaml:"scenarios"`
	Libs        []string `yaml:"libs"`
	Paths       []string `yaml:"paths"`
	Encodings   []string `yaml:"encodings"`   // codec names, each a row per scenario
	Compression []string `yaml:"compression"` // permessage-deflate settings, each scenario run under each
	Deflate     struct {
		WindowBits int `yaml:"window_bits"`
		Level      int `yaml:"level"`
	} `yaml:"deflate"` // how the firehose compresses
	Runs        int    `yaml:"runs"`
	N           int    `yaml:"n"`
	BytesPerRun string `yaml:"bytes_per_run"`
	Seed        uint64 `yaml:"seed"`
	RcvBuf      string `yaml:"rcvbuf"`
	CPUs        string `yaml:"cpus"`
	Runtime     struct {
		GOMAXPROCS int    `yaml:"gomaxprocs"`
		GOGC       int    `yaml:"gogc"`
		GOMEMLIMIT string `yaml:"gomemlimit"`
	} `yaml:"worker_runtime"`
}

// defaultBench is the built-in profile, the same as profiles/bench.yaml.
func defaultBench() benchProfile {
	return benchProfile{Scenarios: firehose.Names(), Libs: transport.Names(), Paths: bench.LibPaths,
		Runs: 5, BytesPerRun: "24MB", Seed: 1, Compression: []string{"off"}}
}

func loadBenchProfile(path string, explicit bool) (benchProfile, error) {
	p := defaultBench()
	b, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		return p, usageError{fmt.Errorf("flag -profile: %w", err)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return p, usageError{fmt.Errorf("flag -profile: %s: %w", path, err)}
	}
	return p, nil
}

// benchCmd runs soak bench.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("bench", stdout, stderr)
	a := benchFlags(fset)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	path := *a.profile
	if path == "" {
		path = defaultBenchProfile
	}
	p, err := loadBenchProfile(path, *a.profile != "")
	if err != nil {
		return err
	}
	lists := map[string]*[]string{"scenarios": &p.Scenarios, "libs": &p.Libs, "paths": &p.Paths, "encodings": &p.Encodings, "compression": &p.Compression}
	values := map[string]string{"scenarios": *a.scenarios, "libs": *a.libs, "paths": *a.paths, "encodings": *a.encodings, "compression": *a.compression}
	for name, dst := range lists {
		if set[name] {
			*dst = splitList(values[name])
		}
	}
	if set["runs"] {
		p.Runs = *a.runs
	}
	if set["n"] {
		p.N = *a.n
	}
	if set["rcvbuf"] {
		p.RcvBuf = *a.rcvbuf
	}
	if set["cpus"] {
		p.CPUs = *a.cpus
	}
	var sizes []int
	if set["sweep"] {
		if set["scenarios"] {
			return usageError{errors.New("flag -sweep: not with -scenarios: the sweep's scenarios are its sizes")}
		}
		if len(p.Encodings) > 0 {
			return usageError{errors.New("flag -sweep: not with -encodings: the sweep reads json")}
		}
		if len(p.Compression) > 0 && !slices.Equal(p.Compression, []string{"off"}) {
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
	cfg, notes, err := benchConfig(p)
	if err != nil {
		return err
	}
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
	host, _ := metrics.HostInfo()
	versions := map[string]string{}
	for _, lib := range cfg.Libs {
		if tr, err := transport.Lookup(lib); err == nil {
			versions[lib] = tr.Module() + "@" + tr.Version()
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	hs := metrics.NewHost()
	_, hsErr := hs.Sample() // the CPU counters at the start: steal and busy over the bench, below
	results, runErr := bench.Run(ctx, cfg)
	elapsed := time.Since(start)
	if s, err := hs.Sample(); err == nil && hsErr == nil {
		host["steal_during"] = fmt.Sprintf("%.1f %%", s.StealPct)
		host["cpu_busy_during"] = fmt.Sprintf("%.1f %%", s.CPUPct)
	}
	table := bench.Summarize(cfg, results)
	header := benchHeader(id, host, versions, cfg, results, notes, elapsed)
	var tbuf, gbuf bytes.Buffer
	if sizes != nil {
		table.PrintSweep(&tbuf, header)
	} else {
		table.Print(&tbuf, header)
	}
	if err := bench.WriteGobench(&gbuf, host, versions, results); err != nil {
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

// benchConfig checks a profile (flags applied) and makes the bench's config;
// notes are what the header says about it (pinning skipped).
func benchConfig(p benchProfile) (bench.Config, []string, error) {
	var cfg bench.Config
	var notes []string
	if len(p.Scenarios) == 0 {
		return cfg, nil, usageError{errors.New("flag -scenarios: no scenario: want names such as aggTrade,depth")}
	}
	for _, s := range p.Scenarios {
		if _, err := firehose.Lookup(s); err != nil {
			return cfg, nil, usageError{fmt.Errorf("flag -scenarios: %w", err)}
		}
	}
	if len(p.Libs) == 0 {
		return cfg, nil, usageError{errors.New("flag -libs: no library: want names such as gorilla,gobwas")}
	}
	for _, l := range p.Libs {
		if _, err := transport.Lookup(l); err != nil {
			return cfg, nil, usageError{fmt.Errorf("flag -libs: %w", err)}
		}
	}
	for _, x := range p.Paths {
		if !slices.Contains(bench.LibPaths, x) {
			return cfg, nil, usageError{fmt.Errorf("flag -paths: unknown path %q (known: %s)", x, strings.Join(bench.LibPaths, ", "))}
		}
	}
	if len(p.Paths) == 0 {
		return cfg, nil, usageError{errors.New("flag -paths: no path: want bare, full or decode")}
	}
	for _, e := range p.Encodings {
		if _, err := codec.Parse(e); err != nil {
			return cfg, nil, usageError{fmt.Errorf("flag -encodings: %w", err)}
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(p.Encodings)))) != len(p.Encodings) {
		return cfg, nil, usageError{fmt.Errorf("flag -encodings: %s names an encoding twice", strings.Join(p.Encodings, ","))}
	}
	if p.Runs < 1 || p.Runs > 1000 {
		return cfg, nil, usageError{fmt.Errorf("flag -runs: %d is not a number of rounds: want 1 to 1000", p.Runs)}
	}
	if p.N < 0 {
		return cfg, nil, usageError{fmt.Errorf("flag -n: %d is not a message count: want 1 or more (0: bytes_per_run)", p.N)}
	}
	cfg = bench.Config{Scenarios: p.Scenarios, Encodings: p.Encodings, Libs: p.Libs, Paths: p.Paths, Runs: p.Runs, N: p.N, Seed: p.Seed,
		Runtime: wire.Runtime{GOMAXPROCS: p.Runtime.GOMAXPROCS, GOGC: p.Runtime.GOGC}}
	seen := map[wire.Compression]bool{}
	for _, x := range p.Compression {
		c, err := wire.ParseCompression(x)
		if err != nil {
			return cfg, nil, usageError{fmt.Errorf("flag -compression: %w", err)}
		}
		if seen[c] {
			return cfg, nil, usageError{fmt.Errorf("flag -compression: %s listed twice", c)}
		}
		seen[c] = true
		cfg.Compression = append(cfg.Compression, c)
	}
	cfg.Deflate = wire.Deflate{WindowBits: p.Deflate.WindowBits, Level: p.Deflate.Level}
	if err := cfg.Deflate.Validate(); err != nil {
		return cfg, nil, usageError{fmt.Errorf("flag -profile: %w", err)}
	}
	cfg.Deflate = cfg.Deflate.WithDefaults()
	if p.BytesPerRun != "" {
		b, err := profile.ParseByteSize(p.BytesPerRun)
		if err != nil || b < 1 {
			return cfg, nil, usageError{fmt.Errorf("flag -profile: bytes_per_run %q: want a size such as 8MB", p.BytesPerRun)}
		}
		cfg.BytesPerRun = int64(b)
	} else if p.N == 0 {
		cfg.BytesPerRun = 41_000_000
	}
	if p.RcvBuf != "" {
		b, err := profile.ParseByteSize(p.RcvBuf)
		if err != nil || b < 0 || b > 1<<30 {
			return cfg, nil, usageError{fmt.Errorf("flag -rcvbuf: %q is not a buffer size: want bytes or a size such as 128KiB (0: the kernel's autotuning)", p.RcvBuf)}
		}
		cfg.RcvBuf = int(b)
	}
	if p.Runtime.GOMEMLIMIT != "" {
		b, err := profile.ParseByteSize(p.Runtime.GOMEMLIMIT)
		if err != nil || b < 0 {
			return cfg, nil, usageError{fmt.Errorf("flag -profile: worker_runtime.gomemlimit %q: want a size such as 512MiB", p.Runtime.GOMEMLIMIT)}
		}
		cfg.Runtime.GOMEMLIMIT = int64(b)
	}
	if p.Runtime.GOMAXPROCS < 0 || p.Runtime.GOGC < -1 {
		return cfg, nil, usageError{errors.New("flag -profile: worker_runtime: gomaxprocs 0 or more, gogc -1 or more")}
	}
	if p.CPUs != "" {
		srv, cli, err := parseCPUs(p.CPUs)
		if err != nil {
			return cfg, nil, usageError{fmt.Errorf("flag -cpus: %w", err)}
		}
		if missing := absentCPUs(append(slices.Clone(srv), cli...)); len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("-cpus %s: not pinned, this machine lacks CPU(s) %v", p.CPUs, missing))
		} else {
			cfg.ServerCPUs, cfg.ClientCPUs = srv, cli
			notes = append(notes, fmt.Sprintf("pinned: firehose on CPU(s) %v, clients on %v", srv, cli))
		}
	}
	return cfg, notes, nil
}

// parseCPUs reads "SERVER:CLIENT", each a taskset-style list such as 0 or 2-3,5.
func parseCPUs(s string) (srv, cli []int, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, nil, fmt.Errorf("%q: want SERVER:CLIENT CPU lists, such as 0:1 or 0-1:2-3", s)
	}
	if srv, err = cpuList(a); err == nil {
		cli, err = cpuList(b)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%q: %w", s, err)
	}
	return srv, cli, nil
}

func cpuList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b > 1023 {
			return nil, fmt.Errorf("%q is not a CPU list such as 0, 2-3 or 0,2", s)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

func absentCPUs(cpus []int) []int {
	have := bench.UsableCPUs()
	var out []int
	for _, c := range cpus {
		if !have[c] {
			out = append(out, c)
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

// benchClientCmd is the hidden client process of soak bench: a ClientSpec
// on stdin, one JSON result line on stdout.
func benchClientCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fset := newFlagSet("benchclient", stdout, stderr)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	var spec bench.ClientSpec
	if err := json.NewDecoder(stdin).Decode(&spec); err != nil {
		return fmt.Errorf("benchclient: read spec: %w", err)
	}
	res := bench.RunClient(ctx, spec)
	b, _ := json.Marshal(res)
	_, err := fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// benchServerCmd is the hidden firehose process of soak bench.
func benchServerCmd(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fset := newFlagSet("benchserver", stdout, stderr)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	signal.Ignore(syscall.SIGINT) // the parent ends it (stdin)
	return bench.Serve(stdin, stdout)
}

// writeBenchDB records the bench in its directory's soak.db: a run of kind
// bench (the host, the libraries' versions and the configuration in its
// settings, and the -sweep argument of a sweep) and every client run, so that report, export and compare read
// it as they read a soak.
func writeBenchDB(path, id, sweep string, host, versions map[string]string, cfg bench.Config, start time.Time, elapsed time.Duration,
	runErr error, results []bench.Result) error {
	settings := map[string]string{}
	for lib, v := range versions {
		settings["version "+lib] = v
	}
	if sweep != "" {
		settings["sweep"] = sweep
	}
	rows := make([]store.BenchResult, len(results))
	for i, r := range results {
		rows[i] = r.Row()
	}
	run := store.Run{ID: id, Name: "bench", Target: "firehose", Started: start, Ended: start.Add(elapsed), Host: host, Settings: settings}
	return writeBenchRun(path, run, cfg, runErr, rows)
}

// writeBenchRun writes a bench's soak.db: the run (its status from runErr,
// the Go version, cfg as JSON in the settings), kind bench, and its rows.
func writeBenchRun(path string, run store.Run, cfg any, runErr error, rows []store.BenchResult) error {
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	cj, _ := json.Marshal(cfg)
	run.Settings["config"] = string(cj)
	run.GoVersion = runtime.Version()
	run.Status = "done"
	if runErr != nil {
		run.Status = "failed: " + runErr.Error()
	}
	err = errors.Join(db.CreateRun(run), db.SetKind(store.KindBench), db.WriteBenchResults(rows))
	return errors.Join(err, db.Close())
}
