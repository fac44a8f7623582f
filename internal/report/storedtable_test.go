package report

import (
	"math"
	"testing"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

// TestStoredTableWithoutIDs: a table stored before the ids finds its
// measures by name — unit and direction, so the best mark and the deltas —
// and a row of no known measure is shown unranked.
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
	best := bestRows(tbl)
	if c := best[0].Cells; !c[0].Best || c[1].Delta != "+2 reconnects (+200.0 %)" {
		t.Errorf("reconnects cells %+v, want gorilla best and gws +2", c)
	}
	if best[1].Better != "" || best[1].Cells[0].Best || best[1].Cells[1].Best {
		t.Errorf("unknown row ranked: %+v", best[1])
	}
}
