package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/unit"
)

// WriteText prints the end table with aligned columns: what soak run prints
// when a run ends.
func WriteText(w io.Writer, t *measure.EndTable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\n", strings.Join(t.Libs, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, strings.Join(r.Cells, "\t"))
	}
	tw.Flush()
}

// notMeasured is the cell of a value that was not measured.
const notMeasured = measure.NotMeasured

func num(f float64) string { return unit.Num(f) }

func dur(ms float64) string { return unit.Millis(ms) }
