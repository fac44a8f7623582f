package controller

import (
	"encoding/json"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// StateObserver is an Observer that is also told the run's record once it
// is made (resumed: read back), and each change of the run's state, the
// end's last (after the last batch was observed). Its methods must be quick.
type StateObserver interface {
	RunRecorded(r store.Run)
	RunState(s wire.RunState)
}

// Record records the run (store.DB.CreateRun), with the profile's labels
// in its settings ("labels", JSON), and tells the observer: the run is
// warming up.
func (l *Lifecycle) Record(r store.Run) error {
	if p := l.o.Profile; p != nil && len(p.Labels) > 0 {
		if r.Settings == nil {
			r.Settings = map[string]string{}
		}
		b, _ := json.Marshal(p.Labels)
		r.Settings["labels"] = string(b)
	}
	if err := l.db.CreateRun(r); err != nil {
		return err
	}
	l.recorded(r)
	return nil
}

// recorded tells the observer of the run's record and that it warms up
// (a resumed run within its window: that it runs).
func (l *Lifecycle) recorded(r store.Run) {
	if so, ok := l.o.Observer.(StateObserver); ok {
		so.RunRecorded(r)
	}
	st := wire.StateWarmup
	if !r.Started.IsZero() && !l.o.Now().Before(r.Started) {
		st = wire.StateRunning
	}
	l.SetState(st)
}

// SetState tells the observer the run's state.
func (l *Lifecycle) SetState(s wire.RunState) {
	if so, ok := l.o.Observer.(StateObserver); ok {
		so.RunState(s)
	}
}

// startTimer fires when the window starts (nil when it has started).
func (l *Lifecycle) startTimer() <-chan time.Time {
	if d := time.Until(l.epoch); d > 0 {
		return time.After(d)
	}
	return nil
}
