package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/wire"
)

// benchHelp is what soak bench -h prints.
var benchHelp = help{
	synopsis: "soak bench [-side client] [-profile FILE] [-scenarios LIST] [-libs LIBS] [-paths LIST] [-runs N] [-wide]\n" +
		"       soak bench [-side client] [-n N] [-rcvbuf SIZE] [-sweep RANGE] [-cpus LISTS] [-format table|gobench] [-out DIR]\n" +
		"       soak bench -side server [-libs LIBS] [-clients LIST] [-strategies LIST] [-runs N] [-deliveries N]\n" +
		"       soak bench -side server [-per-round N] [-queue N] [-cpus LISTS] [-out DIR]",
	about: `Measure the libraries on one -side of a connection: client (the default) or server. A flag
of one side only is refused with the other.

-side client: each library's throughput and CPU per message when the socket is full: per
scenario a firehose in its own process, and per library × path (bare, full, decode) plus the
library-free raw reader a client in its own process, one at a time, each reading until the
close 1000. Every run's messages and bytes are checked against what the firehose sent; a run
that differs is marked invalid and left out. -runs rounds after one warm-up round, library
order alternating (ABCDE, EDCBA, ...): cells are medians with min–max, a library is called
best only when its difference from the second is significant. Writes results.json, table.txt
and bench.txt (Go benchmark lines for benchstat) into DIR/bench-<time>/.

-side server: the libraries as chat servers: per room size N, a chat server per library in its
own process (the room protocol of Bun's chat bench: ready when N are in, every message
broadcast to all N), and a load process of N connections that runs rounds (each client sends,
a round ends when every client has every broadcast). Per library and N: deliveries/s median
(min–max), server CPU µs per delivery, peak RSS, p50/p99 broadcast latency, the load client's
CPU and which side was the limit; each server under each write -strategies (plain: one frame
per write with the library's ordinary API; best: its own facility, where it has one), plain
compared with plain and best with best. Every run's deliveries equal the server's own count of
writes, exactly, or the run is invalid. Writes results.json and table.txt into
DIR/bench-chat-<time>/.`,
	examples: []example{
		{"soak bench", "the default table (profiles/bench.yaml): 6 scenarios × 3 paths × 5 libraries + raw"},
		{"soak bench -scenarios aggTrade -libs gorilla,gobwas -runs 3 -format gobench", "Go benchmark lines for benchstat"},
		{"soak bench -profile profiles/bench-full.yaml", "the whole table with 40 MB per run"},
		{"soak bench -scenarios depth -rcvbuf 128KiB", "depth diffs with SO_RCVBUF set to 128 KiB"},
		{"soak bench -sweep 9KB..900KB -rcvbuf 128KiB", "the message-size sweep (7 sizes, bare path) with SO_RCVBUF 128 KiB"},
		{"soak bench -side server", "the server table: five servers × N = 16, 32, 64, five rounds"},
		{"soak bench -side server -libs gorilla,gws -clients 64 -runs 3", "two servers, rooms of 64"},
	},
	flags: func(fs *flagSet) any { return benchFlags(fs, sideClient) },
}

// side is soak bench -side: the side of a connection the libraries are
// measured on.
type side string

const (
	sideClient side = "client" // the libraries as clients of a firehose
	sideServer side = "server" // the libraries as chat servers
)

func (s *side) String() string { return string(*s) }

func (s *side) Set(v string) error {
	if v != string(sideClient) && v != string(sideServer) {
		return fmt.Errorf("want %s or %s", sideClient, sideServer)
	}
	*s = side(v)
	return nil
}

// sideFlags are the flags of one side of soak bench only: the other side
// refuses them (-libs, -runs, -cpus and -out are both sides').
var sideFlags = map[side][]string{
	sideClient: {"profile", "scenarios", "paths", "sweep", "n", "rcvbuf", "encodings", "compression", "format"},
	sideServer: {"clients", "deliveries", "per-round", "queue", "strategies"},
}

// benchArgs are the flags of soak bench, both sides in one set.
type benchArgs struct {
	side                                                                     side
	libs, cpus, out                                                          *string
	runs                                                                     *int
	profile, format, scenarios, paths, rcvbuf, sweep, compression, encodings *string
	n                                                                        *int
	clients, strategies                                                      *string
	deliveries                                                               *int64
	perRound, queue                                                          *int
	wide                                                                     *bool
}

// benchFlags declares soak bench's flags, -side defaulting to def.
func benchFlags(fs *flagSet, def side) *benchArgs {
	a := &benchArgs{side: def}
	fs.Var(&a.side, "side", "the `SIDE` measured: client (the libraries as clients of a firehose) or server (the libraries as chat servers)")
	a.libs = fs.String("libs", "", "comma-separated `LIBS` ("+strings.Join(wire.Libraries, ", ")+"; -side server also "+chat.NodeLib+"): -side client, overrides the profile; -side server, default the five and "+chat.NodeLib+" when node and its ws package are installed")
	a.runs = fs.Int("runs", 5, "`N` counted rounds after one warm-up round (library order alternating)")
	a.cpus = fs.String("cpus", "", "pin the server side (the firehose, the chat servers) and the client side to CPU `LISTS` SERVER:CLIENT, such as 0:1 or 0-1:2-3 (-side server: default 0:1 when the machine has both; none: not pinned)")
	a.out = fs.String("out", "out", "make the bench directory in `DIR`")
	a.wide = fs.Bool("wide", false, "print the tables with every cell in full, however wide (default: they fit 120 columns; table.txt has every cell)")
	a.profile = fs.String("profile", "", "-side client: YAML profile `FILE` (default "+defaultBenchProfile+", or the built-in default when that file is absent)")
	a.format = fs.String("format", "table", "-side client: what to print: `FORMAT` table, or gobench (Go benchmark lines, for benchstat)")
	a.scenarios = fs.String("scenarios", "", "-side client: comma-separated firehose scenarios `LIST`: aggTrade, kline, depth20, depth, tickerArr, mix (default: the profile's; "+defaultBenchProfile+" and the built-in one: all six)")
	a.paths = fs.String("paths", "", "-side client: comma-separated client paths `LIST`: bare, full, decode (default: the profile's; "+defaultBenchProfile+" and the built-in one: all three; bare with -sweep)")
	a.encodings = fs.String("encodings", "", "-side client: comma-separated encodings `LIST`: json, msgpack, packed; each a row per scenario (default: json only)")
	a.n = fs.Int("n", 0, "-side client: `N` messages per connection (default: the profile's bytes_per_run of each scenario's messages)")
	a.rcvbuf = fs.String("rcvbuf", "", "-side client: SO_RCVBUF of the clients' sockets, a `SIZE` such as 128KiB (default: the kernel's autotuning)")
	a.compression = fs.String("compression", "", "-side client: permessage-deflate `COMPRESSION` settings, comma-separated, each scenario run under each: off, on, no_context_takeover (default off)")
	a.sweep = fs.String("sweep", "", "-side client: a message-size sweep instead of the scenarios: depth diffs of payload sizes in log steps over the `RANGE` LO..HI, such as 9KB..900KB (paths default to bare)")
	a.clients = fs.String("clients", "16,32,64", "-side server: comma-separated room sizes `LIST`, N clients per room")
	a.deliveries = fs.Int64("deliveries", 100_000, "-side server: `N` deliveries per run (whole load rounds of N×N×per-round)")
	a.perRound = fs.Int("per-round", 1, "-side server: `N` messages each client sends per load round")
	a.strategies = fs.String("strategies", strings.Join(chat.Strategies, ","), "-side server: comma-separated write strategies `LIST`, each a row per server: plain (one frame per write), best (the library's own facility; libraries without one run plain only)")
	a.queue = fs.Int("queue", chat.DefaultQueue, "-side server: `N` messages a connection may have queued; a client past it is dropped with close 1008")
	return a
}

// checkSide refuses a flag of the side other than s.
func checkSide(fs *flagSet, s side) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		for other, names := range sideFlags {
			if err == nil && other != s && slices.Contains(names, f.Name) {
				err = usageError{fmt.Errorf("flag -%s: only with -side %s, not -side %s", f.Name, other, s)}
			}
		}
	})
	return err
}
