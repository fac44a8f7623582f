package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/store"
)

// The report's reads of the database, all in this file. The report only
// reads: Render may run on a read-only connection while the run goes on.

// runData is what the report reads from a run's database.
type runData struct {
	run      store.Run
	workers  []store.Worker
	verdicts []store.Verdict // stored when the run finished; none while it goes on
	table    *measure.EndTable
	ranking  *ranking.Ranking // nil: nothing to rank
	baseline string           // the column the marks are against ("": the leader's ★)
	lastSec  int64
	chartSec int64 // the last second the charts draw: the window's, not the drain's after it
	events   []store.Event
	streams  []store.StreamSample // each subscription's latest totals
	clock    clockState
	series   seriesRows
	// lostAt reads a library's cumulative lost messages at whole seconds
	// (the fault table charges the losses between two of them to a fault).
	lostAt func(lib string, secs []int64) ([]int64, error)
}

// seriesRows are the rows the charts are drawn from: every second's
// samples, or for a long run the buckets SQLite folds them into (width
// seconds each, their minimum and maximum).
type seriesRows struct {
	width       int64 // 0: every second
	samples     []store.Sample
	host        []store.HostSample
	buckets     []store.Bucket
	hostBuckets []store.HostBucket
}

// load reads the run in db.
func load(db *store.DB) (*runData, error) {
	d := &runData{lostAt: db.LostAt}
	var err error
	if d.run, err = db.Run(); err != nil {
		return nil, err
	}
	d.run.Status = db.ShownStatus(d.run) // "running" only while a process writes it
	if d.workers, err = db.Workers(); err != nil {
		return nil, err
	}
	if d.lastSec, err = db.LastSec(); err != nil {
		return nil, err
	}
	if d.table, d.ranking, err = tableAndRanking(db, d.run, d.lastSec); err != nil {
		return nil, err
	}
	if d.verdicts, err = db.Verdicts(); err != nil {
		return nil, err
	}
	if d.events, err = db.Events(""); err != nil {
		return nil, err
	}
	if d.streams, err = db.LatestStreamSamples(); err != nil {
		return nil, err
	}
	d.chartSec = d.lastSec
	if planned := int64(d.run.Planned / time.Second); planned > 0 {
		d.chartSec = min(d.lastSec, planned)
	}
	if d.series, err = readSeries(db, d.chartSec); err != nil {
		return nil, err
	}
	c, err := db.ClockState(d.run)
	if err != nil {
		return nil, err
	}
	d.clock = clockState{c}
	return d, nil
}

// tableAndRanking are the reference table and the ranking: those stored
// when the run finished (what soak run printed), else computed now from
// the samples, in one pass (a run going on, or one that crashed; a
// finished run recorded before rankings were stored gets its ranking
// computed).
func tableAndRanking(db *store.DB, run store.Run, lastSec int64) (*measure.EndTable, *ranking.Ranking, error) {
	if run.Status != "running" {
		rows, err := db.Summary()
		if err != nil {
			return nil, nil, err
		}
		if len(rows) > 0 {
			t := measure.EndTableFromRows(run, rows)
			rr, err := db.Ranking()
			if err != nil {
				return nil, nil, err
			}
			window := lastSec
			if planned := int64(run.Planned.Seconds()); planned > 0 {
				window = min(window, planned)
			}
			if rk := ranking.FromRows(t.Libs, window, rr); rk != nil {
				return t, rk, nil
			}
			res, err := measure.Compute(db)
			if err != nil {
				return nil, nil, fmt.Errorf("rank: %w", err)
			}
			return t, ranking.Compute(res), nil
		}
	}
	res, err := measure.Compute(db)
	if err != nil {
		return nil, nil, fmt.Errorf("summarize: %w", err)
	}
	return res.EndTable(), ranking.Compute(res), nil
}

// bucketWidth is the width in seconds of the charts' buckets: 0 (every
// second) for a run of at most 2×maxBuckets seconds, else what cuts it into
// at most maxBuckets buckets.
func bucketWidth(lastSec int64) int64 {
	if lastSec > 2*maxBuckets {
		return (lastSec + maxBuckets - 1) / maxBuckets
	}
	return 0
}

// readSeries reads the charts' rows of a run whose window's last second
// is lastSec: the drain's seconds after it are no window seconds and are
// not drawn (a line would fall to 0 where nothing was sent any more).
func readSeries(db *store.DB, lastSec int64) (seriesRows, error) {
	s := seriesRows{width: bucketWidth(lastSec)}
	var err error
	if s.width == 0 {
		if s.samples, err = db.Samples(""); err != nil {
			return s, err
		}
		s.samples = slices.DeleteFunc(s.samples, func(x store.Sample) bool { return x.Drain })
		if s.host, err = db.HostSamples(); err != nil {
			return s, err
		}
		s.host = slices.DeleteFunc(s.host, func(h store.HostSample) bool { return h.Sec > lastSec })
		return s, nil
	}
	if s.buckets, err = db.SampleBuckets(s.width); err != nil {
		return s, err
	}
	s.hostBuckets, err = db.HostBuckets(s.width)
	return s, err
}
