package store

import (
	"log/slog"
	"time"
)

// Retry retries the writes at the end of a run (the last batches, the run's
// status, the table, the verdicts, the final checkpoint) when they fail —
// disk full, file too large, I/O error — with backoff from RetryMin doubling
// to RetryMax. All the writes given to one Retry share one budget, counted
// from the first failure: a disk that stays full delays the end by about
// Budget in all, not per write; once it is spent, a failing write is tried
// once and its error returned. A Retry is used by one goroutine at a time.
type Retry struct {
	Budget time.Duration
	Log    *slog.Logger // nil: no log lines
	until  time.Time    // the budget's end, set at the first failure
}

// Backoff between retries, as the run's writer waits between its attempts.
const (
	RetryMin = 100 * time.Millisecond
	RetryMax = 2 * time.Second
)

// DefaultRetryBudget is how long the end of a run waits in all for writes to
// work again.
const DefaultRetryBudget = 5 * time.Second

// Do runs fn until it returns nil or the budget is spent, and returns its
// last error. what names the write in the log ("store the table").
func (r *Retry) Do(what string, fn func() error) error {
	backoff := RetryMin
	for {
		err := fn()
		if err == nil {
			return nil
		}
		now := time.Now()
		if r.until.IsZero() {
			r.until = now.Add(r.Budget)
		}
		left := r.until.Sub(now)
		if left <= 0 {
			return err
		}
		wait := min(backoff, left)
		if r.Log != nil {
			r.Log.Warn(what+" failed; retrying", "err", err, "retry_in", wait.Round(time.Millisecond),
				"gives_up_in", left.Round(time.Millisecond))
		}
		time.Sleep(wait)
		backoff = min(2*backoff, RetryMax)
	}
}
