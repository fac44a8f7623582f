package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// faultRow is what one library did in the faultWindow after the faults of
// one kind: how many of them, reconnects, their durations, stalls and lost
// messages (from the per-second totals).
type faultRow struct {
	Fault, Lib           string
	Faults               int
	Disconnects, Reconns int
	RecMedian, RecMax    float64 // ms
	Stalls               int
	Lost                 int64
}

// faultWindow is how long after a fault its consequences are charged to it.
const faultWindow = 30 * time.Second

// faultRows charges to each fault kind what every library did within
// faultWindow after each fault of that kind. lostAt reads a library's
// cumulative lost messages at whole seconds (runData.lostAt).
func faultRows(libs []string, events []store.Event, lostAt func(lib string, secs []int64) ([]int64, error)) ([]faultRow, error) {
	var faults []store.Event
	for _, e := range events {
		if e.Kind == wire.EventFault {
			faults = append(faults, e)
		}
	}
	if len(faults) == 0 {
		return nil, nil
	}
	// The events that count as consequences, per library, in time order.
	conseq := map[string][]store.Event{}
	for _, e := range events {
		switch e.Kind {
		case wire.EventDisconnected, wire.EventReconnect, wire.EventStall:
			conseq[e.Lib] = append(conseq[e.Lib], e)
		}
	}
	for _, evs := range conseq {
		slices.SortStableFunc(evs, func(a, b store.Event) int { return cmp.Compare(a.Sec, b.Sec) })
	}
	type fk struct{ fault, lib string }
	rows := map[fk]*faultRow{}
	lostFrom, lostTo, lostRow := map[string][]int64{}, map[string][]int64{}, map[string][]*faultRow{}
	durs := map[fk][]float64{}
	var kinds []string
	w := faultWindow.Seconds()
	for _, lib := range libs {
		// This library's faults (its own and run-wide ones), in time order.
		var mine []store.Event
		for _, f := range faults {
			if f.Lib == "" || f.Lib == lib {
				mine = append(mine, f)
			}
		}
		for fi, f := range mine {
			name := faultName(f)
			if !slices.Contains(kinds, name) {
				kinds = append(kinds, name)
			}
			end := f.Sec + w
			for _, next := range mine[fi+1:] {
				if next.Sec > f.Sec {
					end = min(end, next.Sec) // the next fault's consequences are its own
					break
				}
			}
			k := fk{name, lib}
			r := rows[k]
			if r == nil {
				r = &faultRow{Fault: name, Lib: lib}
				rows[k] = r
			}
			r.Faults++
			// Lost totals at whole seconds, so that windows do not overlap.
			lostFrom[lib] = append(lostFrom[lib], int64(math.Floor(f.Sec)))
			lostTo[lib] = append(lostTo[lib], int64(math.Floor(end)))
			lostRow[lib] = append(lostRow[lib], r)
			evs := conseq[lib]
			i, _ := slices.BinarySearchFunc(evs, f.Sec, func(e store.Event, t float64) int { return cmp.Compare(e.Sec, t) })
			for ; i < len(evs) && evs[i].Sec < end; i++ {
				switch evs[i].Kind {
				case wire.EventDisconnected:
					r.Disconnects++
				case wire.EventReconnect:
					r.Reconns++
					durs[k] = append(durs[k], evs[i].DurMs)
				case wire.EventStall:
					r.Stalls++
				}
			}
		}
	}
	for lib, rs := range lostRow {
		from, err := lostAt(lib, lostFrom[lib])
		if err != nil {
			return nil, err
		}
		to, err := lostAt(lib, lostTo[lib])
		if err != nil {
			return nil, err
		}
		for i, r := range rs {
			r.Lost += to[i] - from[i]
		}
	}
	var out []faultRow
	for _, name := range kinds {
		for _, lib := range libs {
			r := rows[fk{name, lib}]
			if r == nil {
				continue
			}
			if d := durs[fk{name, lib}]; len(d) > 0 {
				slices.Sort(d)
				r.RecMedian, r.RecMax = d[len(d)/2], d[len(d)-1]
			}
			out = append(out, *r)
		}
	}
	return out, nil
}

// faultName is the kind of a fault event (events.fault, which the store
// fills from the detail's first word for a database older than the column)
// with its code or status, if the detail names one.
func faultName(e store.Event) string {
	f := strings.Fields(strings.SplitN(e.Detail, ";", 2)[0])
	name := string(e.Fault)
	if name == "" {
		if e.Code != 0 {
			return "code " + strconv.Itoa(e.Code)
		}
		return "fault"
	}
	if len(f) > 1 && (strings.HasPrefix(f[1], "code=") || strings.HasPrefix(f[1], "status=")) {
		name += " " + f[1]
	}
	return name
}
