// Package report turns a run's database into the comparison table (and later
// the HTML report and CSV exports).
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
)

// Table is the reference comparison table: one row per measure of the end
// table, one column per library.
type Table struct {
	RunID   string
	Seconds int64 // planned window
	Libs    []string
	Rows    []Row
}

// Row is one measure across the libraries.
type Row struct {
	ID     string         // the measure's catalogue id ("" for a stored row of no known measure)
	Name   string         // as shown
	Unit   string         // of Nums
	Better measure.Better // "" for a stored row of no known measure
	Cells  []string       // one per library, formatted
	Nums   []float64      // the primary number behind each cell (for deltas and thresholds)
}

// Summarize computes the table from a run's database.
func Summarize(db *store.DB) (*Table, error) {
	r, err := measure.Compute(db)
	if err != nil {
		return nil, err
	}
	return TableOf(r), nil
}

// TableOf is the end table of computed results: the measures that are not
// hidden, in catalogue order.
func TableOf(r *measure.Results) *Table {
	t := &Table{RunID: r.RunID, Seconds: r.Seconds, Libs: r.Libs()}
	for _, row := range r.Rows {
		m := row.Measure
		if m.Hidden {
			continue
		}
		tr := Row{ID: m.ID, Name: row.Title, Unit: m.Unit, Better: m.Better}
		for _, c := range row.Cells {
			tr.Cells = append(tr.Cells, c.Text)
			tr.Nums = append(tr.Nums, c.Num)
		}
		t.Rows = append(t.Rows, tr)
	}
	return t
}

// WriteText prints the table with aligned columns.
func (t *Table) WriteText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\n", strings.Join(t.Libs, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, strings.Join(r.Cells, "\t"))
	}
	tw.Flush()
}

// SummaryRows flattens the table for storage.
func (t *Table) SummaryRows() []store.SummaryRow {
	var out []store.SummaryRow
	for i, r := range t.Rows {
		for j, lib := range t.Libs {
			out = append(out, store.SummaryRow{ID: r.ID, Metric: r.Name, Lib: lib, Value: r.Cells[j], Num: r.Nums[j], Ord: i})
		}
	}
	return out
}

// notMeasured is the cell of a value that was not measured.
const notMeasured = measure.NotMeasured

func num(f float64) string { return unit.Num(f) }

func dur(ms float64) string { return unit.Millis(ms) }
