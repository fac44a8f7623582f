package measure

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/wire"
)

// The blackhole finding (a run with link: and a blackhole fault): what each
// library made of a path that silently drops every packet. From the fault's
// instant, each connection it found open is watched until its slot's first
// disconnect — before the column's next fault, if another comes — and then
// until the reconnect that followed: how long the library took to notice,
// by which of its mechanisms (the disconnect's cause), and the ids lost
// across the outage. A connection that never disconnected survived (TCP
// carried on once the path came back). Not ranked: a library that gives up
// on a silent connection sooner is configured so, not better; the rows say
// what happened.
func init() {
	Catalogue = append(Catalogue, networkMeasures...)
}

var networkMeasures = []*Measure{
	{ID: "blackhole_detect", Title: "Blackhole: detected after (median / max)", Short: "Blackhole detected after", Side: SideClient, Unit: "s", Better: NoRank, Rank: never, WhenMeasured: true,
		Parts: []Part{{"median", "s"}, {"max", "s"}},
		Value: blackhole(func(n *netFinding) Cell { // the slowest detection
			if len(n.detectMs) == 0 {
				return Cell{fmt.Sprintf("never (%d survived)", n.survived()), nan, vals(nan, nan)}
			}
			s := slices.Sorted(slices.Values(n.detectMs))
			text := fmt.Sprintf("%s / %s", unit.Millis(s[len(s)/2]), unit.Millis(s[len(s)-1]))
			if k := n.survived(); k > 0 {
				text += fmt.Sprintf(" (%d survived)", k)
			}
			return Cell{text, s[len(s)-1] / 1000, vals(s[len(s)/2]/1000, s[len(s)-1]/1000)}
		})},
	{ID: "blackhole_mechanism", Title: "Blackhole: detected by", Short: "Blackhole detected by", Side: SideClient, Unit: "connections", Better: NoRank, Rank: never, WhenMeasured: true,
		Value: blackhole(func(n *netFinding) Cell { // connections that noticed
			if len(n.mechanisms) == 0 {
				return Cell{Text: "none", Num: 0}
			}
			var parts []string
			for _, m := range slices.Sorted(maps.Keys(n.mechanisms)) {
				parts = append(parts, fmt.Sprintf("%s ×%d", m, n.mechanisms[m]))
			}
			return Cell{Text: strings.Join(parts, ", "), Num: float64(len(n.detectMs))}
		})},
	{ID: "blackhole_lost", Title: "Blackhole: ids lost", Short: "Blackhole ids lost", Side: SideClient, Unit: "ids", Better: NoRank, Rank: never, WhenMeasured: true,
		Value: blackhole(func(n *netFinding) Cell { // lost across the reconnects that followed the detections
			text := fmt.Sprint(n.lost)
			if n.awaiting() > 0 {
				text += fmt.Sprintf(" (+%d not back by the end)", n.awaiting())
			}
			return Cell{Text: text, Num: float64(n.lost)}
		})},
}

// blackhole is a blackhole row's Value: not measured for a column that went
// through no blackhole, else cell of what was collected.
func blackhole(cell func(n *netFinding) Cell) func(c *column) Cell {
	return func(c *column) Cell {
		if c.net.blackholes == 0 {
			return notMeasured()
		}
		return cell(&c.net)
	}
}

// netFinding is what the streaming pass collects of one column's blackholes.
type netFinding struct {
	blackholes int       // blackhole faults seen
	at         time.Time // the latest one's instant (zero: none being watched)
	open       int       // connections it found open
	noticed    map[int]bool
	notSeen    int            // of the earlier blackholes' connections, those that never disconnected
	back       map[int]bool   // slots waiting for their reconnect
	detectMs   []float64      // per connection that noticed
	mechanisms map[string]int // connections that noticed, by mechanism
	lost       int64          // ids lost across the reconnects that followed
}

// event takes the column's events in time order.
func (n *netFinding) event(e *store.Event) {
	switch e.Kind {
	case wire.EventFault:
		n.endWatch()
		if e.Fault != wire.FaultBlackhole {
			return
		}
		n.blackholes++
		n.at, n.open, n.noticed = e.TS, openConns(e.Detail), map[int]bool{}
	case wire.EventDisconnected:
		if n.at.IsZero() || n.noticed[e.Slot] || !e.TS.After(n.at) {
			return
		}
		n.noticed[e.Slot] = true
		n.detectMs = append(n.detectMs, float64(e.TS.Sub(n.at))/float64(time.Millisecond))
		if n.mechanisms == nil {
			n.mechanisms = map[string]int{}
		}
		n.mechanisms[Mechanism(e.Detail)]++
		if n.back == nil {
			n.back = map[int]bool{}
		}
		n.back[e.Slot] = true
	case wire.EventReconnect:
		if n.back[e.Slot] {
			delete(n.back, e.Slot)
			n.lost += blackholeLost(e.Detail)
		}
	}
}

// endWatch ends the watch of the latest blackhole (another fault came):
// the connections that did not notice it survived it.
func (n *netFinding) endWatch() {
	if !n.at.IsZero() {
		n.notSeen += max(n.open-len(n.noticed), 0)
	}
	n.at = time.Time{}
}

// survived is the connections that never disconnected after a blackhole.
func (n *netFinding) survived() int {
	k := n.notSeen
	if !n.at.IsZero() {
		k += max(n.open-len(n.noticed), 0)
	}
	return k
}

// awaiting is the slots that noticed and had not delivered again by the end.
func (n *netFinding) awaiting() int { return len(n.back) }

var (
	connsRe = regexp.MustCompile(`; (\d+) connections`)
	lostRe  = regexp.MustCompile(`\blost=(\d+)`)
)

// openConns is the connections a network fault event's detail says the
// column had open at its instant.
func openConns(detail string) int {
	m := connsRe.FindStringSubmatch(detail)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// blackholeLost is the ids a reconnect event's detail counts lost across the outage (0 when it says none).
func blackholeLost(detail string) int64 {
	m := lostRe.FindStringSubmatch(detail)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// Mechanism names what ended a connection, from its disconnected event's
// detail ("cause: specifics", the worker's cause first): the keepalive's
// pong timeout, the silence watchdog (every subscription stalled), a read
// deadline of the library's own, an error the kernel reported (a reset, a
// retransmission timeout), a close the server sent, or the cause itself.
func Mechanism(detail string) string {
	cause, text, _ := strings.Cut(detail, ": ")
	switch cause {
	case "pong_timeout":
		return "pong timeout"
	case "stall_abort":
		return "silence watchdog"
	case "server_close":
		return "server close"
	case "abnormal":
		t := strings.ToLower(text)
		switch {
		case strings.Contains(t, "i/o timeout") || strings.Contains(t, "deadline exceeded"):
			return "read deadline"
		case strings.Contains(t, "connection timed out"):
			return "kernel: timed out"
		case strings.Contains(t, "connection reset"):
			return "kernel: reset"
		case strings.Contains(t, "broken pipe"):
			return "kernel: broken pipe"
		case t == "eof" || strings.Contains(t, "eof"):
			return "end of stream"
		}
		return "kernel error"
	}
	return cause
}
