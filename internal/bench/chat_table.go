package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
)

// Row is the load run as the store records it.
func (r ChatResult) Row() store.ChatResult {
	c := r.Client
	return store.ChatResult{Lib: r.Lib, Strategy: r.Strategy, Clients: r.N, Round: r.Round, Valid: r.Valid, Reason: r.Invalid, Err: r.Err,
		Rounds: c.Rounds, PerRound: c.PerRound, Sent: c.Sent, Deliveries: c.Deliveries, ServerDeliveries: r.ServerDeliveries,
		WallNS: c.WallNS, ServerUserNS: r.ServerUserNS, ServerSysNS: r.ServerSysNS, ServerMaxRSSKiB: r.ServerMaxRSSKiB,
		ServerWrites: r.ServerWrites, Drops: r.Drops, ClientUserNS: c.UserNS, ClientSysNS: c.SysNS, ClientMaxRSSKiB: c.MaxRSSKiB,
		ClientReads: c.Reads, P50us: c.P50us, P99us: c.P99us, MaxUs: c.MaxUs}
}

// AggregateChat is the server bench's results as the catalogue aggregates
// them (measure.Aggregate).
func AggregateChat(rs []ChatResult) *measure.Agg {
	rows := make([]store.ChatResult, len(rs))
	for i, r := range rs {
		rows[i] = r.Row()
	}
	return measure.AggregateChat(rows)
}

// busy is the CPU share (% of one core) at which a side is called the limit.
const busy = 90

// Limit names the side of a cell of the server bench that was the limit:
// the busier one when it used at least 90 % of a core over the timed part
// (each side pinned to a core of its own, that side is the bottleneck),
// else "neither": both spent time waiting for the other (wake-ups across
// CPUs, the machine's other load); "-" when a side's CPU was not measured.
func Limit(c *measure.BenchCell) string {
	if c == nil || c.Runs == 0 {
		return "-"
	}
	client, server := c.Stat("chat_client_cpu_pct").Median, c.Stat("chat_server_cpu_pct").Median
	switch {
	case math.IsNaN(client) || math.IsNaN(server):
		return "-"
	case max(client, server) < busy:
		return "neither"
	case client >= server:
		return "client"
	}
	return "server"
}

// chatCell is the cell of col at room size n.
func chatCell(a *measure.Agg, col chatColumn, n int) *measure.BenchCell {
	return a.Cell(measure.Dims{Side: measure.SideServer, Scenario: measure.ChatScenario, Clients: n, Strategy: col.strategy, Lib: col.lib})
}

// PrintChat writes the server bench's table of a: a row per N × strategy ×
// library (without strategies, as a bench recorded before them: a row per
// N × library), the verdict per N and strategy, plain against plain and
// best against best, and why a library has no best row; unless wide within
// 120 columns (the table in parts).
func PrintChat(w io.Writer, cfg ChatConfig, a *measure.Agg, lines []string, wide bool) {
	folded(w, wide, func(w io.Writer) { printChat(w, cfg, a, lines, wide) })
}

func printChat(w io.Writer, cfg ChatConfig, a *measure.Agg, lines []string, wide bool) {
	header(w, lines)
	rate := a.Set.Rate
	strategies := cfg.Strategies
	if len(strategies) == 0 {
		strategies = []string{""}
	}
	cols := cfg.columns()
	withStrategy := strategies[0] != ""
	keys := 2
	head := "N\tlibrary\tdeliveries/s (min–max)\tserver CPU µs/delivery\tserver CPU\tpeak RSS\tp50\tp99\tclient CPU µs/delivery\tclient CPU\tlimit\tserver writes/delivery\tclient reads/delivery"
	if withStrategy {
		head, keys = strings.Replace(head, "library\t", "library\tstrategy\t", 1), 3
	}
	tw := newGrid(w, wide, keys)
	fmt.Fprintln(tw, head)
	for _, n := range cfg.Clients {
		for _, st := range strategies {
			for _, col := range cols {
				if col.strategy != st {
					continue
				}
				name := col.lib
				if withStrategy {
					name += "\t" + st
				}
				c := chatCell(a, col, n)
				switch {
				case c == nil:
					continue
				case c.Runs == 0:
					fmt.Fprintf(tw, "%d\t%s\t%s\t\t\t\t\t\t\t\t\t\t\n", n, name, invalidText(c))
					continue
				}
				med := func(id string) float64 { return c.Stat(id).Median }
				r := c.Stat(rate)
				fmt.Fprintf(tw, "%d\t%s\t%s %s–%s%s\t%.3f\t%.0f %%\t%.0f MiB\t%s\t%s\t%.3f\t%.0f %%\t%s\t%.3f\t%.3f\n", n, name,
					unit.Rate(r.Median), unit.Rate(r.Min), unit.Rate(r.Max), invalidNote(c), med(a.Set.CPU), med("chat_server_cpu_pct"),
					med("chat_server_peak_rss")/1024, unit.Micros(med("chat_latency_p50")), unit.Micros(med("chat_latency_p99")),
					med("chat_client_cpu_per_delivery"), med("chat_client_cpu_pct"), Limit(c),
					med("chat_server_writes_per_delivery"), med("chat_client_reads_per_delivery"))
			}
		}
	}
	_ = tw.Flush()
	if withStrategy {
		fmt.Fprintln(w, "\nper N and strategy, the fastest server against the second (Mann-Whitney U, benchmath): plain against plain, best against best")
	} else {
		fmt.Fprintln(w, "\nper N, the fastest server against the second (Mann-Whitney U, benchmath):")
	}
	for _, n := range cfg.Clients {
		for _, st := range strategies {
			var cells []*measure.BenchCell
			for _, col := range cols {
				if col.strategy == st {
					cells = append(cells, chatCell(a, col, n))
				}
			}
			label := fmt.Sprintf("N=%d", n)
			if st != "" {
				label += " " + st
			}
			fmt.Fprintf(w, "  %s: %s\n", label, verdict(cells, rate, "-"))
		}
	}
	if withStrategy && slices.Contains(strategies, chat.StrategyBest) {
		fmt.Fprintln(w, "\nbest: each library's own facility for a broadcast; plain: one frame per write with the library's ordinary API")
		for _, lib := range cfg.Libs {
			if lib == chat.NodeLib {
				fmt.Fprintf(w, "  %s: the reference, plain only\n", lib)
				continue
			}
			what, ok := chat.Best(lib)
			if ok {
				fmt.Fprintf(w, "  %s: %s\n", lib, what)
			} else {
				fmt.Fprintf(w, "  %s: no best row: %s\n", lib, what)
			}
		}
	}
	fmt.Fprintln(w, "\ncells: medians over the counted runs; deliveries/s = broadcasts received by the clients per second of the timed part")
	fmt.Fprintln(w, "(every client has \"ready\" → the last round's last delivery); CPU from each process's getrusage over that part,")
	fmt.Fprintln(w, "in µs per delivery and in % of one core; limit: the busier side when it used ≥ 90 % of a core, else neither;")
	fmt.Fprintln(w, "writes and reads: syscalls per delivery (the server's syscw of /proc/self/io, the load client's socket reads).")
	fmt.Fprintln(w, "Every run's client deliveries equal the server's own count of writes, exactly, or the run is INVALID and left out.")
}
