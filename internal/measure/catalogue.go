package measure

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/stats"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/wire"
)

// never and check are the Rank of a measure that is never ranked and of
// an integrity check.
var (
	never = RankRule{Kind: Never}
	check = RankRule{Kind: Check}
)

// Catalogue is every measure: the end table's rows in their order, then the
// hidden ones. Its test checks that each has an id, a title, a unit and a
// direction, that ids are unique, and that every profile threshold key has
// exactly one measure.
var Catalogue = []*Measure{
	{ID: "messages", Title: "Messages / data", Unit: "messages", Better: Higher, Rank: never, Prom: "soak_messages_total", Side: SideClient,
		Parts: []Part{{"messages", "messages"}, {"data", "bytes"}}, short: firstValue,
		Value: func(c *column) Cell { // messages received, drain included
			if !c.hasWorker {
				return notMeasured()
			}
			return Cell{fmt.Sprintf("%s / %s", unit.Count(float64(c.msgsMax)), unit.Bytes(float64(c.bytesMax))), float64(c.msgsMax),
				vals(float64(c.msgsMax), float64(c.bytesMax))}
		}},
	{ID: "deliveries", Title: "Deliveries / data written", Short: "Deliveries / written", Unit: "deliveries", Better: Higher, Rank: never, Side: SideServer,
		Parts: []Part{{"deliveries", "deliveries"}, {"written", "bytes"}}, short: firstValue,
		Value: func(c *column) Cell { // broadcasts the server wrote to its clients, and the bytes its writes carried
			if !c.hasWorker {
				return notMeasured()
			}
			return Cell{fmt.Sprintf("%s / %s", unit.Count(float64(c.msgsMax)), unit.Bytes(float64(c.bytesMax))), float64(c.msgsMax),
				vals(float64(c.msgsMax), float64(c.bytesMax))}
		}},
	{ID: "wire_bytes", Title: "Wire bytes / ratio", Unit: "bytes", Better: Lower, Rank: never, Prom: "soak_wire_bytes_total", Side: SideClient,
		Parts: []Part{{"wire bytes", "bytes"}, {"ratio", "ratio"}}, short: firstValue,
		Value: func(c *column) Cell { // frame bytes read ÷ payload bytes: under 1 when deflate pays
			if !c.hasWorker || c.wireMax == 0 {
				return notMeasured()
			}
			ratio, r := "-", nan
			if c.bytesMax > 0 {
				r = float64(c.wireMax) / float64(c.bytesMax)
				ratio = fmt.Sprintf("%.2f", r)
			}
			return Cell{fmt.Sprintf("%s / %s", unit.Bytes(float64(c.wireMax)), ratio), float64(c.wireMax), vals(float64(c.wireMax), r)}
		}},
	{ID: "negotiated", Title: "Negotiated", Unit: "connections", Better: NoRank, Rank: never, Side: SideClient, short: negotiatedShort,
		Value: func(c *column) Cell { // connections by the extensions (and subprotocol) the server answered
			if len(c.negotiated) == 0 {
				return notMeasured()
			}
			var parts []string
			deflated := 0
			for _, ext := range slices.Sorted(maps.Keys(c.negotiated)) {
				if strings.Contains(ext, "permessage-deflate") {
					deflated += c.negotiated[ext]
				}
				parts = append(parts, fmt.Sprintf("%s ×%d", extensionsName(ext), c.negotiated[ext]))
			}
			return Cell{Text: strings.Join(parts, "; "), Num: float64(deflated)}
		}},
	{ID: "wire_truth", Title: "Wire bytes: client = server", Short: "Wire bytes = server", Unit: "bytes", Better: Lower, Rank: check, Side: SideClient,
		Value: func(c *column) Cell { // the bytes by which the worker's count differs from the server's (0: exact)
			if c.wireCheck == nil || c.wireCheck.Slots == 0 {
				return notMeasured()
			}
			if c.restarts > 0 {
				return Cell{Text: Restarted(c.restarts), Num: nan}
			}
			return Cell{Text: c.wireCheck.String(), Num: float64(c.wireCheck.AbsDiff())}
		}},
	{ID: "server_truth", Title: "Received = server sent (per subscription)", Short: "Received = server sent", Unit: "subscriptions", Better: Lower, Rank: check, Side: SideClient,
		// Per subscription, the messages the library received against what
		// the replay server sent its connections of the slot (their counts
		// added); its number is the subscriptions that differ (0: exact).
		Value: func(c *column) Cell { return c.sentCell() }},
	{ID: "chat_truth", Title: "Deliveries: clients = server", Short: "Clients = server", Unit: "accounts", Better: Lower, Rank: check, Side: SideServer,
		// The server's end account as the load client checked it: every
		// delivery the clients read against the server's writes, the
		// clients dropped against the slow and half-open ones injected.
		Value: func(c *column) Cell {
			if c.truth == nil {
				return notMeasured()
			}
			if c.truth.Code == 0 { // what was compared; the rest of the account is in the event
				return Cell{Text: "✓ " + cut(c.truth.Detail), Num: 0}
			}
			return Cell{Text: "✗ " + c.truth.Detail, Num: 1}
		}},
	{ID: "msg_rate", Title: "Avg / peak msgs/s", Unit: "msgs/s", Better: Higher, Rank: never, Prom: "soak_messages_per_second", Side: SideClient,
		Parts: []Part{{"avg", "msgs/s"}, {"peak", "msgs/s"}},
		Value: func(c *column) Cell { return c.rateCell() }}, // the average over the window's one-second counts
	{ID: "delivery_rate", Title: "Avg / peak deliveries/s", Unit: "deliveries/s", Better: Higher, Rank: never, Side: SideServer,
		Parts: []Part{{"avg", "deliveries/s"}, {"peak", "deliveries/s"}},
		Value: func(c *column) Cell { return c.rateCell() }},
	{ID: "rss", Title: "RSS start → end (peak)", Short: "RSS start → end (MB)", Unit: "bytes", Better: Lower, Rank: never, Prom: "soak_rss_bytes",
		Parts: []Part{{"start", "bytes"}, {"end", "bytes"}, {"peak", "bytes"}},
		short: rssForms,
		Value: func(c *column) Cell { // RSS at the window's last second
			if c.rssN == 0 {
				return notMeasured()
			}
			return Cell{fmt.Sprintf("%s → %s MB (%s)", unit.MB(float64(c.rssFirst)), unit.MB(float64(c.rssLast)), unit.MB(float64(c.rssPeak))), float64(c.rssLast),
				vals(float64(c.rssFirst), float64(c.rssLast), float64(c.rssPeak))}
		}},
	{ID: "rss_level", Title: "RSS steady level (median of the window's second half)", Short: "RSS steady level (MB)", Unit: "bytes", Better: Lower,
		short: withoutUnit("MB"),
		Rank:  RankRule{Kind: Ranked, Stat: SteadyLevel, Of: SeriesRSS, Floor: 2e6, Dim: DimMemory, Name: "RSS over the window's second half"},
		Value: func(c *column) Cell {
			m := stats.Median(SecondHalf(c.series.RSS))
			if math.IsNaN(m) {
				return notMeasured()
			}
			return Cell{Text: unit.MB(m) + " MB", Num: m}
		}},
	{ID: "rss_trend", Title: "RSS growth (MB/h after the first minute)", Short: "RSS growth (MB/h)", Unit: "MB/h", Better: Lower,
		short: withoutUnit("MB/h"),
		Rank:  RankRule{Kind: Ranked, Stat: Growth, Of: SeriesRSS, Floor: 5, SpanFloor: 2, Dim: DimMemory, Name: "Theil–Sen slope of RSS after the first minute"},
		Value: func(c *column) Cell { // the Theil–Sen slope of the column's batch means
			g := GrowthPerHour(AfterWarmUp(c.series.RSS))
			if math.IsNaN(g.Slope) {
				return notMeasured()
			}
			return Cell{Text: fmt.Sprintf("%+.1f MB/h", g.Slope), Num: g.Slope}
		}},
	{ID: "cpu_avg", Title: "CPU avg (% of one core)", Unit: "%", Better: Lower, Rank: RankRule{Kind: Ranked, Stat: BatchMeans, Of: SeriesCPU, About: SeriesMsgs, Floor: 0.25, Dim: DimCPU, Name: "mean of per-second CPU %"}, Threshold: "max_cpu_avg",
		Value: func(c *column) Cell { // mean over the window, its first second left out
			if c.cpuN == 0 {
				return notMeasured()
			}
			avg := c.cpuSum / float64(c.cpuN)
			return Cell{Text: fmt.Sprintf("%.1f %%", avg), Num: avg}
		}},
	{ID: "heap", Title: "Go heap (mean, MB)", Unit: "bytes", Better: Lower, Side: SideClient, // a chat server reports none
		Rank: RankRule{Kind: Ranked, Stat: BatchMeans, Of: SeriesHeap, Floor: 1e6, Dim: DimMemory, Name: "mean of per-second Go heap"},
		Value: func(c *column) Cell { // the mean of the window's seconds of the worker's HeapAlloc
			m := meanOf(c.series.Heap)
			if math.IsNaN(m) {
				return notMeasured()
			}
			return Cell{Text: unit.MB(m), Num: m}
		}},
	{ID: "cpu_seconds", Title: "CPU s sampled / rusage", Unit: "s", Better: NoRank, Rank: check, Prom: "soak_cpu_seconds_total",
		Parts: []Part{{"sampled", "s"}, {"rusage", "s"}}, short: cpuForms,
		Value: func(c *column) Cell { // CPU seconds from /proc, summed over the worker's processes
			w := c.worker
			ru := w.RusageUser + w.RusageSys
			sampled, n := NotMeasured, nan
			if CPUSampled(w) {
				sampled, n = fmt.Sprintf("%.2f", w.SampledCPU), w.SampledCPU
			}
			// The processes of a controller that died were never reaped: their
			// sampled CPU has no rusage to compare with, and is left out of the
			// comparison (said in the cell).
			unreaped := ""
			if w.CPUUnreaped > 0 && !math.IsNaN(n) {
				unreaped = fmt.Sprintf("; %.2f s before a resume, not in rusage", w.CPUUnreaped)
			}
			reaped := w.SampledCPU - w.CPUUnreaped
			switch {
			case ru == 0:
				return Cell{sampled + " / " + NotMeasured + wrap(unreaped), n, vals(n, nan)}
			case math.IsNaN(n) || ru < minCPUCompared:
				return Cell{fmt.Sprintf("%s / %.2f%s", sampled, ru, wrap(unreaped)), n, vals(n, ru)}
			}
			return Cell{fmt.Sprintf("%s / %.2f (%+.1f %%%s)", sampled, ru, 100*(reaped-ru)/ru, unreaped), n, vals(n, ru)}
		}},
	{ID: "faults", Title: "Faults seen", Unit: "faults", Better: NoRank, Rank: never, Prom: "soak_faults_total",
		Value: func(c *column) Cell { return countCell(c.faults) }},
	{ID: "reconnects", Title: "Reconnects", Short: "Reconnects", Unit: "reconnects", Better: Lower, Rank: never, Threshold: "max_reconnects", Prom: "soak_reconnects_total",
		label: func(r *runInfo) string {
			switch {
			case r.server:
				return "Client reconnects"
			case len(r.groups) == 0:
				return "Reconnects"
			}
			return "Reconnects (" + strings.Join(r.groups, " / ") + ")"
		},
		parts: func(r *runInfo) []Part { // a value per connection group
			if len(r.groups) == 0 || r.server {
				return nil
			}
			out := make([]Part, len(r.groups))
			for i, g := range r.groups {
				out[i] = Part{g, "reconnects"}
			}
			return out
		},
		Value: func(c *column) Cell { // connections lost, over all groups; shown per group of the plan
			if !c.ran() {
				return notMeasured()
			}
			if len(c.run.groups) == 0 {
				return countCell(c.disconnects)
			}
			if c.run.server {
				return countCell(c.disconnects) // the clients the load reset or the server closed, each dialled again
			}
			parts := make([]string, len(c.run.groups))
			vs := make([]float64, len(c.run.groups))
			for i, g := range c.run.groups {
				parts[i] = fmt.Sprint(c.reconnects[g])
				vs[i] = float64(c.reconnects[g])
			}
			return Cell{strings.Join(parts, " / "), float64(c.disconnects), vs}
		}},
	{ID: "reconnect_duration", Title: "Reconnect duration (median / max)", Short: "Reconnect med / max", Unit: "ms", Better: Lower, Rank: RankRule{Kind: Ranked, Stat: PerFault, Of: SeriesReconnect, Floor: 50, Dim: DimResilience, Name: "longest reconnect per fault"},
		Parts: []Part{{"median", "ms"}, {"max", "ms"}}, short: lastValue,
		label: func(r *runInfo) string {
			if r.server {
				return "Client reconnect duration (median / max)"
			}
			return "Reconnect duration (median / max)"
		},
		Value: func(c *column) Cell { // the longest reconnect
			if len(c.recDurMs) == 0 {
				return notMeasured() // no reconnect: no duration
			}
			s := slices.Sorted(slices.Values(c.recDurMs))
			return Cell{fmt.Sprintf("%s / %s", unit.Millis(s[len(s)/2]), unit.Millis(s[len(s)-1])), s[len(s)-1], vals(s[len(s)/2], s[len(s)-1])}
		}},
	{ID: "drops", Title: "Clients dropped (slow reader / half-open)", Short: "Dropped slow / half-open", Unit: "clients", Better: NoRank, Rank: never, Side: SideServer,
		Parts: []Part{{"slow reader", "clients"}, {"half-open", "clients"}},
		// The clients the server dropped for a full queue, by the fault the
		// load made them with: what a server must do with a client that
		// stops reading, not a loss.
		Value: func(c *column) Cell {
			if !c.ran() {
				return notMeasured()
			}
			slow, half := c.dropped[wire.FaultSlowReader], c.dropped[wire.FaultHalfOpen]
			return Cell{fmt.Sprintf("%d / %d", slow, half), float64(slow + half), vals(float64(slow), float64(half))}
		}},
	{ID: "writes_per_delivery", Title: "Write syscalls per delivery", Short: "Writes per delivery", Unit: "writes", Better: Lower, Rank: never, Side: SideServer,
		// The server's write syscalls over the window's seconds ÷ its
		// deliveries in them: under 1 when it batches broadcasts into one
		// write, 1 for a write per message.
		Value: func(c *column) Cell {
			if c.writeDeliveries == 0 {
				return notMeasured()
			}
			r := float64(c.writes) / float64(c.writeDeliveries)
			return Cell{Text: fmt.Sprintf("%.2f", r), Num: r}
		}},
	{ID: "lost_across", Title: "Lost across reconnects (library / source)", Short: "Lost across reconnects", Unit: "ids", Better: Lower, Side: SideClient,
		Rank:  RankRule{Kind: Ranked, Stat: PerFault, Of: SeriesLostAcross, Floor: 1, Dim: DimResilience, Name: "ids lost across the reconnects of each fault"},
		Parts: lostParts,
		// Ids missing at a subscription's first message on a new connection:
		// the price of the outage, charged to the library when another
		// library received them, to the source when every library lost them.
		Value: func(c *column) Cell { return c.lostWhere(true) }},
	{ID: "silence", Title: "Max seconds without data", Unit: "s", Better: Lower, Rank: never, Threshold: "max_silence", Side: SideClient,
		Value: func(c *column) Cell { // the worst subscription
			switch {
			case c.streams == 0, c.silenceStream == "" && c.seqStreams == 0:
				// No subscription totals, or no message and no time
				// watched (a worker that stopped before the window): a 0
				// here would be a value nobody measured.
				return notMeasured()
			case c.silenceStream == "":
				return Cell{Text: "0.0 s", Num: 0}
			}
			s := float64(c.silenceMs) / 1000
			return Cell{Text: fmt.Sprintf("%.1f s (%s)", s, c.silenceStream), Num: s}
		}},
	{ID: "lost", Title: "Lost / duplicate (sequence ids)", Short: "Lost / duplicate ids", Unit: "ids", Better: Lower, Rank: never, Threshold: "max_lost", Prom: "soak_lost_messages_total",
		Side: SideClient, Parts: []Part{{"lost", "ids"}, {"duplicate", "ids"}},
		Value: func(c *column) Cell { // lost sequence ids, over all subscriptions
			if c.seqStreams == 0 {
				return notMeasured() // no subscription totals recorded, or no message: no sequence checked
			}
			return Cell{fmt.Sprintf("%d / %d", c.lost, c.dup), float64(c.lost), vals(float64(c.lost), float64(c.dup))}
		}},
	{ID: "lost_connected", Title: "Lost while connected (library / source)", Short: "Lost while connected", Unit: "ids", Better: Lower, Rank: check,
		Side: SideClient, Parts: lostParts,
		// Ids missing while a connection was up: a library's or the harness's
		// fault, 0 without faults; charged like lost_across.
		Value: func(c *column) Cell { return c.lostWhere(false) }},
	{ID: "latency", Title: "Latency p50 / p99 (ms)", Unit: "ms", Better: Lower, Rank: never, Side: SideClient, Prom: "soak_latency_seconds",
		Parts: []Part{{"p50", "ms"}, {"p99", "ms"}},
		Value: func(c *column) Cell { return c.latencyCell() }}, // whole-run p99
	{ID: "broadcast_latency", Title: "Broadcast latency p50 / p99 (ms)", Short: "Broadcast p50 / p99 ms", Unit: "ms", Better: Lower, Rank: never, Side: SideServer,
		Parts: []Part{{"p50", "ms"}, {"p99", "ms"}},
		// A message's send instant at one client to its receipt at each
		// other, over the window: what the room's clients waited.
		Value: func(c *column) Cell { return c.latencyCell() }},
	{ID: "latency_mean_p99", Title: "Latency: mean of per-second p99 (ms)", Short: "Latency mean p99 (ms)", Unit: "ms", Better: Lower,
		Rank: RankRule{Kind: Ranked, Stat: BatchMeans, Of: SeriesLatP99, Floor: 0.1, Dim: DimLatency, Name: "mean of per-second p99"},
		label: func(r *runInfo) string {
			if r.server {
				return "Broadcast latency: mean of per-second p99 (ms)"
			}
			return "Latency: mean of per-second p99 (ms)"
		},
		// Not the run's p99 (the row above): the mean over the window's
		// seconds of each second's p99, which pairs second by second.
		Value: func(c *column) Cell {
			m := meanOf(c.series.LatP99)
			if math.IsNaN(m) {
				return notMeasured()
			}
			text := fmt.Sprintf("%.2f", m)
			if c.run.latencySuspect {
				text += ClockMark
			}
			return Cell{Text: text, Num: m}
		}},
	{ID: "errors_stalls", Title: "Errors / stalls", Unit: "count", Better: Lower, Rank: never, Side: SideClient,
		Parts: []Part{{"errors", "count"}, {"stalls", "count"}},
		Value: func(c *column) Cell { // errors + stalls
			if !c.ran() {
				return notMeasured()
			}
			text := fmt.Sprintf("%d / %d", c.errors, c.stalls)
			if d := c.worker.DroppedEvents; d > 0 {
				text += fmt.Sprintf(" (+%d events dropped)", d)
			}
			return Cell{text, float64(c.errors + c.stalls), vals(float64(c.errors), float64(c.stalls))}
		}},
	{ID: "dropped_events", Title: "Events dropped by the worker", Short: "Events dropped", Unit: "events", Better: Lower, Rank: check, Side: SideClient,
		Prom: "soak_events_dropped_total",
		// Events (errors, stalls, reconnects …) a worker could not pass to
		// its frame writer because the channel was full: they are in no
		// count of this table, which is short by that many.
		Value: func(c *column) Cell {
			if !c.run.signals || !c.ran() {
				return notMeasured()
			}
			d := c.worker.DroppedEvents
			if d == 0 {
				return Cell{Text: "0", Num: 0}
			}
			return Cell{Text: fmt.Sprintf("%d (the event counts above are short by as many)", d), Num: float64(d)}
		}},
	{ID: "seconds_missing", Title: "Seconds missing", Unit: "s", Better: Lower, Rank: check, Prom: "soak_missing_seconds",
		// Seconds of the window the run lived through (endSec: the whole
		// window of a run done, up to the last second recorded for any
		// library of one interrupted or still written) without a worker
		// row: a controller outage, a worker that was down, rows lost to
		// failed writes, recorded (missing events) or not (a full disk at
		// the end).
		Value: func(c *column) Cell {
			miss := c.run.lastSec - c.workerSecs
			var notes []string
			for _, o := range c.run.outages {
				switch o.Kind {
				case wire.EventOutage:
					notes = append(notes, fmt.Sprintf("outage at %.0f s: %s", o.Sec, unit.Millis(o.DurMs)))
				case wire.EventWriteFailed:
					notes = append(notes, fmt.Sprintf("writes failed at %.0f s for %s", o.Sec, unit.Millis(o.DurMs)))
				case wire.EventMissing:
					notes = append(notes, fmt.Sprintf("%d rows lost from %.0f s", o.Code, o.Sec))
				}
			}
			if c.run.noEnd && miss > 0 {
				notes = append(notes, "the run did not record its end")
			}
			if len(notes) == 0 {
				return Cell{Text: fmt.Sprint(miss), Num: float64(miss)}
			}
			return Cell{Text: fmt.Sprintf("%d (%s)", miss, strings.Join(notes, ", ")), Num: float64(miss)}
		}},
	{ID: "dials", Title: "Dials / failed (status × n)", Short: "Dials / failed", Unit: "dials", Better: Lower, Rank: never, Side: SideClient,
		Prom: "soak_dials_total", Parts: []Part{{"dials", "dials"}, {"failed", "dials"}},
		Value: func(c *column) Cell { // failed dials
			if c.dialSlots == 0 {
				return notMeasured()
			}
			text := fmt.Sprintf("%d / %d", c.dials, c.dialFails)
			if len(c.statuses) > 0 {
				var parts []string
				for _, code := range slices.Sorted(maps.Keys(c.statuses)) {
					parts = append(parts, fmt.Sprintf("%s×%d", code, c.statuses[code]))
				}
				text += " (" + strings.Join(parts, ", ") + ")"
			}
			return Cell{text, float64(c.dialFails), vals(float64(c.dials), float64(c.dialFails))}
		}},
	{ID: "unrepairable", Title: "Unrepairable slots", Unit: "slots", Better: Lower, Rank: never, Side: SideClient,
		Value: func(c *column) Cell { return c.counted(len(c.unrepairSlots)) }}, // slots the unrepairable rule fired for
	{ID: "stalled_at_end", Title: "Stalled subscriptions at end", Short: "Stalled at end", Unit: "subscriptions", Better: Lower, Rank: never, Side: SideClient,
		Value: func(c *column) Cell {
			names := c.stalledStreams
			if c.streams == 0 {
				return notMeasured() // no subscription totals: nothing says whether any stalled
			}
			if len(names) == 0 {
				return Cell{Text: "0", Num: 0}
			}
			first := names[0]
			if len(names) > 1 {
				first += fmt.Sprintf(", +%d", len(names)-1)
			}
			return Cell{Text: fmt.Sprintf("%d (%s)", len(names), first), Num: float64(len(names))}
		}},

	// Hidden: what thresholds and the live view check that the table shows
	// only within another row.
	// Replaced by lost_across and lost_connected, which say where the ids
	// were lost; kept for the tables stored with it.
	{ID: "lost_charged", Title: "Lost charged to library / source", Unit: "ids", Better: Lower, Rank: never, Hidden: true, Retired: true,
		Value: func(c *column) Cell { // lost ids that another library received
			if c.charges == 0 {
				return notMeasured()
			}
			return Cell{Text: fmt.Sprintf("%d / %d", c.chargedLib, c.chargedSrc), Num: float64(c.chargedLib)}
		}},
	{ID: "bytes", Title: "Bytes received", Unit: "bytes", Better: Higher, Rank: never, Hidden: true, Prom: "soak_bytes_total",
		Value: func(c *column) Cell { // payload bytes, drain included (the table shows them with the messages)
			if !c.hasWorker {
				return notMeasured()
			}
			return Cell{Text: unit.Bytes(float64(c.bytesMax)), Num: float64(c.bytesMax)}
		}},
	{ID: "dup", Title: "Duplicate ids", Unit: "ids", Better: Lower, Rank: never, Hidden: true, Threshold: "max_dup",
		Value: func(c *column) Cell { // duplicate sequence ids, over all subscriptions
			if c.seqStreams == 0 {
				return notMeasured()
			}
			return Cell{Text: fmt.Sprint(c.dup), Num: float64(c.dup)}
		}},
	{ID: "reconnect_p99", Title: "Reconnect duration p99", Unit: "s", Better: Lower, Rank: never, Hidden: true, Threshold: "max_reconnect_p99",
		Value: func(c *column) Cell { // nearest rank; 0 without a reconnect
			p := p99(c.recDurMs) / 1000
			return Cell{Text: fmt.Sprintf("%.3f s", p), Num: p}
		}},
	{ID: "stalls", Title: "Stalls", Unit: "count", Better: Lower, Rank: never, Hidden: true, Threshold: "max_stalls", Prom: "soak_stalls_total",
		Value: func(c *column) Cell { return c.counted(c.stalls) }},
	{ID: "errors", Title: "Errors", Unit: "count", Better: Lower, Rank: never, Hidden: true, Threshold: "max_errors",
		Value: func(c *column) Cell { return c.counted(c.errors) }}, // store.Event.IsError
	{ID: "rss_growth", Title: "RSS growth", Unit: "bytes", Better: Lower, Rank: never, Hidden: true, Threshold: "max_rss_growth",
		Value: func(c *column) Cell { // the window's last RSS minus its first
			if c.rssN == 0 {
				return notMeasured()
			}
			g := c.rssLast - c.rssFirst
			return Cell{Text: fmt.Sprintf("%+.1f MB", float64(g)/1e6), Num: float64(g)}
		}},
	{ID: "latency_p99", Title: "Latency p99", Unit: "s", Better: Lower, Rank: never, Hidden: true, Threshold: "max_latency_p99", Prom: "soak_latency_p99_seconds",
		// Whole-run p99; not measured across an unsynchronised clock, where
		// it can be off by any amount (the table marks its cell instead).
		Value: func(c *column) Cell {
			lat := c.latency()
			if lat.Count == 0 || c.run.latencySuspect {
				return notMeasured()
			}
			s := float64(lat.P99) / 1e6
			return Cell{Text: fmt.Sprintf("%.4f s", s), Num: s}
		}},

	// Live only: the worker's state at the latest second.
	{ID: "goroutines", Title: "Goroutines", Unit: "count", Better: NoRank, Rank: never, Hidden: true, Prom: "soak_goroutines"},
	{ID: "conns_up", Title: "Connections up", Unit: "connections", Better: NoRank, Rank: never, Hidden: true, Prom: "soak_connections_up"},
	{ID: "worker_up", Title: "Worker up", Unit: "bool", Better: NoRank, Rank: never, Hidden: true, Prom: "soak_worker_up"},
	{ID: "worker_restarts", Title: "Worker restarts", Unit: "count", Better: Lower, Rank: never, Hidden: true, Prom: "soak_worker_restarts_total"},
}

// lostParts are the values of a lost cell: the ids lost, then those
// charged to the library and to the source.
var lostParts = []Part{{"lost", "ids"}, {"library", "ids"}, {"source", "ids"}}

// rateCell is the average and the peak of the window's one-second counts.
func (c *column) rateCell() Cell {
	if c.rate == 0 {
		return notMeasured()
	}
	avg := float64(c.rateSum) / float64(c.rate)
	return Cell{fmt.Sprintf("%s / %s", unit.Num(avg), unit.Num(float64(c.ratePeak))), avg, vals(avg, float64(c.ratePeak))}
}

// latencyCell is the whole run's p50 and p99.
func (c *column) latencyCell() Cell {
	lat := c.latency()
	if lat.Count == 0 {
		return notMeasured()
	}
	p50, p99 := float64(lat.P50)/1000, float64(lat.P99)/1000
	text := fmt.Sprintf("%.2f / %.2f", p50, p99)
	if c.run.latencySuspect { // a live target, and this machine's clock was not synchronised
		text += ClockMark
	}
	return Cell{text, p99, vals(p50, p99)}
}

// negotiatedShort is a Negotiated cell in a few columns: the first answer's
// first word and how many connections had it ("deflate ×3"), "mixed" when
// they had several.
func negotiatedShort(text string) []string {
	if strings.Contains(text, "; ") {
		return []string{"mixed"}
	}
	word, _, _ := strings.Cut(text, " ")
	word = strings.TrimSuffix(word, ",")
	if i := strings.LastIndex(text, " ×"); i >= 0 {
		return []string{word + text[i:]}
	}
	return []string{word}
}

// lastValue is the short forms of a cell of two values whose last matters
// most (a median and a max): both, narrower, then the last alone.
func lastValue(text string) []string {
	out := narrower(cut(text))
	if i := strings.LastIndex(cut(text), " / "); i >= 0 {
		out = append(out, cut(text)[i+3:])
	}
	return out
}

// wrap is a note of a cell ("; …") in parentheses after it ("" when none).
func wrap(note string) string {
	if note == "" {
		return ""
	}
	return " (" + strings.TrimPrefix(note, "; ") + ")"
}

// minCPUCompared is the least rusage CPU (seconds) whose difference from the
// sampled CPU is shown as a percentage: /proc counts 10 ms ticks, so below
// 100 ticks a percentage says more about the tick than about the sampling.
const minCPUCompared = 1.0

// ClockMark is appended to the latency cells of the end table when latency
// was measured across an unsynchronised clock.
const ClockMark = " (clock not synchronised)"

// p99 is the nearest-rank 99th percentile of xs (0 when empty).
func p99(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[int(math.Ceil(0.99*float64(len(s))))-1]
}

// extensionsName is a connected event's detail in a few words: its
// Sec-WebSocket-Extensions answer as "none", "deflate", "deflate no-takeover",
// with the server's window when bounded, then the subprotocol the worker
// appended after "; " when one was answered ("deflate, subprotocol X";
// "subprotocol X" alone when no extension was).
func extensionsName(detail string) string {
	ext, proto := detail, ""
	if i := strings.Index(detail, "subprotocol "); i >= 0 {
		ext, proto = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(detail[:i]), ";")), detail[i:]
	}
	if proto != "" {
		if ext == "" {
			return proto
		}
		return deflateName(ext) + ", " + proto
	}
	return deflateName(ext)
}

// deflateName is a Sec-WebSocket-Extensions answer in a few words.
func deflateName(ext string) string {
	if ext == "" {
		return "none"
	}
	if !strings.Contains(ext, "permessage-deflate") {
		return ext
	}
	name := "deflate"
	if strings.Contains(ext, "server_no_context_takeover") {
		name += " no-takeover"
	}
	if _, bits, ok := strings.Cut(ext, "server_max_window_bits="); ok {
		if i := strings.IndexAny(bits, ";, "); i >= 0 {
			bits = bits[:i]
		}
		name += " window " + bits
	}
	return name
}
