package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/wssoak/wssoak/internal/rundir"
)

// schemaResume: what a run records to the second so that a resume after its
// controller died continues every account, not only the totals.
//   - sub_gaps: per subscription, the ids lost so far over every process
//     of the worker, as ranges, rewritten whenever they change (the lost
//     table holds them charged, at the end only).
//   - slot_dials.interim: 1 for an account recorded during the run (a
//     resume continues its dials; its wire bytes are as of then, not the
//     slot's to the end), 0 for the one a worker sent when its connections
//     ended, whose wire bytes the wire check compares.
//   - samples.dropped_total: the events the worker dropped so far, when not
//     0 (NULL otherwise).
//   - workers.cpu_unreaped_s: of the sampled CPU, what processes whose rusage
//     is unknown used (the workers of a controller that died, never reaped):
//     the sampled CPU less it is what compares with the rusage.
const schemaResume = `
CREATE TABLE sub_gaps (
	lib             TEXT NOT NULL,
	slot            INTEGER NOT NULL,
	stream          TEXT NOT NULL,
	grp             TEXT NOT NULL,
	gaps_json       TEXT NOT NULL,    -- inclusive ranges, [[first, last], ...], at most 64 per worker process
	across_json     TEXT NOT NULL,    -- parallel to gaps_json: true for a range lost across a reconnect; [] when none was
	overflow        INTEGER NOT NULL, -- lost ids beyond the ranges
	overflow_across INTEGER NOT NULL, -- of them, lost across a reconnect
	PRIMARY KEY (lib, slot, stream)
) WITHOUT ROWID;

ALTER TABLE slot_dials ADD COLUMN interim INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN cpu_unreaped_s REAL NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN dropped_total INTEGER;
`

// resumeVersion is the first version with sub_gaps (by position).
var resumeVersion = slices.Index(migrations, schemaResume) + 1

// SubGaps is the ids one subscription lost so far, as ranges.
type SubGaps struct {
	Lib                      string
	Slot                     int
	Group, Stream            string
	Gaps                     [][2]int64
	Across                   []bool // parallel to Gaps; nil when no range was lost across a reconnect
	Overflow, OverflowAcross int64
}

// SubGapsAll returns every subscription's lost ranges as last recorded (none
// in a database before schemaResume).
func (s *DB) SubGapsAll() ([]SubGaps, error) {
	if s.readOnly && s.version < resumeVersion {
		return nil, nil
	}
	rows, err := s.db.Query(`SELECT lib, slot, grp, stream, gaps_json, across_json, overflow, overflow_across
		FROM sub_gaps ORDER BY lib, slot, stream`)
	if err != nil {
		return nil, fmt.Errorf("read sub gaps: %w", err)
	}
	return collect(rows, "read sub gaps", func(rows *sql.Rows) (SubGaps, error) {
		var (
			g              SubGaps
			gaps, acrossJS string
		)
		if err := rows.Scan(&g.Lib, &g.Slot, &g.Group, &g.Stream, &gaps, &acrossJS, &g.Overflow, &g.OverflowAcross); err != nil {
			return g, err
		}
		if err := json.Unmarshal([]byte(gaps), &g.Gaps); err != nil {
			return g, err
		}
		if err := json.Unmarshal([]byte(acrossJS), &g.Across); err != nil {
			return g, err
		}
		if len(g.Across) == 0 {
			g.Across = nil
		}
		return g, nil
	})
}

// writeResume stores the batch's dial accounts and lost ranges, replacing
// what was recorded of the same slot or subscription.
func writeResume(tx *sql.Tx, dials []SlotDials, gaps []SubGaps) error {
	for _, d := range dials {
		if err := upsertDials(tx, d); err != nil {
			return err
		}
	}
	for _, g := range gaps {
		ranges, _ := json.Marshal(g.Gaps)
		if g.Gaps == nil {
			ranges = []byte("[]")
		}
		across, _ := json.Marshal(g.Across)
		if g.Across == nil {
			across = []byte("[]")
		}
		if _, err := tx.Exec(`INSERT OR REPLACE INTO sub_gaps (lib, slot, grp, stream, gaps_json, across_json, overflow, overflow_across)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, g.Lib, g.Slot, g.Group, g.Stream, string(ranges), string(across), g.Overflow, g.OverflowAcross); err != nil {
			return fmt.Errorf("sub gaps %s/%d/%s: %w", g.Lib, g.Slot, g.Stream, err)
		}
	}
	return nil
}

// upsertDials records or replaces one slot's dial account.
func upsertDials(tx *sql.Tx, d SlotDials) error {
	st, _ := json.Marshal(d.Statuses)
	if d.Statuses == nil {
		st = []byte("{}")
	}
	if _, err := tx.Exec(`INSERT OR REPLACE INTO slot_dials (lib, slot, grp, dials, dial_fails, statuses_json, unrepairable, wire_bytes, interim)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.Lib, d.Slot, d.Group, d.Dials, d.DialFails, string(st), d.Unrepairable, d.WireBytes, d.Interim); err != nil {
		return fmt.Errorf("slot dials %s/%d: %w", d.Lib, d.Slot, err)
	}
	return nil
}

// StatusNoEnd is the status a reader shows for a run recorded as running
// that no process writes any more (ShownStatus).
const StatusNoEnd = "ended without its status"

// Owned says whether a process holds the run's directory: soak run, or
// soak run -resume, writing the run (this process included).
func (s *DB) Owned() bool { return rundir.Held(filepath.Dir(s.path)) }

// ShownStatus is the run's status as a reader should show it: the one
// recorded, except for a run recorded as running that no process owns
// (Owned): its controller died, or could not record its end (a full disk),
// and it is StatusNoEnd. Run keeps the recorded one (a resume needs it).
func (s *DB) ShownStatus(r Run) string {
	if r.Status == StatusRunning && !s.Owned() {
		return StatusNoEnd
	}
	return r.Status
}

// StatusRunning is the status of a run being written (and of one whose
// controller died before it could record another).
const StatusRunning = "running"
