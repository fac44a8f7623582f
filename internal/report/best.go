package report

import (
	"fmt"
	"math"

	"github.com/wssoak/wssoak/internal/measure"
)

// bestRow marks the best cell of a reference-table row and the deltas.
type bestRow struct {
	Name   string
	Better string // "higher", "lower" or "" (not ranked)
	Cells  []bestCell
}

type bestCell struct {
	Text  string
	Best  bool
	Delta string // against the best, "" for the best itself
}

// bestRows marks the best value of every ranked row and the other cells'
// deltas against it, from the row's primary numbers.
func bestRows(t *measure.EndTable) []bestRow {
	var out []bestRow
	for _, r := range t.Rows {
		br := bestRow{Name: r.Name}
		if r.Better == measure.Higher || r.Better == measure.Lower {
			br.Better = string(r.Better)
		}
		best := math.NaN()
		if br.Better != "" && len(r.Nums) > 1 && !allEqual(r.Nums) {
			for _, n := range r.Nums {
				if math.IsNaN(n) {
					continue
				}
				if math.IsNaN(best) || br.Better == "higher" && n > best || br.Better == "lower" && n < best {
					best = n
				}
			}
		}
		for i, text := range r.Cells {
			c := bestCell{Text: text}
			if !math.IsNaN(best) && i < len(r.Nums) && !math.IsNaN(r.Nums[i]) {
				if r.Nums[i] == best {
					c.Best = true
				} else {
					c.Delta = delta(r.Nums[i], best, r.Unit)
				}
			}
			br.Cells = append(br.Cells, c)
		}
		out = append(out, br)
	}
	return out
}

// allEqual says a row ranks nothing: every library has the same number.
func allEqual(ns []float64) bool {
	for _, n := range ns {
		if n != ns[0] {
			return false
		}
	}
	return true
}

// delta is v against the best b, in the row's unit and, when b
// is not zero, relative to it.
func delta(v, b float64, unit string) string {
	d := v - b
	var abs string
	switch unit {
	case "bytes":
		abs = fmt.Sprintf("%+.1f MB", d/1e6)
	case "%":
		abs = fmt.Sprintf("%+.2f points", d)
	case "ms":
		abs = fmt.Sprintf("%+.0f ms", d)
	case "s":
		abs = fmt.Sprintf("%+.1f s", d)
	case "msgs/s":
		abs = fmt.Sprintf("%+.1f msgs/s", d)
	case "":
		abs = fmt.Sprintf("%+g", d)
	default:
		abs = fmt.Sprintf("%+.0f %s", d, unit)
	}
	if b == 0 {
		return abs
	}
	rel := 100 * d / math.Abs(b)
	if math.Abs(rel) < 1 {
		return fmt.Sprintf("%s (%+.2g %%)", abs, rel)
	}
	return fmt.Sprintf("%s (%+.1f %%)", abs, rel)
}
