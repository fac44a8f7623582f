package bench

import (
	"fmt"

	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/link"
	"github.com/wssoak/wssoak/internal/profile"
)

// ProfileNames are the names a bench profile's lists take that the profile
// package does not link: the firehose's scenarios (sized ones as well) and
// the bench's client paths.
func ProfileNames() profile.BenchNames {
	return profile.BenchNames{
		Scenarios: firehose.Names(),
		Scenario:  func(s string) error { _, err := firehose.Lookup(s); return err },
		Paths:     LibPaths,
	}
}

// ConfigFromProfile makes the client bench's config of a checked profile;
// notes are what the header says about it: where the processes are pinned,
// or that pinning was skipped on a machine without the profile's CPUs.
func ConfigFromProfile(p *profile.Bench) (Config, []string) {
	cfg := Config{Scenarios: p.Scenarios, Encodings: p.Encodings, Libs: p.Libs, Paths: p.Paths, Runs: p.Runs, N: p.N,
		BytesPerRun: int64(p.BytesPerRun), Seed: p.Seed, RcvBuf: int(p.RcvBuf), Runtime: p.WorkerRuntime.Wire(),
		Compression: p.Compression, Deflate: p.Deflate.Wire(), Link: p.Link}
	var notes []string
	if p.Link.On {
		notes = append(notes, fmt.Sprintf("link: %s (a run carries at most what the link moves in %d s)", link.Describe(p.Link), LinkSeconds))
	}
	if c := p.CPUs; c.Pinned() {
		if missing := c.Missing(UsableCPUs()); len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("-cpus %s: not pinned, this machine lacks CPU(s) %v", c, missing))
		} else {
			cfg.ServerCPUs, cfg.ClientCPUs = c.Server, c.Client
			notes = append(notes, fmt.Sprintf("pinned: firehose on CPU(s) %v, clients on %v", c.Server, c.Client))
		}
	}
	return cfg, notes
}
