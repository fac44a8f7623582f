package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// The flags of every subcommand are declared here, so that one name keeps one meaning
// across soak (TestFlagMeanings holds the list): -o is the file a command writes, -dir the
// folder it writes its files into, -out the folder that holds the run directories, and a run
// directory a command reads or creates is a positional argument (or -resume RUN_DIR).
// The backquoted word of a flag's usage is its value in the help (-o FILE) and the tag the
// test compares. A renamed flag keeps its old spelling for one release (flagSet.renamed).

// help is what soak <sub> -h prints, and the subcommand's flags.
type help struct {
	synopsis string    // the command line: "soak export [-format csv|json] ..."
	about    string    // what the subcommand does, wrapped
	examples []example // at least one
	args     int       // positional arguments at most (0: the flags alone)
	flags    func(fs *flagSet) any
}

// example is a command line of a subcommand's help: "soak", the subcommand and its
// arguments, separated by single spaces (TestHelpExamples parses them).
type example struct {
	cmd, what string
}

// helps holds every subcommand's help; newFlagSet wants one.
var helps = map[string]help{
	"run": {
		synopsis: "soak run [-profile FILE] [-duration DURATION] [-libs LIBS] [-out DIR] [-http HOST:PORT] | -resume RUN_DIR",
		about: `Run a soak: every library of the profile in its own worker process on the same streams,
one row per worker per second into DIR/<run-id>/soak.db. Prints the comparison table and
writes report.html beside the database. Exit code 3 when a library broke a threshold of the
profile, 4 when the run was interrupted (Ctrl-C).`,
		examples: []example{
			{"soak run", "2 minutes of the five libraries against the embedded replay server (profiles/local.yaml)"},
			{"soak run -duration 30s -libs gorilla,gws -out /tmp/runs", "30 seconds of two libraries, the run directory under /tmp/runs"},
			{"soak run -profile profiles/binance-24h.yaml -http 127.0.0.1:8080", "a day on live Binance, the report and Prometheus /metrics served while it runs"},
			{"soak run -resume out/20261201-233000-local", "continue a run whose controller died, in the same database, up to its original end"},
		},
		flags: func(fs *flagSet) any { return runFlags(fs) },
	},
	"serve": {
		synopsis: "soak serve [-addr HOST:PORT] [-profile FILE] [-seed N] [-speed FACTOR] [-cert FILE -key FILE]",
		about: `Run the Binance-like replay server on its own until Ctrl-C, to point any client at it.
GET /_soak/stats returns what it sent on every connection, GET /_soak/faults the faults it
injected (the profile's faults: run on the server's clock from its start).`,
		examples: []example{
			{"soak serve", "on ws://127.0.0.1:9443 with the built-in profile's streams and rates"},
			{"soak serve -addr 127.0.0.1:9000 -profile profiles/faults.yaml -speed 10", "that profile's replay section and faults, ten times faster"},
			{"soak serve -cert cert.pem -key key.pem", "wss:// with that certificate"},
		},
		flags: func(fs *flagSet) any { return serveFlags(fs) },
	},
	"firehose": {
		synopsis: "soak firehose [-addr HOST:PORT] [-scenario NAME] [-n N] [-conns N] [-seed N]",
		about: `Run the firehose on its own: a WebSocket server that never paces. Each connection gets
the scenario's N pre-encoded Binance-shaped messages as fast as the socket takes them, then
a close 1000; after -conns connections it exits. Prints the address it listens on as the
first line, then the combined-stream and raw URLs; GET /_firehose/stats returns what it sent
on each connection. Scenarios: aggTrade, kline, depth20, depth, tickerArr, mix.`,
		examples: []example{
			{"soak firehose", "one connection of 200,000 aggTrade messages, on a free loopback port"},
			{"soak firehose -addr 127.0.0.1:9500 -scenario depth -n 20000 -conns 5", "five connections of 20,000 depth diffs (9 KB each) on port 9500"},
		},
		flags: func(fs *flagSet) any { return firehoseFlags(fs) },
	},
	"bench": {
		synopsis: "soak bench [-profile FILE] [-scenarios LIST] [-libs LIBS] [-paths LIST] [-runs N] [-n N] [-rcvbuf SIZE] [-sweep RANGE] [-cpus LISTS] [-format table|gobench] [-out DIR]",
		about: `Measure each library's throughput and CPU per message when the socket is full: per
scenario a firehose in its own process, and per library × path (bare, full, decode) plus the
library-free raw reader a client in its own process, one at a time, each reading until the
close 1000. Every run's messages and bytes are checked against what the firehose sent; a run
that differs is marked invalid and left out. -runs rounds after one warm-up round, library
order alternating (ABCDE, EDCBA, ...): cells are medians with min–max, a library is called
best only when its difference from the second is significant. Writes results.json, table.txt
and bench.txt (Go benchmark lines for benchstat) into DIR/bench-<time>/.`,
		examples: []example{
			{"soak bench", "the default table (profiles/bench.yaml): 6 scenarios × 3 paths × 5 libraries + raw"},
			{"soak bench -scenarios aggTrade -libs gorilla,gobwas -runs 3 -format gobench", "Go benchmark lines for benchstat"},
			{"soak bench -profile profiles/bench-full.yaml", "the whole table with 40 MB per run"},
			{"soak bench -scenarios depth -rcvbuf 128KiB", "depth diffs with SO_RCVBUF set to 128 KiB"},
			{"soak bench -sweep 9KB..900KB -rcvbuf 128KiB", "the message-size sweep (7 sizes, bare path) with SO_RCVBUF 128 KiB"},
		},
		flags: func(fs *flagSet) any { return benchFlags(fs) },
	},
	"chatbench": {
		synopsis: "soak bench -side server [-libs LIBS] [-clients LIST] [-runs N] [-deliveries N] [-per-round N] [-queue N] [-cpus LISTS] [-out DIR]",
		about: `Measure the libraries as servers (also run as soak chatbench): per room size N, a chat server
per library in its own process (the room protocol of Bun's chat bench: ready when N are in,
every message broadcast to all N), and a load process of N connections that runs rounds
(each client sends, a round ends when every client has every broadcast). Per library and N:
deliveries/s median (min–max), server CPU µs per delivery, peak RSS, p50/p99 broadcast
latency, the load client's CPU and which side was the limit. Every run's deliveries equal
the server's own count of writes, exactly, or the run is invalid. Writes results.json and
table.txt into DIR/bench-chat-<time>/.`,
		examples: []example{
			{"soak chatbench", "the default table: five servers × N = 16, 32, 64, five rounds (soak bench -side server)"},
			{"soak chatbench -libs gorilla,gws -clients 64 -runs 3", "two servers, rooms of 64"},
		},
		flags: func(fs *flagSet) any { return chatBenchFlags(fs) },
	},
	"chatserver": {
		synopsis: "soak chatserver [-lib LIB] [-n N] [-addr HOST:PORT] [-queue N]",
		about: `Run one library's chat server until Ctrl-C: clients connect to / with ?name=NAME; when N
are in, every one gets "ready"; every text message m from x is sent as "x: m" to all N, x
included. A client whose queue of unsent messages passes -queue is dropped with close 1008.
Prints the address it listens on as the first line; GET /_stats returns its counts as JSON.`,
		examples: []example{
			{"soak chatserver -lib gws -n 32", "a gws room of 32 on a free loopback port"},
			{"soak chatserver -lib gorilla -n 16 -addr 127.0.0.1:9600", "a gorilla room of 16 on port 9600"},
		},
		flags: func(fs *flagSet) any { return chatServerFlags(fs) },
	},
	"report": {
		synopsis: "soak report [-o FILE] [-out DIR] [RUN_DIR|DB]",
		about: `Write report.html beside a run's database (default RUN: the latest soak run under
-out; a bench directory when given, for its bench page). A finished soak is checked against
its profile's thresholds: exit code 3 when a library broke one, 4 when the run was interrupted.`,
		examples: []example{
			{"soak report", "the report of the latest soak run under out/"},
			{"soak report -o /tmp/report.html out/20261201-233000-local", "that run's report, written to /tmp/report.html"},
		},
		args:  1,
		flags: func(fs *flagSet) any { return reportFlags(fs) },
	},
	"export": {
		synopsis: "soak export [-format csv|json] [-dir DIR] [-out DIR] [RUN_DIR|DB]",
		about: `Write a run's tables (samples, stream_samples, events, host_samples, clock_samples,
summary) as CSV or NDJSON files, one per table (default RUN: the latest soak run under -out);
a bench directory when given: its bench_results.`,
		examples: []example{
			{"soak export", "the latest soak run's tables as CSV files in its run directory"},
			{"soak export -format json -dir /tmp/ndjson out/20261201-233000-local", "that run's tables as NDJSON files in /tmp/ndjson"},
		},
		args:  1,
		flags: func(fs *flagSet) any { return exportFlags(fs) },
	},
	"compare": {
		synopsis: "soak compare RUN_A RUN_B",
		about:    `Print two runs' end tables side by side, with their differences (each run a run directory or its soak.db).`,
		examples: []example{
			{"soak compare out/20261201-100000-local out/20261201-233000-local", "the later run beside the earlier one"},
		},
		args: 2,
	},
	"synth": {
		synopsis: "soak synth [-duration DURATION] [-symbols N] [-seed N] RUN_DIR",
		about: `(hidden) Write a synthetic five-library run database, RUN_DIR/soak.db, with its end table,
to measure the report and the export on a day-long run.`,
		examples: []example{
			{"soak synth out/synth24", "a synthetic day; then: soak report out/synth24"},
			{"soak synth -duration 40m -symbols 2 -seed 7 /tmp/small", "a small one"},
		},
		args:  1,
		flags: func(fs *flagSet) any { return synthFlags(fs) },
	},
	"child": {
		synopsis: "soak child ROLE",
		about: `(internal) A process soak starts of itself, one ROLE each: worker (a library's worker of soak run),
replay (the run's replay server), chatsoak (the load of a side: server run), firehose and
benchclient (soak bench), chatload (soak bench -side server). Its spec comes as one JSON line on
stdin; it answers on stdout and logs on stderr; it ends when stdin closes.`,
		examples: []example{
			{"soak child worker", "a worker: the plan on stdin, frames on stdout"},
			{"soak child replay", "a run's replay server: its config on stdin, its address on stdout"},
		},
		args: 1,
	},
}

// runArgs are the flags of soak run.
type runArgs struct {
	profile, duration, out, libs, resume, http *string
	workerTimeout                              *time.Duration
	verbose, httpPublic                        *bool
	backlog                                    *int
}

func runFlags(fs *flagSet) *runArgs {
	return &runArgs{
		profile:       fs.String("profile", "", "YAML profile `FILE` (default "+defaultProfile+", or the built-in default when that file is absent)"),
		duration:      fs.String("duration", "", "measured `DURATION`, overrides the profile (e.g. 30s, 2m, 24h)"),
		out:           fs.String("out", "out", "make the run directory in `DIR`"),
		libs:          fs.String("libs", "", "comma-separated `LIBS`, overrides the profile"),
		workerTimeout: fs.Duration("worker-timeout", 30*time.Second, "kill and restart a worker that sent nothing for this `DURATION`"),
		verbose:       fs.Bool("v", false, "log debug details"),
		backlog:       fs.Int("write-backlog", 600, "`SECONDS` of data kept in memory while database writes fail (disk full); beyond that the oldest are dropped and recorded as missing"),
		resume:        fs.String("resume", "", "continue the crashed run in `RUN_DIR` (same database) up to its original end"),
		http:          fs.String("http", "", "serve the live view (the report at /, Prometheus /metrics) on `HOST:PORT`, e.g. 127.0.0.1:8080"),
		httpPublic:    fs.Bool("http-public", false, "allow -http on an address other than loopback (the live view has no authentication)"),
	}
}

// serveArgs are the flags of soak serve.
type serveArgs struct {
	addr, profile, cert, key, compression *string
	addrPublic                            *bool
	seed                                  *int64
	speed                                 *float64
}

func serveFlags(fs *flagSet) *serveArgs {
	return &serveArgs{
		addr:        fs.String("addr", "127.0.0.1:9443", "listen on `HOST:PORT` (loopback; see -addr-public)"),
		addrPublic:  fs.Bool("addr-public", false, "allow -addr on an address other than loopback (the replay server has no authentication)"),
		profile:     fs.String("profile", "", "profile `FILE` whose replay section configures the server (default: built-in)"),
		compression: fs.String("compression", "", "the permessage-deflate `COMPRESSION` the server accepts: off, on (either mode, as the client offers) or no_context_takeover (imposed); default: the profile's compression"),
		seed:        fs.Int64("seed", 0, "random seed `N` of the generated streams (default: the profile's)"),
		speed:       fs.Float64("speed", 0, "rate `FACTOR` (default: the profile's)"),
		cert:        fs.String("cert", "", "PEM certificate (chain) `FILE`: serve wss:// (with -key)"),
		key:         fs.String("key", "", "PEM private key `FILE` of -cert"),
	}
}

// firehoseArgs are the flags of soak firehose.
type firehoseArgs struct {
	addr, scenario, compression *string
	addrPublic                  *bool
	n, conns                    *int
	seed                        *int64
}

func firehoseFlags(fs *flagSet) *firehoseArgs {
	return &firehoseArgs{
		addr:        fs.String("addr", "127.0.0.1:0", "listen on `HOST:PORT` (loopback, port 0: a free one; see -addr-public)"),
		addrPublic:  fs.Bool("addr-public", false, "allow -addr on an address other than loopback (the firehose has no authentication)"),
		scenario:    fs.String("scenario", "aggTrade", "the scenario `NAME`: aggTrade, kline, depth20, depth, tickerArr or mix"),
		n:           fs.Int("n", 0, "`N` messages per connection (default: about 40 MB of the scenario's messages, 200,000 aggTrade)"),
		conns:       fs.Int("conns", 1, "serve `N` connections, then exit (at most 10000)"),
		seed:        fs.Int64("seed", 1, "random seed `N` of the generated values"),
		compression: fs.String("compression", "off", "the permessage-deflate `COMPRESSION` the firehose accepts: off, on (either mode, as the client offers) or no_context_takeover (imposed)"),
	}
}

// benchArgs are the flags of soak bench.
type benchArgs struct {
	profile, out, format, libs, scenarios, paths, rcvbuf, cpus, sweep, compression *string
	encodings                                                                      *string
	runs, n                                                                        *int
}

func benchFlags(fs *flagSet) *benchArgs {
	return &benchArgs{
		profile:     fs.String("profile", "", "YAML profile `FILE` (default "+defaultBenchProfile+", or the built-in default when that file is absent)"),
		out:         fs.String("out", "out", "make the bench directory in `DIR`"),
		format:      fs.String("format", "table", "what to print: `FORMAT` table, or gobench (Go benchmark lines, for benchstat)"),
		libs:        fs.String("libs", "", "comma-separated `LIBS`, overrides the profile"),
		scenarios:   fs.String("scenarios", "", "comma-separated firehose scenarios `LIST`: aggTrade, kline, depth20, depth, tickerArr, mix"),
		paths:       fs.String("paths", "", "comma-separated client paths `LIST`: bare, full, decode"),
		encodings:   fs.String("encodings", "", "comma-separated encodings `LIST`: json, msgpack, packed; each a row per scenario (default: json only)"),
		runs:        fs.Int("runs", 5, "`N` counted rounds (after one warm-up round)"),
		n:           fs.Int("n", 0, "`N` messages per connection (default: the profile's bytes_per_run of each scenario's messages)"),
		rcvbuf:      fs.String("rcvbuf", "", "SO_RCVBUF of the clients' sockets, a `SIZE` such as 128KiB (default: the kernel's autotuning)"),
		cpus:        fs.String("cpus", "", "pin the firehose and the clients to CPU `LISTS` SERVER:CLIENT, such as 0:1 or 0-1:2-3"),
		compression: fs.String("compression", "", "permessage-deflate `COMPRESSION` settings, comma-separated, each scenario run under each: off, on, no_context_takeover (default off)"),
		sweep:       fs.String("sweep", "", "a message-size sweep instead of the scenarios: depth diffs of payload sizes in log steps over the `RANGE` LO..HI, such as 9KB..900KB (paths default to bare)"),
	}
}

// reportArgs are the flags of soak report.
type reportArgs struct {
	o, out *string
}

func reportFlags(fs *flagSet) *reportArgs {
	return &reportArgs{
		o:   fs.String("o", "", "write the report to `FILE` (default: report.html beside the database)"),
		out: fs.String("out", "out", "look for the latest soak run in `DIR` when no RUN is given"),
	}
}

// exportArgs are the flags of soak export.
type exportArgs struct {
	format, dir, out *string
}

func exportFlags(fs *flagSet) *exportArgs {
	a := &exportArgs{
		format: fs.String("format", "csv", "file `FORMAT`: csv, or json (one JSON object per line, *.ndjson)"),
		dir:    fs.String("dir", "", "write the files into `DIR` (default: the run directory)"),
		out:    fs.String("out", "out", "look for the latest soak run in `DIR` when no RUN is given"),
	}
	fs.renamed("o", "dir")
	return a
}

// synthArgs are the flags of soak synth.
type synthArgs struct {
	o        *string // the run directory given by the deprecated -o (now the argument)
	duration *time.Duration
	symbols  *int
	seed     *uint64
}

func synthFlags(fs *flagSet) *synthArgs {
	a := &synthArgs{
		o:        new(string),
		duration: fs.Duration("duration", 24*time.Hour, "length of the synthetic window, a `DURATION` such as 40m or 24h"),
		symbols:  fs.Int("symbols", 50, "`N` markets per library (5 streams each, plus arr and 20 depth streams)"),
		seed:     fs.Uint64("seed", 1, "random seed `N` of the generated streams"),
	}
	fs.deprecate("o", "the argument RUN_DIR (soak synth RUN_DIR)", func(s string) error { *a.o = s; return nil })
	return a
}

// flagSet is a subcommand's flags: its help is printed to stdout for -h, and with a
// mistake to stderr (the error itself is printed once, by exitCode).
type flagSet struct {
	*flag.FlagSet
	name           string
	help           help
	stdout, stderr io.Writer
}

// newFlagSet makes the flag set of subcommand name, which must have an entry in helps.
func newFlagSet(name string, stdout, stderr io.Writer) *flagSet {
	h, ok := helps[name]
	if !ok {
		panic("soak: no help for subcommand " + name)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parseFlags prints the help and the usage
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, name: name, help: h, stdout: stdout, stderr: stderr}
}

// deprecated is an old spelling kept for one release: it sets what its new spelling
// sets, and its first use prints one line on stderr naming the new spelling.
type deprecated struct {
	cmd, name, now string // the subcommand, the old flag's name, the new spelling
	set            func(string) error
	w              io.Writer
	warned         bool
}

func (d *deprecated) String() string { return "" }

func (d *deprecated) Set(s string) error {
	if !d.warned {
		d.warned = true
		fmt.Fprintf(d.w, "soak %s: flag -%s is deprecated and goes away in the next release: use %s\n", d.cmd, d.name, d.now)
	}
	return d.set(s)
}

// deprecate declares flag -old, an old spelling that calls set and warns once.
func (fs *flagSet) deprecate(old, now string, set func(string) error) {
	fs.Var(&deprecated{cmd: fs.name, name: old, now: now, set: set, w: fs.stderr}, old, "deprecated: use "+now)
}

// renamed declares -old as the deprecated spelling of flag -now.
func (fs *flagSet) renamed(old, now string) {
	f := fs.Lookup(now)
	if f == nil {
		panic("soak: renamed flag -" + old + ": no flag -" + now)
	}
	arg, _ := flag.UnquoteUsage(f)
	fs.deprecate(old, strings.TrimSpace("-"+now+" "+arg), f.Value.Set)
}

// parseFlags parses the flags of a subcommand that takes no argument.
func parseFlags(fs *flagSet, args []string) error {
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.usageError(fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0)))
	}
	return nil
}

// parseInterspersed parses flags placed before or after the positional
// arguments (soak export RUN -format json) and returns the positionals.
func parseInterspersed(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parse parses args: -h prints the help on stdout (flag.ErrHelp, exit code 0), a mistake
// the usage on stderr (a usageError).
func (fs *flagSet) parse(args []string) error {
	err := fs.FlagSet.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp(fs.stdout, true)
		return err
	}
	return fs.usageError(err)
}

// usageError prints the usage on stderr and returns err as a usageError.
func (fs *flagSet) usageError(err error) error {
	fs.printHelp(fs.stderr, false)
	return usageError{err}
}

// printHelp prints the synopsis and the flags, and with full what the subcommand does and
// its examples.
func (fs *flagSet) printHelp(w io.Writer, full bool) {
	h := fs.help
	fmt.Fprintf(w, "Usage: %s\n", h.synopsis)
	if full {
		fmt.Fprintf(w, "\n%s\n", h.about)
	}
	// The current flags (with their defaults, not the values parsed so far), then the
	// deprecated spellings.
	cur := flag.NewFlagSet(fs.name, flag.ContinueOnError)
	var old []*deprecated
	fs.VisitAll(func(f *flag.Flag) {
		if d, ok := f.Value.(*deprecated); ok {
			old = append(old, d)
			return
		}
		cur.Var(f.Value, f.Name, f.Usage)
		cur.Lookup(f.Name).DefValue = f.DefValue
	})
	if countFlags(cur) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		cur.SetOutput(w)
		cur.PrintDefaults()
	}
	if len(old) > 0 {
		fmt.Fprintln(w, "\nDeprecated (they still work, with a warning, until the next release):")
		for _, d := range old {
			fmt.Fprintf(w, "  -%s: use %s\n", d.name, d.now)
		}
	}
	if !full {
		fmt.Fprintf(w, "\nRun 'soak %s -h' for examples.\n", fs.name)
		return
	}
	fmt.Fprintln(w, "\nExamples:")
	for _, e := range h.examples {
		fmt.Fprintf(w, "  %s\n      %s\n", e.cmd, e.what)
	}
}

func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}
