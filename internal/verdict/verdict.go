// Package verdict checks a run against the thresholds of its profile
// ("thresholds:"): one verdict per library and threshold, measured from the
// run's database with the same definitions as the end table.
package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
)

// measures are one library's numbers that thresholds are checked against.
type measures struct {
	lost, dup, reconnects, stalls, errors float64
	recDurMs                              []float64
	streams                               int // subscriptions with stored totals
	maxSilenceMs                          int64
	rssFirst, rssLast                     int64
	rssN                                  int // process samples in the window
	cpuSum                                float64
	cpuN                                  int
	latCount                              int64
	latP99us                              int64
	latSuspect                            bool // measured across an unsynchronised clock
}

// value returns the measure a threshold key limits, in its unit; NaN when it
// was not measured (no subscription totals, no process sample in the window,
// no latency recorded, or latency measured across an unsynchronised clock):
// the check is then skipped, neither passed nor broken.
func (m *measures) value(key string) (float64, string) {
	nan := math.NaN()
	switch key {
	case "max_lost":
		if m.streams == 0 {
			return nan, "messages"
		}
		return m.lost, "messages"
	case "max_dup":
		if m.streams == 0 {
			return nan, "messages"
		}
		return m.dup, "messages"
	case "max_reconnects":
		return m.reconnects, "count"
	case "max_reconnect_p99":
		return p99(m.recDurMs) / 1000, "s"
	case "max_silence":
		if m.streams == 0 {
			return nan, "s"
		}
		return float64(m.maxSilenceMs) / 1000, "s"
	case "max_stalls":
		return m.stalls, "count"
	case "max_errors":
		return m.errors, "count"
	case "max_rss_growth":
		if m.rssN == 0 {
			return nan, "bytes"
		}
		return float64(m.rssLast - m.rssFirst), "bytes"
	case "max_cpu_avg":
		if m.cpuN == 0 {
			return nan, "%"
		}
		return m.cpuSum / float64(m.cpuN), "%"
	case "max_latency_p99":
		if m.latCount == 0 || m.latSuspect {
			return nan, "s"
		}
		return float64(m.latP99us) / 1e6, "s"
	}
	panic("verdict: no measure for threshold " + key) // profile.ThresholdKeys and this switch go together (tested)
}

// p99 is the nearest-rank 99th percentile of xs (0 when empty).
func p99(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(math.Ceil(0.99*float64(len(s))))-1]
}

// FromRun checks the thresholds of the profile stored with the run.
func FromRun(db *store.DB) ([]store.Verdict, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(run.ProfileText) == "" {
		return nil, nil // no profile stored (a synthetic run): nothing to check
	}
	p, err := profile.ParseStored(run.Settings["profile_path"]+" (stored with the run)", []byte(run.ProfileText))
	if err != nil {
		return nil, fmt.Errorf("stored profile: %w", err)
	}
	return Check(db, p.Thresholds)
}

// Check measures every library of the run and returns one verdict per
// library and threshold, in threshold order, then library order of the
// workers table. No thresholds: no verdicts, and nothing is read.
func Check(db *store.DB, ts []profile.Threshold) ([]store.Verdict, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	workers, err := db.Workers()
	if err != nil {
		return nil, err
	}
	// Latency against a live target across an unsynchronised clock can be off
	// by any amount: its threshold is skipped, as the table marks its cells.
	clock, err := db.ClockState(run)
	if err != nil {
		return nil, err
	}
	ms := map[string]*measures{}
	var libs []string
	for _, w := range workers {
		ms[w.Lib] = &measures{latCount: w.LatCount, latP99us: w.LatP99, latSuspect: clock.LatencySuspect()}
		libs = append(libs, w.Lib)
	}
	streams, err := db.LatestStreamSamples()
	if err != nil {
		return nil, err
	}
	for _, s := range streams {
		if m := ms[s.Lib]; m != nil {
			m.streams++
			m.lost += float64(s.LostTotal)
			m.dup += float64(s.DupTotal)
			m.maxSilenceMs = max(m.maxSilenceMs, s.MaxSilenceMs)
		}
	}
	err = db.EachEvent(func(e *store.Event) error {
		m := ms[e.Lib]
		if m == nil {
			return nil
		}
		switch e.Kind {
		case "reconnect":
			m.recDurMs = append(m.recDurMs, e.DurMs)
		case "stall":
			m.stalls++
		case "disconnected":
			m.reconnects++
		}
		if e.IsError() {
			m.errors++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	last := int64(run.Planned / time.Second)
	err = db.EachSample(func(s *store.Sample) error {
		m := ms[s.Lib]
		if m == nil || !s.HasProc || s.Sec < 1 || (last > 0 && s.Sec > last) {
			return nil
		}
		if m.rssN == 0 {
			m.rssFirst = s.RSS
		}
		m.rssLast = s.RSS
		m.rssN++
		if s.Sec > 1 {
			m.cpuSum += s.CPUPct
			m.cpuN++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []store.Verdict
	for i, t := range ts {
		for _, lib := range libs {
			v, unit := ms[lib].value(t.Key)
			out = append(out, store.Verdict{Lib: lib, Threshold: t.Key, Value: v, Limit: t.Limit, Unit: unit,
				Broken: v > t.Limit, Ord: i}) // NaN > limit is false: a skipped check is not broken
		}
	}
	return out, nil
}

// Skipped returns the verdicts whose measure was not measured.
func Skipped(vs []store.Verdict) []store.Verdict {
	var out []store.Verdict
	for _, v := range vs {
		if v.Skipped() {
			out = append(out, v)
		}
	}
	return out
}

// Broken returns the verdicts that broke their threshold.
func Broken(vs []store.Verdict) []store.Verdict {
	var out []store.Verdict
	for _, v := range vs {
		if v.Broken {
			out = append(out, v)
		}
	}
	return out
}

// Format is a verdict as one line: "gws max_lost: 12 messages > limit 0 messages".
func Format(v store.Verdict) string {
	if v.Skipped() {
		return fmt.Sprintf("%s %s: not measured, skipped (limit %s)", v.Lib, v.Threshold, amount(v.Limit, v.Unit))
	}
	op := "≤"
	if v.Broken {
		op = ">"
	}
	return fmt.Sprintf("%s %s: %s %s limit %s", v.Lib, v.Threshold, amount(v.Value, v.Unit), op, amount(v.Limit, v.Unit))
}

func amount(x float64, unit string) string {
	switch unit {
	case "s":
		return time.Duration(math.Round(x * 1e9)).String()
	case "bytes":
		if math.Abs(x) < 1e6 {
			return fmt.Sprintf("%.0f B", x)
		}
		return fmt.Sprintf("%.1f MB", x/1e6)
	case "%":
		return fmt.Sprintf("%.2f %%", x)
	}
	return fmt.Sprintf("%.0f %s", x, unit)
}
