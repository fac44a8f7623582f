package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/link"
	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/wire"
)

// Config is one soak bench.
type Config struct {
	Exe         string   `json:"-"` // the soak binary: run as "child firehose" and "child benchclient"
	Scenarios   []string // firehose scenario names
	Encodings   []string // codec names, each a row per scenario (RowLabel); nil: json only, rows named by scenario
	Libs        []string // transport names
	Paths       []string // of LibPaths
	Runs        int      // counted rounds; one warm-up round more
	N           int      // messages per run; 0: BytesPerRun of each scenario's payloads
	BytesPerRun int64    // payload bytes per run when N is 0
	Seed        uint64
	RcvBuf      int
	ServerCPUs  []int // nil: not pinned
	ClientCPUs  []int
	Runtime     wire.Runtime
	// Compression is the permessage-deflate settings each scenario runs
	// under, one row each (Rows); nil: off only.
	Compression  []wire.Compression `json:",omitempty"`
	Deflate      wire.Deflate       // how the firehose compresses (window, level)
	Progress     io.Writer          `json:"-"` // a line per run; nil: none
	ChildTimeout time.Duration
	// Link puts the firehose behind a link (package link), the clients
	// dialing from its one column's address; Link.On false: loopback.
	Link wire.Link `json:",omitzero"`
}

// Rows returns the table's rows: every scenario under every compression
// setting, in every encoding (RowLabel), in the order they run.
func (c *Config) Rows() []string {
	var out []string
	for _, sc := range c.Scenarios {
		for _, m := range c.compressions() {
			for _, e := range c.encodings() {
				out = append(out, RowLabel(sc, e, m))
			}
		}
	}
	return out
}

// encodings returns the encodings a scenario is read in: "" (json, no
// dimension) when the config has none.
func (c *Config) encodings() []string {
	if len(c.Encodings) == 0 {
		return []string{""}
	}
	return c.Encodings
}

// MessagesFor returns the message count of a run of sc: behind a link
// with a rate, no more than the link carries in LinkSeconds.
func (c *Config) MessagesFor(sc firehose.Scenario) int {
	n := c.N
	if n <= 0 {
		n = max(10, int(c.BytesPerRun/int64(sc.Target)))
	}
	if r := c.Link.Rate; c.Link.On && r > 0 {
		n = min(n, max(10, int(float64(r)/8*LinkSeconds/float64(sc.Target))))
	}
	return n
}

// LinkSeconds bounds a run behind a link with a rate: its message count is
// what the link carries in this many seconds at the scenario's size (less
// when deflate or a binary encoding makes the messages smaller).
const LinkSeconds = 10

// Order is the library order of a round: as given in even rounds, reversed
// in odd ones (ABCDE, EDCBA, ABCDE, …), so that no library always runs
// first or last after the others warmed the machine.
func Order(libs []string, round int) []string {
	out := slices.Clone(libs)
	if round%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

// behindLink reserves a link for the firehose when cfg asks for one, and
// has o start it in a namespace of its own attached to the link, spec
// listening on its address there; nil without a link.
func behindLink(cfg wire.Link, o *child.Options, spec *ServerSpec) (*link.Link, error) {
	if !cfg.On {
		return nil, nil
	}
	l, err := link.Reserve(cfg, 1)
	if err != nil {
		return nil, err
	}
	o.NewNet = true
	o.Setup = func(pid int) error { return l.Attach(fmt.Sprintf("/proc/%d/ns/net", pid)) }
	spec.Listen = l.ServerListen()
	return l, nil
}

// Run runs the bench: per scenario a firehose process, and round by round
// (round 0 the warm-up) every library × path, then raw and the ceiling, each
// client in a process of its own, one at a time.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.ChildTimeout == 0 {
		cfg.ChildTimeout = 5 * time.Minute
	}
	if cfg.Link.On {
		if err := link.Check(cfg.Link); err != nil {
			return nil, err
		}
	}
	var all []Result
	for _, name := range cfg.Scenarios {
		sc, err := firehose.Lookup(name)
		if err != nil {
			return nil, err
		}
		for _, mode := range cfg.compressions() {
			rs, err := runScenario(ctx, cfg, sc, mode)
			all = append(all, rs...)
			if err != nil {
				return all, fmt.Errorf("scenario %s: %w", Label(name, mode), err)
			}
		}
	}
	return all, nil
}

func runScenario(ctx context.Context, cfg Config, sc firehose.Scenario, mode wire.Compression) ([]Result, error) {
	zs := cfg.Deflate
	zs.Compression = wire.CompressionOff
	if mode.Enabled() {
		zs.Compression = wire.CompressionOn // the firehose takes either mode as the library offers it
	}
	spec := ServerSpec{Scenario: sc.Name, N: cfg.MessagesFor(sc), Seed: cfg.Seed, Encodings: cfg.Encodings, Deflate: zs}
	o := child.Options{Name: "firehose", Exe: cfg.Exe, Args: []string{"child", "firehose"}, CPUs: cfg.ServerCPUs}
	from, err := behindLink(cfg.Link, &o, &spec)
	if err != nil {
		return nil, err
	}
	if from != nil {
		defer from.Close() // after the firehose stopped: its namespace goes with it
	}
	o.Spec = spec
	srv, err := child.Start(o)
	if err != nil {
		return nil, err
	}
	defer srv.Stop(10 * time.Second)
	// Encoding the scenario's batches before the info line takes a while
	// on a slow machine: the bound is the clients' own.
	line, err := srv.ReadLine(ctx, cfg.ChildTimeout)
	var info ServerInfo
	if err == nil {
		err = json.Unmarshal(line, &info)
	}
	if err != nil {
		return nil, fmt.Errorf("firehose process: %w", err)
	}
	srv.DiscardOut()
	var out []Result
	for round := 0; round <= cfg.Runs; round++ {
		type job struct{ lib, path, enc string }
		var jobs []job
		for _, enc := range cfg.encodings() {
			// A library's paths run back to back, so its full − bare pairs
			// within a round see the same state of the machine.
			for _, lib := range Order(cfg.Libs, round) {
				for _, p := range Order(cfg.Paths, round) {
					jobs = append(jobs, job{lib, p, enc})
				}
			}
			if !mode.Enabled() { // the library-free rows read plain frames: once, under off
				jobs = append(jobs, job{RawLib, PathRaw, enc}, job{RawLib, PathCeiling, enc})
			}
		}
		for _, j := range jobs {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			cs := ClientSpec{URL: info.URL, StatsURL: info.StatsURL, Lib: j.lib, Path: j.path, Streams: info.Streams,
				RcvBuf: cfg.RcvBuf, Runtime: cfg.Runtime, Encoding: j.enc}
			if from != nil {
				cs.LocalAddr = from.ColumnAddr(0).String()
			}
			if j.lib != RawLib {
				cs.Compression = mode
			}
			if j.path == PathCeiling {
				wb := info.WireBytes
				if j.enc != "" {
					wb = info.EncodedWireBytes[j.enc]
				}
				cs.SkipBytes = wb + 4 // the close frame 1000: a 2-byte header, a 2-byte code
			}
			r := runChild(ctx, cfg, cs)
			r.Scenario, r.Encoding, r.Round = RowLabel(sc.Name, j.enc, mode), j.enc, round
			check(ctx, &r, info)
			out = append(out, r)
			if cfg.Progress != nil {
				warm, state := progressTags(round, r.Valid, r.Invalid)
				fmt.Fprintf(cfg.Progress, "round %d%s %s %s/%s: %d msgs in %.3f s, %.0f msgs/s, %.3f CPU µs/msg; %s\n",
					round, warm, r.Scenario, r.Lib, r.Path, r.Messages, float64(r.WallNS)/1e9, r.MsgsPerSec(), r.CPUPerMsg(), state)
			}
		}
	}
	return out, nil
}

// progressTags are a progress line's " (warm-up)" for round 0 and its
// "ok" or "INVALID: why".
func progressTags(round int, valid bool, invalid string) (warm, state string) {
	if round == 0 {
		warm = " (warm-up)"
	}
	if !valid {
		return warm, "INVALID: " + invalid
	}
	return warm, "ok"
}

// runChild runs one client process and returns its result.
func runChild(ctx context.Context, cfg Config, cs ClientSpec) Result {
	res := Result{Lib: cs.Lib, Path: cs.Path}
	o := child.Options{Name: "benchclient", Exe: cfg.Exe, Args: []string{"child", "benchclient"}, CPUs: cfg.ClientCPUs, Spec: cs}
	if err := child.Run(ctx, o, cfg.ChildTimeout, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

// UsableCPUs returns the CPUs this process may run on (a bench pins its
// processes to some of them).
func UsableCPUs() map[int]bool { return child.UsableCPUs() }

// check compares the result with what the firehose says it sent on the
// connection (the latest: clients run one at a time).
func check(ctx context.Context, r *Result, info ServerInfo) {
	st, err := fetchStats(ctx, info.StatsURL)
	if err == nil && len(st.Conns) == 0 {
		err = errors.New("no connection")
	}
	switch {
	case r.Err != "":
		r.Invalid = r.Err
	case err != nil:
		r.Invalid = "firehose stats: " + err.Error()
	default:
		c := st.Conns[len(st.Conns)-1]
		r.SentMessages, r.SentPayload, r.SentWire = int64(c.Messages), c.PayloadBytes, c.WireBytes
		if r.Path == PathCeiling {
			// Skip counts bytes, not messages: the bytes are the check.
			if want := c.WireBytes + 4; r.PayloadBytes != want || c.Messages != info.N {
				r.Invalid = fmt.Sprintf("read %d bytes, firehose wrote %d (+4 of close)", r.PayloadBytes, c.WireBytes)
				break
			}
			r.Messages, r.PayloadBytes = int64(c.Messages), c.PayloadBytes
		}
		switch {
		case r.Messages != int64(c.Messages) || r.PayloadBytes != c.PayloadBytes:
			r.Invalid = fmt.Sprintf("received %d messages, %d bytes; firehose sent %d, %d", r.Messages, r.PayloadBytes, c.Messages, c.PayloadBytes)
		case c.Messages != info.N:
			r.Invalid = fmt.Sprintf("firehose sent %d of %d messages", c.Messages, info.N)
		case r.Lost != 0 || r.Dup != 0:
			r.Invalid = fmt.Sprintf("sequence accounting: %d lost, %d duplicates", r.Lost, r.Dup)
		case r.Lib != RawLib && r.WireBytes != c.WireBytes+firehose.CloseFrameSize:
			r.Invalid = fmt.Sprintf("read %d frame bytes; firehose wrote %d + %d of close", r.WireBytes, c.WireBytes, firehose.CloseFrameSize)
		}
	}
	r.Valid = r.Invalid == ""
}

func fetchStats(ctx context.Context, url string) (firehose.Stats, error) {
	var st firehose.Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("decode stats: %w", err)
	}
	return st, nil
}
