package profile

import (
	"math"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Threshold is one pass/fail limit under "thresholds:", checked for every
// library at the end of a run (and by soak report). Limit is in the key's
// unit: a count, seconds, bytes or % of one core.
type Threshold struct {
	Key   string
	Limit float64
	Line  int
}

// ThresholdKind is how a threshold's limit is written.
type ThresholdKind int

// Kinds of threshold limits.
const (
	ThresholdCount    ThresholdKind = iota // a non-negative integer
	ThresholdDuration                      // a duration with a unit, stored as seconds
	ThresholdSize                          // bytes or a size with a unit, stored as bytes
	ThresholdPercent                       // a non-negative number, % of one core
)

// ThresholdKey is a key "thresholds:" accepts and how its limit is written.
type ThresholdKey struct {
	Key  string
	Kind ThresholdKind
}

// ThresholdKeys are the keys "thresholds:" accepts, in display order; the
// "Compare and thresholds" in docs/reference.md defines each.
var ThresholdKeys = []ThresholdKey{
	{"max_lost", ThresholdCount},
	{"max_dup", ThresholdCount},
	{"max_reconnects", ThresholdCount},
	{"max_reconnect_p99", ThresholdDuration},
	{"max_silence", ThresholdDuration},
	{"max_stalls", ThresholdCount},
	{"max_errors", ThresholdCount},
	{"max_rss_growth", ThresholdSize},
	{"max_cpu_avg", ThresholdPercent},
	{"max_latency_p99", ThresholdDuration},
}

// ThresholdOrder returns the display position of a threshold key (-1 if unknown).
func ThresholdOrder(key string) int {
	return slices.IndexFunc(ThresholdKeys, func(k ThresholdKey) bool { return k.Key == key })
}

func (d *decoder) thresholds(v *yaml.Node, dst *[]Threshold) error {
	var out []Threshold
	fs := make([]field, len(ThresholdKeys))
	for i, k := range ThresholdKeys {
		name := "thresholds." + k.Key
		fs[i] = field{k.Key, func(v *yaml.Node) error {
			t := Threshold{Key: k.Key, Line: d.at(deref(v).Line)}
			switch k.Kind {
			case ThresholdCount:
				var x int64
				if err := d.integer(name, &x, 0, 1<<53)(v); err != nil {
					return err
				}
				t.Limit = float64(x)
			case ThresholdDuration:
				var x Duration
				if err := d.duration(name, &x, nonNegative)(v); err != nil {
					return err
				}
				t.Limit = time.Duration(x).Seconds()
			case ThresholdSize:
				var x ByteSize
				if err := d.size(name, &x, nonNegative, math.MaxInt64)(v); err != nil {
					return err
				}
				t.Limit = float64(x)
			case ThresholdPercent:
				if err := d.float(name, &t.Limit, nonNegative)(v); err != nil {
					return err
				}
			}
			out = append(out, t)
			return nil
		}}
	}
	if err := d.mapping(v, "thresholds", fs); err != nil {
		return err
	}
	slices.SortStableFunc(out, func(a, b Threshold) int { return ThresholdOrder(a.Key) - ThresholdOrder(b.Key) })
	*dst = out
	return nil
}
