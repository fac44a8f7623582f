package store

import "slices"

// schemaDrain: what a reader must not take for a window second, and what a
// server writes.
//   - samples.drain is 1 for a second after the planned window (the drain:
//     the workers read on for 2 s while nothing is sent any more), NULL for
//     the window's seconds and the warm-up's. Such rows are kept (the
//     workers' RSS and CPU in them are measured) but charts and exports
//     leave them out of the window. The rows stored before this step are
//     flagged by the same rule.
//   - samples.writes is a chat server's write syscalls in the second (a
//     side: server run's row; NULL in a client soak's).
//
// A second whose frame had no latency sample (no message carried an event
// time) stores NULL latency from this step on; before it such a second
// stored 0, which a reader takes for the same (a recorded latency is at
// least 1 µs).
const schemaDrain = `
ALTER TABLE samples ADD COLUMN drain INTEGER;
ALTER TABLE samples ADD COLUMN writes INTEGER;
UPDATE samples SET drain = ` + afterWindow + `;
`

// drainVersion is the first version with samples.drain (by position).
var drainVersion = slices.Index(migrations, schemaDrain) + 1

// drainCol is the drain flag as read: the column, or in a database before
// it the same rule on the run's planned window.
func (s *DB) drainCol() string {
	return s.colSince(drainVersion, "drain", afterWindow)
}

// afterWindow is 1 for a row's second after the run's planned window, NULL
// otherwise (a window of 0 is open-ended).
const afterWindow = `(CASE WHEN sec > (SELECT planned_s FROM runs) AND (SELECT planned_s FROM runs) > 0 THEN 1 END)`

// drainOf is the drain flag of second sec, for the insert: 1 after the
// run's planned window, NULL otherwise.
const drainOf = `(SELECT CASE WHEN planned_s > 0 AND ?28 > planned_s THEN 1 END FROM runs)`
