package export

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
)

// Run is one run of an export of several: its database and what names it
// in the files' first two columns.
type Run struct {
	DB   *store.DB
	ID   string // the run's id
	Host string // the run's host as its labels say (RunHost)
}

// RunHost names the host a run ran on from its record: its labels (the
// user's: -label, the profile's labels:) as k=v pairs, else its kernel and
// CPU; the host's name is never recorded.
func RunHost(r store.Run, labels map[string]string) string {
	if h := labels["host"]; h != "" {
		return h
	}
	if len(labels) > 0 {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		s := ""
		for i, k := range keys {
			if i > 0 {
				s += ","
			}
			s += k + "=" + labels[k]
		}
		return s
	}
	return r.Host["kernel"] + " " + r.Host["cpu_model"]
}

// WriteRuns writes the tables of several soak runs (Tables) into dir, one
// file per table holding every run's rows, each row beginning with its run
// and host (columns run, host). It returns the rows written per table.
func WriteRuns(runs []Run, dir, format string) (map[string]int64, error) {
	if !slices.Contains(Formats, format) {
		return nil, fmt.Errorf("unknown format %q: want csv or ndjson", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create export dir: %w", err)
	}
	for _, r := range runs {
		if k, err := r.DB.Kind(); err != nil {
			return nil, err
		} else if k == store.KindBench {
			return nil, fmt.Errorf("run %s is a bench: export several soak runs, or one bench", r.ID)
		}
	}
	// The summaries first: their columns are as many as the most values
	// a cell of any run has.
	sums := make([][]summaryRow, len(runs))
	cols := Columns["summary"]
	for i, r := range runs {
		var err error
		if sums[i], err = summaryRows(r.DB); err != nil {
			return nil, fmt.Errorf("run %s: %w", r.ID, err)
		}
		cols = summaryColumns(sums[i], cols)
	}
	counts := map[string]int64{}
	for _, table := range Tables {
		var rows int64
		err := rundir.WriteFile(filepath.Join(dir, File(table, format)), func(f io.Writer) error {
			bw := bufio.NewWriterSize(f, 256<<10)
			tcols := Columns[table]
			if table == "summary" {
				tcols = cols
			}
			w := &rowWriter{w: bw, cols: append([]string{"run", "host"}, tcols...), json: format != "csv"}
			if !w.json {
				w.header()
			}
			for i, r := range runs {
				run, err := r.DB.Run()
				if err != nil {
					return err
				}
				w.prefix = []string{r.ID, r.Host}
				if table == "summary" {
					err = fillSummary(w, sums[i])
				} else {
					err = fill(r.DB, table, w, run)
				}
				if err != nil {
					return fmt.Errorf("run %s: %w", r.ID, err)
				}
			}
			err := bw.Flush()
			rows = w.rows
			return err
		})
		if err != nil {
			return counts, fmt.Errorf("export %s: %w", table, err)
		}
		counts[table] = rows
	}
	return counts, nil
}
