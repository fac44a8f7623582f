package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"slices"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/profile"
)

// defaultBenchProfile is read when -profile is not given and it exists.
const defaultBenchProfile = "profiles/bench.yaml"

// benchKeys are soak bench's flags that stand for the bench profile's key of
// the same name: each is read as the file's value is (profile.Bench.Set).
var benchKeys = []string{"scenarios", "libs", "paths", "encodings", "compression", "runs", "n", "rcvbuf", "cpus"}

// benchNames are the names a bench profile's lists take that the profile
// package does not link: the firehose's scenarios (sized ones as well) and
// the bench's client paths.
func benchNames() profile.BenchNames {
	return profile.BenchNames{
		Scenarios: firehose.Names(),
		Scenario:  func(s string) error { _, err := firehose.Lookup(s); return err },
		Paths:     bench.LibPaths,
	}
}

// loadBench reads the bench profile (-profile FILE; without it
// profiles/bench.yaml when it exists, else the built-in one) and lays the
// flags of benchKeys that were given over it.
func loadBench(fset *flagSet, path string) (*profile.Bench, error) {
	given := given(fset, "profile")
	if given && path == "" {
		return nil, usageError{errors.New("flag -profile: no value: want a bench profile FILE, or leave the flag out for " + defaultBenchProfile)}
	}
	if !given {
		path = defaultBenchProfile
	}
	p, err := profile.LoadBench(path, benchNames())
	var pe *profile.Error
	switch {
	case err == nil:
	case !given && errors.Is(err, fs.ErrNotExist):
		p = profile.DefaultBench(benchNames())
	case errors.As(err, &pe):
		return nil, usageError{err} // FILE:LINE: the problem
	default:
		return nil, usageError{fmt.Errorf("flag -profile: %w", err)}
	}
	var ferr error
	fset.Visit(func(f *flag.Flag) {
		if ferr == nil && slices.Contains(benchKeys, f.Name) {
			ferr = p.Set(f.Name, f.Value.String())
		}
	})
	if ferr != nil {
		return nil, usageError{ferr} // flag -NAME: the problem
	}
	return p, nil
}

// benchConfig makes the bench's config of a checked profile; notes are what
// the header says about it (pinning skipped on a machine without the CPUs).
func benchConfig(p *profile.Bench) (bench.Config, []string) {
	cfg := bench.Config{Scenarios: p.Scenarios, Encodings: p.Encodings, Libs: p.Libs, Paths: p.Paths, Runs: p.Runs, N: p.N,
		BytesPerRun: int64(p.BytesPerRun), Seed: p.Seed, RcvBuf: int(p.RcvBuf), Runtime: p.WorkerRuntime.Wire(),
		Compression: p.Compression, Deflate: p.Deflate.Wire()}
	var notes []string
	if c := p.CPUs; c.Pinned() {
		if missing := absentCPUs(c); len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("-cpus %s: not pinned, this machine lacks CPU(s) %v", c, missing))
		} else {
			cfg.ServerCPUs, cfg.ClientCPUs = c.Server, c.Client
			notes = append(notes, fmt.Sprintf("pinned: firehose on CPU(s) %v, clients on %v", c.Server, c.Client))
		}
	}
	return cfg, notes
}

// absentCPUs are the CPUs of c this process may not run on.
func absentCPUs(c profile.CPUs) []int {
	have := bench.UsableCPUs()
	var out []int
	for _, n := range append(slices.Clone(c.Server), c.Client...) {
		if !have[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// given tells whether flag name was on the command line, an empty value
// included: such a value is refused, not taken for the flag left out.
func given(fs *flagSet, name string) bool {
	seen := false
	fs.Visit(func(f *flag.Flag) { seen = seen || f.Name == name })
	return seen
}
