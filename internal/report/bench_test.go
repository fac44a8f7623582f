package report

import (
	"context"
	"flag"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/report/synth"
	"github.com/wssoak/wssoak/internal/store"
)

var synthDB = flag.String("synth", "", "benchmark on this synthetic database (soak synth -o DIR) instead of writing one")

var (
	synthOnce sync.Once
	synthPath string
	synthErr  error
)

// daylong returns a synthetic 24-hour, five-library database with its table
// stored (a finished run), written once per test binary (about 30 s) unless
// -synth names one.
func daylong(b *testing.B) string {
	synthOnce.Do(func() {
		if *synthDB != "" {
			synthPath = *synthDB
			return
		}
		synthPath = filepath.Join(b.TempDir(), "soak.db")
		if synthErr = synth.Write(synthPath, synth.Config{Duration: 24 * time.Hour, Seed: 1}); synthErr != nil {
			return
		}
		db, err := store.Open(synthPath)
		if err != nil {
			synthErr = err
			return
		}
		// The table stored, as soak run does at the end.
		var t *measure.EndTable
		if t, synthErr = measure.Summarize(db); synthErr == nil {
			synthErr = db.SaveSummary(t.SummaryRows())
		}
		if err := db.Close(); synthErr == nil {
			synthErr = err
		}
	})
	if synthErr != nil {
		b.Fatal(synthErr)
	}
	return synthPath
}

// BenchmarkRender24h renders the report of a 24-hour, five-library run with
// per-second rows; the targets are ≤ 1 s (soak report, wall, on a quiet
// host) and ≤ 3 MB, which it checks.
func BenchmarkRender24h(b *testing.B) {
	path := daylong(b)
	db, err := store.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n countWriter
	b.ResetTimer()
	for b.Loop() {
		n = 0
		if err := Render(context.Background(), db, &n, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/1e6, "MB/report")
	if n > 3e6 {
		b.Errorf("report of the synthetic day is %.2f MB, over 3 MB", float64(n)/1e6)
	}
}

// BenchmarkSummarize24h is the table computed from a day of samples: what
// a report of a run that is still going (or crashed) costs on top.
func BenchmarkSummarize24h(b *testing.B) {
	db, err := store.OpenReadOnly(daylong(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		if _, err := measure.Summarize(db); err != nil {
			b.Fatal(err)
		}
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
