package store

import (
	"database/sql"
	"fmt"
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
