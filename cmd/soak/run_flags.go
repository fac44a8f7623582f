package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/runner/outcome"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// runHelp is what soak run -h prints.
var runHelp = help{
	synopsis: "soak run [-profile FILE] [-duration D] [-libs LIBS] [-label KEY=VALUE]... [-out DIR | -dir DIR] [-wide]\n" +
		"       soak run ... [-http HOST:PORT] [-baseline COLUMN]\n" +
		"       soak run -resume RUN_DIR",
	about: `Run a soak: every column of the profile (a library, or a variant of one) in its own
worker process on the same streams, one row per worker per second into DIR/<run-id>/soak.db.
Prints the comparison table and writes report.html beside the database. Exit code 3 when a
column broke a threshold of the profile, 4 when the run was interrupted (Ctrl-C).`,
	examples: []example{
		{"soak run", "2 minutes of the five libraries against the embedded replay server (profiles/local.yaml)"},
		{"soak run -duration 30s -libs gorilla,gws -out /tmp/runs", "30 seconds of two libraries, the run directory under /tmp/runs"},
		{"soak run -profile profiles/binance-24h.yaml -http 127.0.0.1:8080", "a day on live Binance, the report and Prometheus /metrics served while it runs"},
		{"soak run -resume out/20261201-233000-local", "continue a run whose controller died, in the same database, up to its original end"},
		{"soak run -dir /var/lib/soak/run -profile profiles/binance-24h.yaml -label region=fra", "a day in that directory, labelled region=fra; started again after a crash, it resumes the run there"},
		{"soak run -http 0.0.0.0:9464 -http-public -http-token-file tok -http-cert crt.pem -http-key key.pem -metrics-only", "/metrics alone, for a Prometheus on another host: TLS, and a bearer token"},
		{"soak run -libs gorilla,gobwas,gws -baseline gorilla", "three libraries, each marked better, worse or = against gorilla"},
	},
	flags: func(fs *flagSet) any { return runFlags(fs) },
}

// runArgs are the flags of soak run.
type runArgs struct {
	profile, duration, out, libs, resume, http *string
	baseline                                   *string
	workerTimeout                              *time.Duration
	verbose, httpPublic, wide                  *bool
	backlog                                    *int
	dir, tokenFile, httpCert, httpKey          *string
	labels                                     *labelFlag
	linger                                     *time.Duration
	metricsOnly                                *bool
	// resumesDir: -dir names a directory whose unfinished run is resumed;
	// the flags that made it (-profile, -duration, -libs, -label) are then
	// those of its first start, and not looked at again.
	resumesDir bool
}

func runFlags(fs *flagSet) *runArgs {
	labels := &labelFlag{}
	fs.Var(labels, "label", "label the run `KEY=VALUE` (repeatable; over the profile's labels:): on soak_run_info and in the report over several runs")
	return &runArgs{
		profile:       fs.String("profile", "", "YAML profile `FILE` (default "+defaultProfile+", or the built-in default when that file is absent)"),
		duration:      fs.String("duration", "", "measured `DURATION`, overrides the profile (e.g. 30s, 2m, 24h)"),
		out:           fs.String("out", "out", "make the run directory in `DIR`"),
		libs:          fs.String("libs", "", "comma-separated `LIBS` to run, overrides the profile: libraries ("+strings.Join(wire.Libraries, ", ")+"), or the names of the profile's variants"),
		workerTimeout: fs.Duration("worker-timeout", 30*time.Second, "kill and restart a worker that sent nothing for this `DURATION`"),
		verbose:       fs.Bool("v", false, "log debug details"),
		backlog:       fs.Int("write-backlog", 600, "`SECONDS` of data kept in memory while database writes fail (disk full); beyond that the oldest are dropped and recorded as missing"),
		resume:        fs.String("resume", "", "continue the crashed run in `RUN_DIR` (same database) up to its original end"),
		http:          fs.String("http", "", "serve the live view (the report at /, Prometheus /metrics) on `HOST:PORT`, e.g. 127.0.0.1:8080"),
		httpPublic:    fs.Bool("http-public", false, "allow -http on an address other than loopback; needs a bearer token (-http-token-file, or $"+tokenEnv+")"),
		dir:           fs.String("dir", "", "the run directory itself: `DIR` is made for a new run, or its unfinished run is resumed (a service's restart)"),
		tokenFile:     fs.String("http-token-file", "", "the live view's bearer token is the first line of `FILE` (default: $"+tokenEnv+"); every request must carry it"),
		httpCert:      fs.String("http-cert", "", "serve the live view over TLS with this PEM certificate (chain) `FILE` (with -http-key)"),
		httpKey:       fs.String("http-key", "", "the PEM private key `FILE` of -http-cert"),
		metricsOnly:   fs.Bool("metrics-only", false, "the live view serves /metrics alone, not the report"),
		linger:        fs.Duration("linger", 30*time.Second, "with -http, keep the live view up this `DURATION` after the end, with the final state and counts (a second Ctrl-C skips it)"),
		labels:        labels,
		baseline:      fs.String("baseline", "", "mark every column better, worse or = against `COLUMN` (a library of the run) instead of the leader's ★"),
		wide:          fs.Bool("wide", false, "print the table with every cell in full, however wide (default: it fits 120 columns, the full cells in notes under it)"),
	}
}

const defaultProfile = "profiles/local.yaml"

// runProfile checks the flags of soak run and returns the profile they
// make: the file (or the built-in one) with -duration and -libs (the
// columns kept) laid over it; nil with -resume, which keeps the run's own.
func runProfile(fs *flagSet, a *runArgs) (*profile.Profile, error) {
	if *a.http != "" {
		if err := httpFlag.check(*a.http, *a.httpPublic); err != nil {
			return nil, err
		}
	}
	if err := a.checkDir(fs); err != nil {
		return nil, err
	}
	var p *profile.Profile
	var err error
	if *a.resume != "" {
		var set []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "profile" || f.Name == "duration" || f.Name == "libs" || f.Name == "out" || f.Name == "label" {
				set = append(set, "-"+f.Name)
			}
		})
		if len(set) > 0 && !a.resumesDir {
			return nil, usageError{fmt.Errorf("flag -resume: %s cannot be changed when resuming: the run keeps its own settings", strings.Join(set, ", "))}
		}
	} else if p, err = loadProfile(*a.profile); err != nil {
		return nil, err
	}
	if p != nil && (*a.duration != "" || given(fs, "duration")) {
		d, err := time.ParseDuration(*a.duration)
		if err != nil || d <= 0 {
			return nil, usageError{fmt.Errorf("flag -duration: bad duration %q: want a positive number with a unit such as 30s, 2m, 24h", *a.duration)}
		}
		if d < time.Second {
			return nil, usageError{fmt.Errorf("flag -duration: %s is shorter than one second: a run is recorded second by second", d)}
		}
		if d > profile.MaxWindow {
			return nil, usageError{fmt.Errorf("flag -duration: %s is longer than %s: a run records every second; run several", d, profile.MaxWindow)}
		}
		p.Duration = profile.Duration(d)
	}
	if p != nil && (*a.libs != "" || given(fs, "libs")) { // an empty -libs is refused, not the profile's list used
		if err := p.SelectColumns(strings.Split(*a.libs, ",")); err != nil {
			return nil, usageError{fmt.Errorf("flag -libs: %w", err)}
		}
	}
	if *a.backlog < 1 || *a.backlog > 86400 {
		return nil, usageError{fmt.Errorf("flag -write-backlog: %d is not a number of seconds: want 1 to 86400 (about a second's rows each, kept in memory while the disk refuses them)", *a.backlog)}
	}
	for _, kv := range a.labels.pairs {
		if p == nil {
			break // -dir resuming: the run's own labels
		}
		k, v, _ := strings.Cut(kv, "=")
		if err := p.Labels.Set(k, v); err != nil {
			return nil, usageError{fmt.Errorf("flag -label %s: %w", kv, err)}
		}
	}
	if *a.linger < 0 || *a.linger > time.Hour {
		return nil, usageError{fmt.Errorf("flag -linger: %s: want 0 (none) to 1h", *a.linger)}
	}
	if *a.baseline != "" && p != nil {
		if cols := wire.Names(p.Columns()); !slices.Contains(cols, *a.baseline) {
			return nil, usageError{fmt.Errorf("flag -baseline: %s is not a column of the run (%s)", *a.baseline, strings.Join(cols, ", "))}
		}
	}
	if *a.workerTimeout < 2*time.Second {
		return nil, usageError{fmt.Errorf("flag -worker-timeout: %s is too short: workers report every second; want at least 2s", *a.workerTimeout)}
	}
	return p, nil
}

// loadProfile reads the profile at path; "" is profiles/local.yaml when it
// exists, else the built-in default.
func loadProfile(path string) (*profile.Profile, error) {
	if path == "" {
		if _, err := os.Stat(defaultProfile); err != nil {
			return profile.Default(), nil
		}
		path = defaultProfile
	}
	return profile.Load(path)
}

// labelFlag collects the -label KEY=VALUE flags, checked with the profile's
// labels once the profile is read.
type labelFlag struct{ pairs []string }

func (l *labelFlag) String() string { return strings.Join(l.pairs, ",") }

func (l *labelFlag) Set(s string) error {
	if k, _, ok := strings.Cut(s, "="); !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE (region=fra)", s)
	}
	l.pairs = append(l.pairs, s)
	return nil
}

// checkDir checks -dir against the other flags and, when DIR holds an
// unfinished run, makes the run a resume of it. A DIR that holds a run that
// ended is refused (exit code 2): a service restarted after its run ended
// must not start another in its place.
func (a *runArgs) checkDir(fs *flagSet) error {
	if *a.dir == "" {
		if given(fs, "dir") {
			return usageError{errors.New("flag -dir: empty: want the run directory")}
		}
		return nil
	}
	switch {
	case *a.resume != "":
		return usageError{errors.New("flags -dir and -resume: give one (-dir resumes its run when it holds an unfinished one)")}
	case given(fs, "out"):
		return usageError{errors.New("flags -dir and -out: give one (-dir is the run directory itself, -out the folder a new run directory is made in)")}
	}
	db := filepath.Join(*a.dir, "soak.db")
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return nil // a new run, made in DIR
	}
	run, _, err := outcome.State(db)
	if err != nil {
		return fmt.Errorf("flag -dir: %w", err)
	}
	if run.Status != store.StatusRunning && run.Status != store.StatusNoEnd {
		return usageError{fmt.Errorf("flag -dir: %s holds run %s, which ended (%s): give another -dir, or move that one away to start a new run",
			*a.dir, run.ID, run.Status)}
	}
	*a.resume, a.resumesDir = *a.dir, true
	return nil
}
