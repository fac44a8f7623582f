package measure

import (
	"strconv"
	"strings"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Sides of soak bench (Dims.Side): the libraries as clients of the
// firehose, or as chat servers under a load client.
const (
	SideClient = "client"
	SideServer = "server"
)

// ChatScenario is the scenario of the server bench: Bun's chat room.
const ChatScenario = "chat"

// BenchRun is one client run of soak bench as its measures read it.
type BenchRun struct {
	Messages, PayloadBytes int64
	WallNS, UserNS, SysNS  int64
	Syscr, Rchar           int64 // read syscalls and the bytes they returned
	MaxRSSKiB              int64
	Mallocs                uint64
	WireBytes              int64 // WebSocket frame bytes read (0: not counted)
	// The firehose's side (ServerMeasured false: not recorded): its CPU
	// while it sent to the run's connection, its time encoding the messages
	// (0: encoded once beforehand).
	ServerMeasured                      bool
	ServerUserNS, ServerSysNS, EncodeNS int64
}

// Bench is the catalogue of soak bench's measures of a client run (side
// client): one value per run, a cell per Dims{Scenario, Encoding,
// Compression, Path, Lib}. The bench table, the bench page, export, compare
// and the Go benchmark lines take their titles, units and formulas from
// here; Column is the measure's column in export ("" when the stored
// counts it derives from are its columns).
var Bench = []*Measure{
	{ID: "bench_msg_rate", Title: "msgs/s", Unit: "msgs/s", Better: Higher, Column: "msgs_per_s",
		Run: func(r BenchRun) float64 { return per(float64(r.Messages), float64(r.WallNS)/1e9) }},
	{ID: "bench_mb_rate", Title: "MB/s", Unit: "MB/s", Better: Higher, Column: "mb_per_s",
		Run: func(r BenchRun) float64 { return per(float64(r.PayloadBytes)*1e3, float64(r.WallNS)) }},
	{ID: "bench_cpu_per_msg", Title: "CPU µs/msg", Unit: "µs/msg", Better: Lower, Column: "cpu_us_per_msg",
		Run: func(r BenchRun) float64 { return per(float64(r.UserNS+r.SysNS)/1e3, float64(r.Messages)) }},
	{ID: "bench_reads_per_msg", Title: "reads/msg", Unit: "reads/msg", Better: Lower, Column: "reads_per_msg",
		Run: func(r BenchRun) float64 { return per(float64(r.Syscr), float64(r.Messages)) }},
	{ID: "bench_bytes_per_read", Title: "bytes/read", Unit: "bytes/read", Better: NoRank, Column: "bytes_per_read",
		Run: func(r BenchRun) float64 { return per(float64(r.Rchar), float64(r.Syscr)) }},
	{ID: "bench_allocs_per_msg", Title: "allocs/msg", Unit: "allocs/msg", Better: Lower, Column: "allocs_per_msg",
		Run: func(r BenchRun) float64 { return per(float64(r.Mallocs), float64(r.Messages)) }},
	{ID: "bench_peak_rss", Title: "peak RSS", Unit: "KiB", Better: Lower,
		Run: func(r BenchRun) float64 { return float64(r.MaxRSSKiB) }},
	{ID: "bench_wire_per_msg", Title: "wire bytes/msg", Unit: "bytes/msg", Better: Lower, Column: "wire_bytes_per_msg",
		Run: func(r BenchRun) float64 { // not measured where frame bytes are not counted (the raw reader, benches before them)
			if r.WireBytes == 0 {
				return nan
			}
			return per(float64(r.WireBytes), float64(r.Messages))
		}},
	{ID: "bench_payload_per_msg", Title: "payload bytes/msg", Unit: "bytes/msg", Better: NoRank,
		Run: func(r BenchRun) float64 { return per(float64(r.PayloadBytes), float64(r.Messages)) }},
	{ID: "bench_wall_per_msg", Title: "wall ns/msg", Unit: "ns/msg", Better: Lower, // a Go benchmark's ns/op
		Run: func(r BenchRun) float64 { return per(float64(r.WallNS), float64(r.Messages)) }},
	{ID: "bench_server_cpu_per_msg", Title: "server CPU µs/msg", Unit: "µs/msg", Better: Lower, Column: "server_cpu_us_per_msg",
		Run: func(r BenchRun) float64 { return server(r, float64(r.ServerUserNS+r.ServerSysNS)/1e3) }},
	{ID: "bench_both_cpu_per_msg", Title: "server + client CPU µs/msg", Unit: "µs/msg", Better: Lower, Column: "both_cpu_us_per_msg",
		Run: func(r BenchRun) float64 { return server(r, float64(r.ServerUserNS+r.ServerSysNS+r.UserNS+r.SysNS)/1e3) }},
	{ID: "bench_encode_per_msg", Title: "encode ns/msg", Unit: "ns/msg", Better: Lower, Column: "encode_ns_per_msg",
		Run: func(r BenchRun) float64 { // the sender's encoding, compressing and framing, when it encoded as it sent
			if r.EncodeNS == 0 {
				return nan
			}
			return server(r, float64(r.EncodeNS))
		}},
}

// server is v per message of r when r recorded the firehose's side, NaN
// (not measured) otherwise.
func server(r BenchRun, v float64) float64 {
	if !r.ServerMeasured {
		return nan
	}
	return per(v, float64(r.Messages))
}

// Chat is the catalogue of the server bench's measures (soak bench -side
// server, side server): one value per load run against one chat server, a
// cell per Dims{Scenario: ChatScenario, Clients, Lib}. A run recorded
// before the server bench had a table of its own (store.ChatResult.Partial)
// has only the deliveries, the wall time and the server's CPU and RSS:
// every other measure is not measured there.
var Chat = []*Measure{
	{ID: "chat_delivery_rate", Title: "deliveries/s", Unit: "deliveries/s", Better: Higher, Column: "deliveries_per_s",
		Chat: func(r *store.ChatResult) float64 { return per(float64(r.Deliveries), float64(r.WallNS)/1e9) }},
	{ID: "chat_server_cpu_per_delivery", Title: "server CPU µs/delivery", Unit: "µs/delivery", Better: Lower, Column: "server_cpu_us_per_delivery",
		Chat: func(r *store.ChatResult) float64 {
			return per(float64(r.ServerUserNS+r.ServerSysNS)/1e3, float64(r.Deliveries))
		}},
	{ID: "chat_server_cpu_pct", Title: "server CPU", Unit: "%", Better: NoRank, Column: "server_cpu_pct", // of one core over the timed part
		Chat: func(r *store.ChatResult) float64 {
			return per(float64(r.ServerUserNS+r.ServerSysNS), float64(r.WallNS)) * 100
		}},
	{ID: "chat_server_peak_rss", Title: "peak RSS", Unit: "KiB", Better: Lower,
		Chat: func(r *store.ChatResult) float64 { return float64(r.ServerMaxRSSKiB) }},
	{ID: "chat_latency_p50", Title: "p50", Unit: "µs", Better: Lower, // send to receipt at each client
		Chat: full(func(r *store.ChatResult) float64 { return r.P50us })},
	{ID: "chat_latency_p99", Title: "p99", Unit: "µs", Better: Lower,
		Chat: full(func(r *store.ChatResult) float64 { return r.P99us })},
	{ID: "chat_client_cpu_per_delivery", Title: "client CPU µs/delivery", Unit: "µs/delivery", Better: NoRank, Column: "client_cpu_us_per_delivery",
		Chat: full(func(r *store.ChatResult) float64 {
			return per(float64(r.ClientUserNS+r.ClientSysNS)/1e3, float64(r.Deliveries))
		})},
	{ID: "chat_client_cpu_pct", Title: "client CPU", Unit: "%", Better: NoRank, Column: "client_cpu_pct",
		Chat: full(func(r *store.ChatResult) float64 {
			return per(float64(r.ClientUserNS+r.ClientSysNS), float64(r.WallNS)) * 100
		})},
	{ID: "chat_server_writes_per_delivery", Title: "server writes/delivery", Unit: "writes/delivery", Better: Lower, Column: "server_writes_per_delivery",
		Chat: full(func(r *store.ChatResult) float64 { return per(float64(r.ServerWrites), float64(r.Deliveries)) })},
	{ID: "chat_client_reads_per_delivery", Title: "client reads/delivery", Unit: "reads/delivery", Better: NoRank, Column: "client_reads_per_delivery",
		Chat: full(func(r *store.ChatResult) float64 { return per(float64(r.ClientReads), float64(r.Deliveries)) })},
}

// full is f for a run that recorded everything, not measured (NaN) for a
// partial one.
func full(f func(r *store.ChatResult) float64) func(r *store.ChatResult) float64 {
	return func(r *store.ChatResult) float64 {
		if r.Partial {
			return nan
		}
		return f(r)
	}
}

// BenchSet is the measures of one side of soak bench and the two its
// tables, its page and compare lead with: the rate and the CPU it cost.
type BenchSet struct {
	Side      string
	Measures  []*Measure
	Rate, CPU string // measure ids
}

// The sides' sets.
var (
	ClientBench = &BenchSet{Side: SideClient, Measures: Bench, Rate: "bench_msg_rate", CPU: "bench_cpu_per_msg"}
	ServerBench = &BenchSet{Side: SideServer, Measures: Chat, Rate: "chat_delivery_rate", CPU: "chat_server_cpu_per_delivery"}
)

// index is the position of measure id in the set, -1 when not in it.
func (s *BenchSet) index(id string) int {
	for i, m := range s.Measures {
		if m.ID == id {
			return i
		}
	}
	return -1
}

// BenchByID returns the bench measure (of either side) with that id, or nil.
func BenchByID(id string) *Measure {
	for _, s := range []*BenchSet{ClientBench, ServerBench} {
		if i := s.index(id); i >= 0 {
			return s.Measures[i]
		}
	}
	return nil
}

// BenchValue is the value of the client bench measure id for one run; it
// panics on an unknown id (a programming error).
func BenchValue(id string, r BenchRun) float64 {
	m := BenchByID(id)
	if m == nil || m.Run == nil {
		panic("measure: no bench measure " + id)
	}
	return m.Run(r)
}

// per is a / b, 0 when b is 0 (nothing to divide by: a run that failed).
func per(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// BenchRunOf is a stored result as the bench measures read it.
func BenchRunOf(r store.BenchResult) BenchRun {
	return BenchRun{Messages: r.Msgs, PayloadBytes: r.Bytes, WallNS: r.WallNS, UserNS: r.UserNS, SysNS: r.SysNS,
		Syscr: r.Syscr, Rchar: r.Rchar, MaxRSSKiB: r.MaxRSSKiB, Mallocs: r.Mallocs, WireBytes: r.WireBytes,
		ServerMeasured: r.ServerMeasured, ServerUserNS: r.ServerUserNS, ServerSysNS: r.ServerSysNS, EncodeNS: r.EncodeNS}
}

// BenchDims is the column of a stored client run; a row stored before the
// dimensions had columns of their own has its label split (ParseRow).
func BenchDims(r store.BenchResult) Dims {
	d := Dims{Scenario: r.Scenario, Encoding: r.Encoding, Compression: r.Compression}
	if r.Compression == "" {
		d = ParseRow(r.Scenario)
	}
	d.Side, d.Path, d.Lib = SideClient, r.Path, r.Lib
	return d
}

// ChatDims is the column of a stored server bench run.
func ChatDims(r store.ChatResult) Dims {
	return Dims{Side: SideServer, Scenario: ChatScenario, Clients: r.Clients, Strategy: r.Strategy, Lib: r.Lib}
}

// compressionSuffix is what a compression setting adds to a row's name:
// nothing for off, so that a bench without compression keeps its names.
func compressionSuffix(c string) string {
	switch c {
	case wire.CompressionOn.String():
		return "+deflate"
	case wire.CompressionNoContextTakeover.String():
		return "+deflate_nct"
	}
	return ""
}

// Row is the name of the row a column's results show in: every dimension
// but the path and the library, as
// scenario[-encoding][+deflate|+deflate_nct][ N=clients][ strategy]:
// aggTrade, depth20-msgpack+deflate, chat N=16 best.
func (d Dims) Row() string {
	s := d.Scenario
	if d.Encoding != "" {
		s += "-" + d.Encoding
	}
	s += compressionSuffix(d.Compression)
	if d.Clients > 0 {
		s += " N=" + strconv.Itoa(d.Clients)
	}
	if d.Strategy != "" {
		s += " " + d.Strategy
	}
	return s
}

// ParseRow splits a client bench's row name (Row without clients) into its
// scenario, encoding and compression: what a database written before they
// had columns of their own stored as the scenario.
func ParseRow(row string) Dims {
	d := Dims{Scenario: row, Compression: wire.CompressionOff.String()}
	for _, c := range []wire.Compression{wire.CompressionOn, wire.CompressionNoContextTakeover} {
		if s, ok := strings.CutSuffix(d.Scenario, compressionSuffix(c.String())); ok {
			d.Scenario, d.Compression = s, c.String()
			break
		}
	}
	for _, e := range codec.Names() {
		if s, ok := strings.CutSuffix(d.Scenario, "-"+e); ok {
			d.Scenario, d.Encoding = s, e
			break
		}
	}
	return d
}

// BenchSamples are a client bench's stored runs as the aggregation reads
// them, in the same order.
func BenchSamples(rs []store.BenchResult) []Sample {
	out := make([]Sample, len(rs))
	for i, r := range rs {
		br := BenchRunOf(r)
		vs := make([]float64, len(Bench))
		for j, m := range Bench {
			vs[j] = m.Run(br)
		}
		out[i] = Sample{Dims: BenchDims(r), Round: r.Round, Valid: r.Valid, Extensions: r.Extensions, set: ClientBench, values: vs}
	}
	return out
}

// ChatSamples are a server bench's stored runs as the aggregation reads
// them, in the same order.
func ChatSamples(rs []store.ChatResult) []Sample {
	out := make([]Sample, len(rs))
	for i := range rs {
		vs := make([]float64, len(Chat))
		for j, m := range Chat {
			vs[j] = m.Chat(&rs[i])
		}
		out[i] = Sample{Dims: ChatDims(rs[i]), Round: rs[i].Round, Valid: rs[i].Valid, set: ServerBench, values: vs}
	}
	return out
}
