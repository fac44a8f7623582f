package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/profile"
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
