package report

import (
	"math"
	"testing"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

// TestStoredTableWithoutIDs: a table stored before the ids finds its
// measures by name — unit, direction and rank kind, so the deltas — and a
// row of no known measure is shown unranked.
func TestStoredTableWithoutIDs(t *testing.T) {
	rows := []store.SummaryRow{
		{Metric: "Reconnects (arr / markets)", Lib: "gws", Value: "1 / 2", Num: 3, Ord: 0},
		{Metric: "Reconnects (arr / markets)", Lib: "gorilla", Value: "0 / 1", Num: 1, Ord: 0},
		{Metric: "A row of no measure", Lib: "gws", Value: "x", Num: 1, Ord: 1},
		{Metric: "A row of no measure", Lib: "gorilla", Value: "y", Num: 2, Ord: 1},
		{ID: "lost", Metric: "Lost, renamed", Lib: "gws", Value: "7", Num: 7, Ord: 2},
		{ID: "lost", Metric: "Lost, renamed", Lib: "gorilla", Value: "-", Num: math.NaN(), Ord: 2},
	}
	tbl := measure.EndTableFromRows(store.Run{ID: "old"}, rows)
	if len(tbl.Rows) != 3 || tbl.Libs[0] != "gorilla" {
		t.Fatalf("table %+v", tbl)
	}
	if r := tbl.Rows[0]; r.ID != "reconnects" || r.Unit != "reconnects" || r.Better != measure.Lower {
		t.Errorf("reconnects row %+v, want its measure found by name", r)
	}
	if r := tbl.Rows[1]; r.ID != "" || r.Better != "" {
		t.Errorf("unknown row %+v, want no measure", r)
	}
	if r := tbl.Rows[2]; r.ID != "lost" || r.Unit != "ids" {
		t.Errorf("renamed row %+v, want its measure found by id", r)
	}
	// Reconnects are never ranked (a count of one run): no ★, the
	// difference from the fewest only.
	best := bestRows(Findings{Table: tbl})
	if c := best[0].Cells; c[0].Star || !c[0].Ref || c[1].Delta != "+2 reconnects (+200.0 %)" || best[0].Call != "" {
		t.Errorf("reconnects cells %+v (call %q), want gorilla the reference, gws +2, no ★", c, best[0].Call)
	}
	if best[1].Better != "" || best[1].Call != "" || best[1].Cells[0].Ref || best[1].Cells[1].Ref {
		t.Errorf("unknown row ranked: %+v", best[1])
	}
}
