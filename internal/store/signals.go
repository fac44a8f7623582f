package store

import (
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/wire"
)

// schemaSignals: what a worker computed and earlier versions dropped, and
// the fault kind in its own column.
//   - events.fault: the wire.FaultKind of a "fault" event (empty for the rest);
//     before it the kind was only the first word of the detail.
//   - workers: events the worker dropped when its channel was full, and the
//     whole-run latency's p99.9 and count of negative samples (clock skew).
//   - stream_samples: sequence regressions so far, and the ids lost across
//     a reconnect so far (the rest of lost_total was lost while connected).
//   - lost: the same split of each subscription's lost ids, each charged to
//     the library or the source; NULL in a row written before the split.
const schemaSignals = `
ALTER TABLE events ADD COLUMN fault TEXT NOT NULL DEFAULT '';
UPDATE events SET fault = rtrim(substr(detail, 1, instr(detail || ' ', ' ') - 1), ';') WHERE kind = 'fault';
ALTER TABLE workers ADD COLUMN dropped_events INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN lat_p999_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN lat_neg INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stream_samples ADD COLUMN regress_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stream_samples ADD COLUMN lost_across_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lost ADD COLUMN lost_across INTEGER;
ALTER TABLE lost ADD COLUMN lost_across_library INTEGER;
ALTER TABLE lost ADD COLUMN lost_across_source INTEGER;
`

// signalsVersion is the user_version from which a database has
// schemaSignals' columns (found by position, whatever steps precede it).
var signalsVersion = slices.Index(migrations, schemaSignals) + 1

// signals reports whether the database has schemaSignals' columns: every
// database this program writes does (it is migrated when opened); an older
// one opened read-only does not, and its rows read those fields as 0.
func (s *DB) signals() bool { return !s.readOnly || s.version >= signalsVersion }

// HasSignals reports whether the database records what schemaSignals added:
// a worker's dropped events, p99.9 and negative latencies, sequence
// regressions and the lost ids split by where they were lost. Readers show
// those as not measured when it does not.
func (s *DB) HasSignals() bool { return s.signals() }

// colSince is column in a database of version v or later (or one this
// program writes), else old (an SQL constant standing for "not recorded").
func (s *DB) colSince(v int, column, old string) string {
	if !s.readOnly || s.version >= v {
		return column
	}
	return old
}

// col is colSince for schemaSignals' columns.
func (s *DB) col(column, old string) string { return s.colSince(signalsVersion, column, old) }

// faultOf is the fault kind of event e as read: the events.fault column, or,
// in a database without it (before schemaSignals, opened read-only), the
// first word of a "fault" event's detail, which wire.Fault.String starts
// with. The migration fills the column the same way.
func (s *DB) faultOf(e *Event) wire.FaultKind {
	if s.signals() || e.Kind != wire.EventFault {
		return e.Fault
	}
	kind, _, _ := strings.Cut(e.Detail, " ")
	kind = strings.TrimSuffix(kind, ";")
	return wire.FaultKind(kind)
}

// streamSignalCols are stream_samples' regress_total and lost_across_total,
// or zeros for a database without them.
func (s *DB) streamSignalCols() string {
	return s.col("ss.regress_total", "0") + ", " + s.col("ss.lost_across_total", "0")
}
