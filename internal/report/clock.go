package report

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/wssoak/wssoak/internal/store"
)

// clockState is what a run recorded of the local clock's synchronisation
// (the kernel's adjtimex state): the reading at the start (the run's host
// info) and those taken once a minute inside the window (clock_samples).
// Latency is receive time (this clock) − the event time E (the server's
// clock): against a live target it is only as good as this clock's sync;
// against the local replay server both are this machine's clock.
type clockState struct {
	Local    bool  // the target is the local replay server
	Readings int   // readings at the start and inside the window
	Unsynced int   // of them, not synchronised
	EstUs    int64 // the largest estimated error of the synchronised readings, µs
	MaxUs    int64 // the largest maximum error of the synchronised readings, µs
	WorstUs  int64 // the largest maximum error of all readings, µs
}

// readClockState reads the run's clock readings: the start's from the host
// info, the others from clock_samples up to the window's end.
func readClockState(db *store.DB, run store.Run) (clockState, error) {
	c := clockState{Local: planLocal(run.Settings["plan"])}
	if v, ok := run.Host["clock_synced"]; ok {
		est, _ := strconv.ParseInt(run.Host["clock_esterror_us"], 10, 64)
		maxe, _ := strconv.ParseInt(run.Host["clock_maxerror_us"], 10, 64)
		c.add(v == "true", est, maxe)
	}
	samples, err := db.ClockSamples()
	if err != nil {
		return c, err
	}
	last := int64(run.Planned.Seconds())
	for _, s := range samples {
		if last > 0 && s.Sec > last {
			continue // the drain, after the window
		}
		c.add(s.Synced, s.EstErrorUs, s.MaxErrorUs)
	}
	return c, nil
}

func (c *clockState) add(synced bool, est, maxe int64) {
	c.Readings++
	c.WorstUs = max(c.WorstUs, maxe)
	if !synced {
		c.Unsynced++
		return
	}
	c.EstUs, c.MaxUs = max(c.EstUs, est), max(c.MaxUs, maxe)
}

// planLocal reports whether the run's plan targets the local replay server.
func planLocal(planJSON string) bool {
	var p struct {
		Local bool `json:"local"`
	}
	return json.Unmarshal([]byte(planJSON), &p) == nil && p.Local
}

// latencySuspect: latency was measured across two clocks and this one was
// not synchronised at some reading.
func (c clockState) latencySuspect() bool { return !c.Local && c.Unsynced > 0 }

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

// clockMark is appended to the latency cells of the end table when
// latencySuspect.
const clockMark = " (clock not synchronised)"
