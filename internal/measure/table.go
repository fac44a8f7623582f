package measure

import (
	"cmp"
	"math"
	"slices"

	"github.com/wssoak/wssoak/internal/store"
)

// EndTable is the reference comparison table, the one soak run prints when
// a run ends: one row per measure that is not hidden, one column per
// library. The catalogue computes it; renderers only show it and callers
// store it (SummaryRows).
type EndTable struct {
	RunID   string
	Seconds int64 // planned window
	Libs    []string
	Rows    []EndRow
}

// EndRow is one measure across the libraries.
type EndRow struct {
	ID     string    // the measure's catalogue id ("" for a stored row of no known measure)
	Name   string    // as shown
	Unit   string    // of Nums
	Better Better    // "" for a stored row of no known measure
	Cells  []string  // one per library, formatted
	Nums   []float64 // the primary number behind each cell (for deltas and thresholds)
}

// Summarize computes the end table from a run's database. It only reads db.
func Summarize(db *store.DB) (*EndTable, error) {
	r, err := Compute(db)
	if err != nil {
		return nil, err
	}
	return r.EndTable(), nil
}

// EndTable is the end table of the results: the measures that are not
// hidden, in catalogue order.
func (r *Results) EndTable() *EndTable {
	t := &EndTable{RunID: r.RunID, Seconds: r.Seconds, Libs: r.Libs()}
	for _, row := range r.Rows {
		m := row.Measure
		if m.Hidden || m.WhenMeasured && !anyMeasured(row.Cells) {
			continue
		}
		tr := EndRow{ID: m.ID, Name: row.Title, Unit: m.Unit, Better: m.Better}
		for _, c := range row.Cells {
			tr.Cells = append(tr.Cells, c.Text)
			tr.Nums = append(tr.Nums, c.Num)
		}
		t.Rows = append(t.Rows, tr)
	}
	return t
}

// SummaryRows flattens the table for storage (store.DB.SaveSummary).
func (t *EndTable) SummaryRows() []store.SummaryRow {
	var out []store.SummaryRow
	for i, r := range t.Rows {
		for j, lib := range t.Libs {
			out = append(out, store.SummaryRow{ID: r.ID, Metric: r.Name, Lib: lib, Value: r.Cells[j], Num: r.Nums[j], Ord: i})
		}
	}
	return out
}

// EndTableFromRows is the inverse of EndTable.SummaryRows: the table a
// finished run stored. A row stored without an id (before the ids) is
// matched to its measure by name; a row of no known measure keeps its name
// and cells, unranked.
func EndTableFromRows(run store.Run, rows []store.SummaryRow) *EndTable {
	t := &EndTable{RunID: run.ID, Seconds: int64(run.Planned.Seconds())}
	for _, r := range rows {
		if r.Lib != "" && !slices.Contains(t.Libs, r.Lib) {
			t.Libs = append(t.Libs, r.Lib)
		}
	}
	slices.SortStableFunc(t.Libs, func(a, b string) int { return cmp.Compare(Rank(a), Rank(b)) })
	byOrd := map[int]int{} // ord → index in t.Rows
	for _, r := range rows {
		li := slices.Index(t.Libs, r.Lib)
		if li < 0 {
			continue
		}
		i, ok := byOrd[r.Ord]
		if !ok {
			i = len(t.Rows)
			byOrd[r.Ord] = i
			row := EndRow{Name: r.Metric, Cells: make([]string, len(t.Libs)), Nums: make([]float64, len(t.Libs))}
			if m := Find(r.ID, r.Metric); m != nil {
				row.ID, row.Unit, row.Better = m.ID, m.Unit, m.Better
			}
			for j := range row.Cells {
				row.Cells[j], row.Nums[j] = NotMeasured, math.NaN()
			}
			t.Rows = append(t.Rows, row)
		}
		t.Rows[i].Cells[li], t.Rows[i].Nums[li] = r.Value, r.Num
	}
	return t
}

// anyMeasured reports whether some cell holds a value.
func anyMeasured(cells []Cell) bool {
	return slices.ContainsFunc(cells, func(c Cell) bool { return c.Text != NotMeasured })
}
