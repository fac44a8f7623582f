package bench

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/unit"
)

// ChatCell is the counted runs of one library at one N.
type ChatCell struct {
	Lib                  string
	N                    int
	Rate, ServerCPU      Stat // deliveries/s, server CPU µs/delivery
	ServerPct, ClientPct Stat // CPU % of one core over the timed part
	ClientCPU            Stat // client CPU µs/delivery
	RSS                  Stat // server peak RSS KiB
	P50, P99             Stat // µs
	Writes, Reads        Stat // server writes per delivery, client reads per delivery
	Invalid              int
	rates                []float64
}

// ChatTable is the server bench's results, summarized.
type ChatTable struct {
	Libs    []string
	Clients []int
	Cells   map[string]*ChatCell
}

func chatKey(lib string, n int) string { return lib + "/" + strconv.Itoa(n) }

// Cell returns a cell, nil when it was not run.
func (t *ChatTable) Cell(lib string, n int) *ChatCell { return t.Cells[chatKey(lib, n)] }

// SummarizeChat groups the counted rounds' results by library and N.
func SummarizeChat(cfg ChatConfig, rs []ChatResult) *ChatTable {
	t := &ChatTable{Libs: cfg.Libs, Clients: cfg.Clients, Cells: map[string]*ChatCell{}}
	vals := map[string]map[string][]float64{}
	for _, r := range rs {
		if r.Round < 1 {
			continue
		}
		k := chatKey(r.Lib, r.N)
		c := t.Cells[k]
		if c == nil {
			c = &ChatCell{Lib: r.Lib, N: r.N}
			t.Cells[k] = c
			vals[k] = map[string][]float64{}
		}
		if !r.Valid {
			c.Invalid++
			continue
		}
		v := vals[k]
		v["rate"] = append(v["rate"], r.Rate())
		v["scpu"] = append(v["scpu"], r.ServerCPUPerDelivery())
		v["spct"] = append(v["spct"], r.ServerCPUPct())
		v["cpct"] = append(v["cpct"], r.Client.CPUPct())
		v["ccpu"] = append(v["ccpu"], r.ClientCPUPerDelivery())
		v["rss"] = append(v["rss"], float64(r.ServerMaxRSSKiB))
		v["p50"] = append(v["p50"], r.Client.P50us)
		v["p99"] = append(v["p99"], r.Client.P99us)
		v["writes"] = append(v["writes"], r.ServerWritesPerDelivery())
		v["reads"] = append(v["reads"], r.ClientReadsPerDelivery())
	}
	for k, c := range t.Cells {
		v := vals[k]
		c.rates = v["rate"]
		c.Rate, c.ServerCPU = summarize(v["rate"]), summarize(v["scpu"])
		c.ServerPct, c.ClientPct, c.ClientCPU = summarize(v["spct"]), summarize(v["cpct"]), summarize(v["ccpu"])
		c.RSS, c.P50, c.P99 = summarize(v["rss"]), summarize(v["p50"]), summarize(v["p99"])
		c.Writes, c.Reads = summarize(v["writes"]), summarize(v["reads"])
		c.Rate.Invalid = c.Invalid
	}
	return t
}

// busy is the CPU share (% of one core) at which a side is called the limit.
const busy = 90

// Limit names the side that was the limit: the busier one when it used at
// least 90 % of a core over the timed part (each side pinned to a core of
// its own, that side is the bottleneck), else "neither": both spent time
// waiting for the other (wake-ups across CPUs, the machine's other load).
func (c *ChatCell) Limit() string {
	switch {
	case c == nil || c.Rate.N == 0:
		return "-"
	case max(c.ClientPct.Median, c.ServerPct.Median) < busy:
		return "neither"
	case c.ClientPct.Median >= c.ServerPct.Median:
		return "client"
	}
	return "server"
}

// Print writes the table: a row per N × library.
func (t *ChatTable) Print(w io.Writer, header []string) {
	for _, h := range header {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tlibrary\tdeliveries/s (min–max)\tserver CPU µs/delivery\tserver CPU\tpeak RSS\tp50\tp99\tclient CPU µs/delivery\tclient CPU\tlimit\tserver writes/delivery\tclient reads/delivery")
	for _, n := range t.Clients {
		for _, lib := range t.Libs {
			c := t.Cell(lib, n)
			switch {
			case c == nil:
				continue
			case c.Rate.N == 0:
				fmt.Fprintf(tw, "%d\t%s\tINVALID (%d run(s))\t\t\t\t\t\t\t\t\t\t\n", n, lib, c.Invalid)
				continue
			}
			inv := ""
			if c.Invalid > 0 {
				inv = fmt.Sprintf(" [%d invalid]", c.Invalid)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s %s–%s%s\t%.3f\t%.0f %%\t%.0f MiB\t%s\t%s\t%.3f\t%.0f %%\t%s\t%.3f\t%.3f\n", n, lib,
				unit.Rate(c.Rate.Median), unit.Rate(c.Rate.Min), unit.Rate(c.Rate.Max), inv, c.ServerCPU.Median, c.ServerPct.Median,
				c.RSS.Median/1024, unit.Micros(c.P50.Median), unit.Micros(c.P99.Median), c.ClientCPU.Median, c.ClientPct.Median, c.Limit(),
				c.Writes.Median, c.Reads.Median)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nper N, the fastest server against the second (Mann-Whitney U, benchmath):")
	for _, n := range t.Clients {
		fmt.Fprintf(w, "  N=%d: %s\n", n, t.best(n))
	}
	fmt.Fprintln(w, "\ncells: medians over the counted runs; deliveries/s = broadcasts received by the clients per second of the timed part")
	fmt.Fprintln(w, "(every client has \"ready\" → the last round's last delivery); CPU from each process's getrusage over that part,")
	fmt.Fprintln(w, "in µs per delivery and in % of one core; limit: the busier side when it used ≥ 90 % of a core, else neither; writes and reads: syscalls per delivery")
	fmt.Fprintln(w, "(the server's syscw of /proc/self/io, the load client's socket reads). Every run's client deliveries")
	fmt.Fprintln(w, "equal the server's own count of writes, exactly, or the run is INVALID and left out.")
}

func (t *ChatTable) best(n int) string {
	var cells []*ChatCell
	for _, lib := range t.Libs {
		if c := t.Cell(lib, n); c != nil && c.Rate.N > 0 {
			cells = append(cells, c)
		}
	}
	if len(cells) < 2 {
		return "-"
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].Rate.Median > cells[j].Rate.Median })
	sig, p := Significant(cells[0].rates, cells[1].rates)
	if !sig {
		return fmt.Sprintf("no significant difference (%s vs %s, p=%.2f)", cells[0].Lib, cells[1].Lib, p)
	}
	return fmt.Sprintf("best %s (vs %s p=%.3f)", cells[0].Lib, cells[1].Lib, p)
}
