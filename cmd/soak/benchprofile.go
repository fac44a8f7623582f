package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/wire"
)

// defaultBenchProfile is read when -profile is not given and it exists.
const defaultBenchProfile = "profiles/bench.yaml"

// benchKeys are soak bench's flags that stand for the bench profile's key of
// the same name: each is read as the file's value is (profile.Bench.Set).
var benchKeys = []string{"scenarios", "libs", "paths", "encodings", "compression", "runs", "n", "rcvbuf", "cpus"}

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
	p, err := profile.LoadBench(path, bench.ProfileNames())
	var pe *profile.Error
	switch {
	case err == nil:
	case !given && errors.Is(err, fs.ErrNotExist):
		p = profile.DefaultBench(bench.ProfileNames())
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

// sweepProfile lays -sweep LO..HI over the profile p: its scenarios become
// the sweep's sizes (returned), its paths bare unless -paths is given. A
// sweep reads plain json: -scenarios, -encodings and -compression are refused.
func sweepProfile(fset *flagSet, p *profile.Bench, arg string) ([]int, error) {
	if given(fset, "scenarios") {
		return nil, usageError{errors.New("flag -sweep: not with -scenarios: the sweep's scenarios are its sizes")}
	}
	if len(p.Encodings) > 0 {
		return nil, usageError{errors.New("flag -sweep: not with -encodings: the sweep reads json")}
	}
	if slices.ContainsFunc(p.Compression, wire.Compression.Enabled) {
		return nil, usageError{errors.New("flag -sweep: not with -compression: the sweep reads plain frames")}
	}
	sizes, err := parseSweep(arg)
	if err != nil {
		return nil, usageError{fmt.Errorf("flag -sweep: %w", err)}
	}
	if p.Scenarios, err = bench.SweepScenarios(sizes); err != nil {
		return nil, usageError{fmt.Errorf("flag -sweep: %s: %w", arg, err)}
	}
	if !given(fset, "paths") {
		p.Paths = []string{bench.PathBare}
	}
	return sizes, nil
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
