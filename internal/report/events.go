package report

import (
	"math"
	"slices"
	"sort"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// marker is an event drawn on the reconnects chart: kind, at X on the line
// of library Lib ("" = run-wide, drawn at 0), N events folded into it.
type marker struct {
	Kind string
	X, Y float64
	Lib  string
	N    int
}

type eventLog struct {
	Total int      `json:"total"`
	Shown int      `json:"shown"`
	Cap   int      `json:"cap"` // per library and kind
	Rows  [][]any  `json:"rows"`
	Cols  []string `json:"cols"`
}

type eventCounts struct {
	Lib    string         `json:"lib"`
	ByKind map[string]int `json:"by_kind"`
}

// eventCap is how many events of one library and kind the log lists.
const eventCap = 500

// markerKinds maps event kinds to the marker groups of the reconnects chart.
var markerKinds = map[wire.EventKind]string{
	wire.EventReconnect:     "reconnect",
	wire.EventStall:         "stall",
	wire.EventFault:         "fault",
	wire.EventWorkerRestart: "worker restart",
	wire.EventWorkerExit:    "worker exit",
	wire.EventWorkerHung:    "worker hung",
	wire.EventUnrepairable:  "unrepairable",
	wire.EventOutage:        "outage", // the controller was down (a resumed run): nothing recorded
}

// maxMarkers bounds the markers of one group and library; beyond it events
// are folded per time bucket (the marker's N counts them).
const maxMarkers = 1000

// markers places events on the reconnects chart on their library's line
// (run-wide events at 0).
func markers(libs []string, libIdx map[string]int, recon *chart, events []store.Event) []marker {
	y := func(li int, x float64) float64 {
		if li < 0 {
			return 0
		}
		col := recon.Cols[li]
		i, _ := slices.BinarySearch(recon.X, x)
		for i = min(i, len(col)-1); i >= 0; i-- {
			if !math.IsNaN(col[i]) && recon.X[i] <= math.Ceil(x) {
				return col[i]
			}
		}
		return 0
	}
	type key struct {
		kind string
		lib  int
	}
	byKey := map[key][]store.Event{}
	var keys []key
	var span float64
	for _, e := range events {
		kind, ok := markerKinds[e.Kind]
		if !ok {
			continue
		}
		li := -1
		if e.Lib != "" {
			var known bool
			if li, known = libIdx[e.Lib]; !known {
				continue
			}
		}
		k := key{kind, li}
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], e)
		span = max(span, e.Sec)
	}
	name := func(li int) string {
		if li < 0 {
			return ""
		}
		return libs[li]
	}
	w := math.Max(1, math.Ceil(span/maxMarkers))
	var out []marker
	for _, k := range keys {
		evs := byKey[k]
		if len(evs) <= maxMarkers {
			for _, e := range evs {
				out = append(out, marker{Kind: k.kind, X: e.Sec, Y: y(k.lib, e.Sec), Lib: name(k.lib), N: 1})
			}
			continue
		}
		for i := 0; i < len(evs); {
			b := math.Floor(evs[i].Sec / w)
			j := i
			for j < len(evs) && math.Floor(evs[j].Sec/w) == b {
				j++
			}
			out = append(out, marker{Kind: k.kind, X: evs[i].Sec, Y: y(k.lib, evs[i].Sec), Lib: name(k.lib), N: j - i})
			i = j
		}
	}
	return out
}

// eventRows lists at most eventCap events per library and kind (in time
// order) and counts all of them.
func eventRows(libs []string, events []store.Event) (eventLog, []string, []eventCounts) {
	log := eventLog{Total: len(events), Cap: eventCap,
		Cols: []string{"t (s after start)", "library", "kind", "group", "slot", "stream", "code", "duration (ms)", "detail"}}
	type key struct{ lib, kind string }
	seen := map[key]int{}
	counts := map[string]map[string]int{}
	var kinds []string
	for _, e := range events {
		kind := string(e.Kind)
		k := key{e.Lib, kind}
		seen[k]++
		if counts[e.Lib] == nil {
			counts[e.Lib] = map[string]int{}
		}
		counts[e.Lib][kind]++
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
		if seen[k] > eventCap {
			continue
		}
		slot := any(e.Slot)
		if e.Slot < 0 {
			slot = ""
		}
		code := any(e.Code)
		if e.Code == 0 {
			code = ""
		}
		dur := any(math.Round(e.DurMs*10) / 10)
		if e.DurMs == 0 {
			dur = ""
		}
		lib := e.Lib
		if lib == "" {
			lib = "(run)"
		}
		log.Rows = append(log.Rows, []any{math.Round(e.Sec*1000) / 1000, lib, string(e.Kind), e.Group, slot, e.Stream, code, dur, e.Detail})
	}
	log.Shown = len(log.Rows)
	if log.Rows == nil {
		log.Rows = [][]any{}
	}
	sort.Strings(kinds)
	cs := []eventCounts{} // [] rather than null in the JSON, like kinds
	if kinds == nil {
		kinds = []string{}
	}
	for _, l := range append([]string{""}, libs...) {
		if m := counts[l]; m != nil {
			name := l
			if name == "" {
				name = "(run)"
			}
			cs = append(cs, eventCounts{Lib: name, ByKind: m})
		}
	}
	return log, kinds, cs
}
