// Package compare puts the end tables of two runs side by side, per library,
// with the difference of the number behind each cell, and tests the ranked
// measures of two runs (or of two sets of runs) with the ranking's
// statistics: per column, B against A by Mann–Whitney.
package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
)

// Side is one run of a comparison: its record and its end table, and its
// ranked measures: each column's level and the samples within the run
// (ranking.Samples).
type Side struct {
	Path    string // what the user named
	Run     store.Run
	Rows    []store.SummaryRow
	Ranking *ranking.Ranking
	Samples map[string][][]float64
}

// Load reads a run's record and stored end table; a run without one (still
// going, or crashed) has its table computed from the samples.
func Load(db *store.DB, path string) (Side, error) {
	run, err := db.Run()
	if err != nil {
		return Side{}, err
	}
	rows, err := db.Summary()
	if err != nil {
		return Side{}, err
	}
	res, err := measure.Compute(db)
	if err != nil {
		return Side{}, fmt.Errorf("summarize %s: %w", path, err)
	}
	if len(rows) == 0 {
		rows = res.EndTable().SummaryRows()
	}
	return Side{Path: path, Run: run, Rows: rows, Ranking: ranking.Compute(res), Samples: ranking.Samples(res)}, nil
}

type cell struct {
	value string
	num   float64
}

// key is what matches a row of A with a row of B: its measure's id (a row
// stored without one is matched to its measure by name), else its name.
func key(r store.SummaryRow) string {
	if m := measure.Find(r.ID, r.Metric); m != nil {
		return m.ID
	}
	return "\x00" + r.Metric // no measure of the catalogue: its name, apart from any id
}

// unitOf is the unit of the number behind a row's cells, "" when unknown.
func unitOf(k string) string {
	if m := measure.ByID(k); m != nil {
		return m.Unit
	}
	return ""
}

// index is a side's table by library, then row key, the key and library
// orders, and each key's row name.
func index(s Side) (map[string]map[string]cell, []string, []string, map[string]string) {
	m := map[string]map[string]cell{}
	names := map[string]string{}
	var keys, libs []string
	for _, r := range s.Rows {
		if m[r.Lib] == nil {
			m[r.Lib] = map[string]cell{}
			libs = append(libs, r.Lib)
		}
		k := key(r)
		m[r.Lib][k] = cell{r.Value, r.Num}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
			names[k] = r.Metric
		}
	}
	return m, keys, libs, names
}

// Write prints the comparison: a header naming both runs, then per library
// (in A's order, then those only in B) every measure of either table
// (matched by id; a row is named as A names it) with
// A's cell, B's cell, B − A in the metric's unit and (B − A) / |A| in %.
func Write(w io.Writer, a, b Side) {
	am, ametrics, alibs, names := index(a)
	bm, bmetrics, blibs, bnames := index(b)
	for _, m := range bmetrics {
		if !slices.Contains(ametrics, m) {
			ametrics = append(ametrics, m)
			names[m] = bnames[m]
		}
	}
	for _, l := range blibs {
		if !slices.Contains(alibs, l) {
			alibs = append(alibs, l)
		}
	}
	for _, s := range []struct {
		name string
		side Side
	}{{"A", a}, {"B", b}} {
		r := s.side.Run
		fmt.Fprintf(w, "%s: %s  (run %s, %s, %s, %s)\n", s.name, s.side.Path, r.ID, r.Target, r.Planned, r.Status)
	}
	fmt.Fprintln(w)
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	for i, lib := range alibs {
		if i > 0 {
			fmt.Fprint(tw, "\t\t\t\t\n") // a blank line that keeps the columns aligned across libraries
		}
		fmt.Fprintf(tw, "%s\tA\tB\tB − A\tΔ %%\n", lib)
		for _, m := range ametrics {
			ac, aok := am[lib][m]
			bc, bok := bm[lib][m]
			if !aok && !bok {
				continue
			}
			av, bv := "-", "-"
			if aok {
				av = ac.value
			}
			if bok {
				bv = bc.value
			}
			d, pct := "-", "-"
			// "-" is a cell without a number, whatever number was stored.
			if aok && bok && !math.IsNaN(ac.num) && !math.IsNaN(bc.num) && ac.value != "-" && bc.value != "-" {
				d = delta(bc.num-ac.num, unitOf(m))
				if ac.num != 0 {
					pct = fmt.Sprintf("%+.1f %%", 100*(bc.num-ac.num)/math.Abs(ac.num))
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", names[m], av, bv, d, pct)
		}
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(line, " \n"), strings.Repeat("\n", strings.Count(line, "\n")))
	}
	WriteRanked(w, []Side{a}, []Side{b})
}

// delta formats a difference in a metric's unit.
func delta(d float64, u string) string {
	switch u {
	case "bytes":
		return fmt.Sprintf("%+.1f MB", d/1e6)
	case "%":
		return fmt.Sprintf("%+.2f pp", d) // percentage points of one core
	case "s":
		return fmt.Sprintf("%+.2f s", d)
	case "ms":
		return fmt.Sprintf("%+.1f ms", d)
	case "":
		return fmt.Sprintf("%+g", d)
	}
	return unit.Signed(d) + " " + u
}
