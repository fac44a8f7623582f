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
	Seconds int64  // planned window
	Side    string // SideClient, or SideServer for a server-side soak
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
	// Parts name each value of a cell that shows several, Vals hold them
	// per library (Cell.Vals): computed, never stored, so nil in a table
	// read back from the database.
	Parts []Part
	Vals  [][]float64
}

// ValuesOf is the values of lib's cell of measure id, and the parts they
// are of, when the table has that cell showing text (a table read back
// from the database has none: its text matched in a table computed anew
// tells that these are its values); nil, nil otherwise or for a cell of
// one value.
func (t *EndTable) ValuesOf(id, lib, text string) ([]float64, []Part) {
	if t == nil {
		return nil, nil
	}
	j := slices.Index(t.Libs, lib)
	for _, r := range t.Rows {
		if r.ID == id && j >= 0 && len(r.Parts) > 0 && j < len(r.Vals) && r.Cells[j] == text {
			return r.Vals[j], r.Parts
		}
	}
	return nil, nil
}

// Short is the row's name where the table must fit a terminal (ShortTitle).
func (r EndRow) Short() string { return ShortTitle(r.ID, r.Name) }

// ShortForms are cell i's shorter texts, the most telling first (ShortForms).
func (r EndRow) ShortForms(i int) []string { return ShortForms(r.ID, r.Cells[i]) }

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
	t := &EndTable{RunID: r.RunID, Seconds: r.Seconds, Side: r.Side, Libs: r.Libs()}
	for _, row := range r.Rows {
		m := row.Measure
		if m.Hidden || m.WhenMeasured && !anyMeasured(row.Cells) {
			continue
		}
		tr := EndRow{ID: m.ID, Name: row.Title, Unit: m.Unit, Better: m.Better, Parts: row.Parts}
		for _, c := range row.Cells {
			tr.Cells = append(tr.Cells, c.Text)
			tr.Nums = append(tr.Nums, c.Num)
			if len(row.Parts) > 0 {
				v := c.Vals
				if len(v) != len(row.Parts) { // not measured
					v = make([]float64, len(row.Parts))
					for i := range v {
						v[i] = math.NaN()
					}
				}
				tr.Vals = append(tr.Vals, v)
			}
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
	t := &EndTable{RunID: run.ID, Seconds: int64(run.Planned.Seconds()), Side: SideOf(run)}
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

// SideOf is the side of a run's soak: SideServer for a server-side soak,
// else SideClient.
func SideOf(run store.Run) string {
	if run.Settings["side"] == SideServer {
		return SideServer
	}
	return SideClient
}
