// Package report renders a run's database: the HTML report (Render,
// WriteFile, Refresh; a bench's database as the bench page) and the end
// table as text (WriteText).
//
// It only reads the database, so it may run on a read-only connection
// while the run goes on, and it computes no measure: the end table is the
// catalogue's (internal/measure), the one stored when the run finished or
// else computed now. What the page derives on its own is what it shows
// beside that table. The files keep those jobs apart: query.go reads the
// database; series.go (the charts' series), best.go (best marks and
// deltas), events.go (markers and the event log), streams.go and faults.go
// (their tables) derive the page's rows from what was read; page.go
// assembles the view model, and html.go and chart.go render it.
package report
