package report

import (
	"fmt"
	"strconv"

	"github.com/wssoak/wssoak/internal/store"
)

// clockState is the run's clock readings (store.ClockState) with the
// report's words for them.
type clockState struct{ store.ClockState }

// header is the Run section's line on the clock.
func (c clockState) header() string {
	var s string
	switch {
	case c.Readings == 0:
		s = "not recorded"
	case c.Unsynced > 0:
		s = fmt.Sprintf("not synchronised (at %d of %s; maximum error ±%s µs)", c.Unsynced, readings(c.Readings), num(float64(c.WorstUs)))
	default:
		s = fmt.Sprintf("synchronised, est. error ±%s µs (maximum error ±%s µs; %s)", num(float64(c.EstUs)), num(float64(c.MaxUs)), readings(c.Readings))
	}
	if c.Local {
		s += "; local target: latency does not depend on it"
	}
	return s
}

// chartNote is the note under the latency charts.
func (c clockState) chartNote() string {
	if c.Local {
		return "Local target: the replay server stamps E and the worker takes the receive time from the same machine's clock, " +
			"so latency does not depend on that clock's synchronisation."
	}
	const two = "Latency spans two clocks: the server's (event time E) and this machine's (receive time). "
	switch {
	case c.Readings == 0:
		return two + "This machine's clock synchronisation was not recorded."
	case c.Unsynced > 0:
		return two + fmt.Sprintf("This machine's clock was NOT synchronised at %d of %s: latency can be off by "+
			"any amount (the kernel's maximum error reached ±%s µs).", c.Unsynced, readings(c.Readings), num(float64(c.WorstUs)))
	}
	return two + fmt.Sprintf("This machine's clock was synchronised at every reading (%d), the kernel's estimated error "+
		"±%s µs (maximum ±%s µs); the server's own clock error is not known.", c.Readings, num(float64(c.EstUs)), num(float64(c.MaxUs)))
}

func readings(n int) string {
	if n == 1 {
		return "1 reading"
	}
	return strconv.Itoa(n) + " readings"
}
