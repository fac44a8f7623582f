package export

import (
	"slices"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Column is one column of a run as the columns table exports it: its name
// (the lib of every other table), the library behind it, what a variant sets
// (wire.Settings.String; empty for a plain library), and what its worker
// recorded.
type Column struct {
	Name, Lib, Settings      string
	Module, Version, Runtime string
}

// RunColumns returns the run's columns in the plan's order, then any worker
// the plan does not list (a run planned before plans listed columns, or a
// server-side soak, whose workers are its libraries).
func RunColumns(db *store.DB) ([]Column, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	workers, err := db.Workers()
	if err != nil {
		return nil, err
	}
	var out []Column
	for _, c := range wire.StoredColumns(run.Settings["plan"]) {
		out = append(out, Column{Name: c.Name, Lib: c.Lib, Settings: c.Settings.String()})
	}
	for _, w := range workers {
		i := slices.IndexFunc(out, func(c Column) bool { return c.Name == w.Lib })
		if i < 0 {
			lib := ""
			if slices.Contains(wire.Libraries, w.Lib) {
				lib = w.Lib
			}
			out = append(out, Column{Name: w.Lib, Lib: lib})
			i = len(out) - 1
		}
		out[i].Module, out[i].Version, out[i].Runtime = w.Module, w.Version, w.Runtime
	}
	return out, nil
}
