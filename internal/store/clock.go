package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// schemaClock: the kernel's view of the local clock's synchronisation
// (adjtimex(2), read only), taken when the window starts and then once a
// minute. Latency against a live target is receive time (this clock) minus
// the server's event time (the server's clock), so it is only as good as
// this clock's sync.
const schemaClock = `
CREATE TABLE clock_samples (
	sec         INTEGER PRIMARY KEY, -- run second of the reading
	ts_ns       INTEGER NOT NULL,
	synced      INTEGER NOT NULL,    -- 1: state not TIME_ERROR and STA_UNSYNC clear
	state       INTEGER NOT NULL,    -- adjtimex's result: 0 TIME_OK … 5 TIME_ERROR
	status      INTEGER NOT NULL,    -- timex.status bits (STA_UNSYNC = 0x40)
	esterror_us INTEGER NOT NULL,    -- the kernel's estimated error, µs
	maxerror_us INTEGER NOT NULL     -- the kernel's maximum error, µs
);
`

// ClockSample is one reading of the kernel's clock synchronisation state.
type ClockSample struct {
	Sec                    int64
	TS                     time.Time
	Synced                 bool
	State, Status          int
	EstErrorUs, MaxErrorUs int64
}

func writeClock(tx *sql.Tx, cs []ClockSample) error {
	for _, c := range cs {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO clock_samples (sec, ts_ns, synced, state, status, esterror_us, maxerror_us)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, c.Sec, c.TS.UnixNano(), c.Synced, c.State, c.Status, c.EstErrorUs, c.MaxErrorUs); err != nil {
			return fmt.Errorf("clock sample %d: %w", c.Sec, err)
		}
	}
	return nil
}

// ClockSamples returns the clock readings ordered by sec.
func (s *DB) ClockSamples() ([]ClockSample, error) {
	if s.readOnly && s.version < clockVersion {
		return nil, nil // recorded by a soak that did not read the clock
	}
	rows, err := s.db.Query(`SELECT sec, ts_ns, synced, state, status, esterror_us, maxerror_us
		FROM clock_samples ORDER BY sec`)
	if err != nil {
		return nil, fmt.Errorf("read clock samples: %w", err)
	}
	return collect(rows, "read clock samples", func(rows *sql.Rows) (ClockSample, error) {
		var (
			c  ClockSample
			ts int64
		)
		err := rows.Scan(&c.Sec, &ts, &c.Synced, &c.State, &c.Status, &c.EstErrorUs, &c.MaxErrorUs)
		c.TS = time.Unix(0, ts)
		return c, err
	})
}

// ClockState is what a run recorded of the local clock's synchronisation
// (the kernel's adjtimex state): the reading at the start (the run's host
// info) and those taken once a minute inside the window (clock_samples).
// Latency is receive time (this clock) − the event time E (the server's
// clock): against a live target it is only as good as this clock's sync;
// against the local replay server both are this machine's clock.
type ClockState struct {
	Local    bool  // the target is the local replay server
	Readings int   // readings at the start and inside the window
	Unsynced int   // of them, not synchronised
	EstUs    int64 // the largest estimated error of the synchronised readings, µs
	MaxUs    int64 // the largest maximum error of the synchronised readings, µs
	WorstUs  int64 // the largest maximum error of all readings, µs
}

// ClockState reads the run's clock readings: the start's from the host
// info, the others from clock_samples up to the window's end.
func (s *DB) ClockState(run Run) (ClockState, error) {
	c := ClockState{Local: planLocal(run.Settings["plan"])}
	if v, ok := run.Host["clock_synced"]; ok {
		est, _ := strconv.ParseInt(run.Host["clock_esterror_us"], 10, 64)
		maxe, _ := strconv.ParseInt(run.Host["clock_maxerror_us"], 10, 64)
		c.add(v == "true", est, maxe)
	}
	samples, err := s.ClockSamples()
	if err != nil {
		return c, err
	}
	last := int64(run.Planned.Seconds())
	for _, x := range samples {
		if last > 0 && x.Sec > last {
			continue // the drain, after the window
		}
		c.add(x.Synced, x.EstErrorUs, x.MaxErrorUs)
	}
	return c, nil
}

func (c *ClockState) add(synced bool, est, maxe int64) {
	c.Readings++
	c.WorstUs = max(c.WorstUs, maxe)
	if !synced {
		c.Unsynced++
		return
	}
	c.EstUs, c.MaxUs = max(c.EstUs, est), max(c.MaxUs, maxe)
}

// planLocal reports whether the run's plan targets the local replay server.
func planLocal(planJSON string) bool {
	var p struct {
		Local bool `json:"local"`
	}
	return json.Unmarshal([]byte(planJSON), &p) == nil && p.Local
}

// LatencySuspect: latency was measured across two clocks and this one was
// not synchronised at some reading, so it can be off by any amount.
func (c ClockState) LatencySuspect() bool { return !c.Local && c.Unsynced > 0 }
