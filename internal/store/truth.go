package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
)

// schemaTruth: what each library lost per subscription, charged by comparing
// the libraries, and each connection slot's dial account.
const schemaTruth = `
CREATE TABLE lost (
	lib          TEXT NOT NULL,
	slot         INTEGER NOT NULL,
	grp          TEXT NOT NULL,
	stream       TEXT NOT NULL,
	lost         INTEGER NOT NULL, -- ids counted lost by the sequence rules (unit per stream type)
	lost_library INTEGER NOT NULL, -- of them, ids some other library received: charged to this library
	lost_source  INTEGER NOT NULL, -- of them, ids every library lost: charged to the source
	gap_overflow INTEGER NOT NULL, -- lost ids beyond the recorded ranges (charged to the library)
	gaps_json    TEXT NOT NULL,    -- the lost ids as inclusive ranges, [[first, last], ...], at most 64
	PRIMARY KEY (lib, slot, stream)
) WITHOUT ROWID;

CREATE TABLE slot_dials (
	lib           TEXT NOT NULL,
	slot          INTEGER NOT NULL,
	grp           TEXT NOT NULL,
	dials         INTEGER NOT NULL, -- dial attempts, the first included
	dial_fails    INTEGER NOT NULL,
	statuses_json TEXT NOT NULL,    -- handshake status → failed dials, e.g. {"429": 2}
	unrepairable  INTEGER NOT NULL, -- 1 when the profile's unrepairable rule fired
	PRIMARY KEY (lib, slot)
) WITHOUT ROWID;
`

// LostCharge is one library's lost ids on one subscription and who they are charged to.
type LostCharge struct {
	Lib           string
	Slot          int
	Group, Stream string
	Lost          int64
	Library       int64 // charged to the library: another library received them
	Source        int64 // charged to the source: every library lost them
	Overflow      int64
	Gaps          [][2]int64
	// Split says the fields below are known: the lost ids split by where
	// they were lost (false for a row recorded before schemaSignals).
	// Across: found at a subscription's first message after a reconnect,
	// the price of the outage. Connected: the rest, lost while a connection
	// was up (a library or harness fault: 0 without faults). Each is
	// charged to the library or the source like Lost (Library, Source).
	Split                                            bool
	LostAcross, LibraryAcross, SourceAcross          int64
	LostConnected, LibraryConnected, SourceConnected int64
}

// SetConnected fills the Connected fields as what of Lost, Library and
// Source is not Across, and marks the split known.
func (l *LostCharge) SetConnected() {
	l.Split = true
	l.LostConnected, l.LibraryConnected, l.SourceConnected = l.Lost-l.LostAcross, l.Library-l.LibraryAcross, l.Source-l.SourceAcross
}

// SlotDials is one slot's dial account.
type SlotDials struct {
	Lib              string
	Slot             int
	Group            string
	Dials, DialFails int64
	Statuses         map[string]int64
	Unrepairable     bool
	WireBytes        int64 // frame bytes read on the slot's connections (0 before schemaWire)
	// Interim marks an account recorded during the run (the last of a
	// worker that died at the end, or whose controller did): its WireBytes
	// are as of then, not compared with the server's. The account a worker
	// sent when its connections ended is not interim.
	Interim bool
}

// SaveTruth replaces the lost charges, and records the slot dial accounts
// given, replacing those of the same slots (those recorded during the run
// of a slot not given stay).
func (s *DB) SaveTruth(lost []LostCharge, dials []SlotDials) error {
	return s.tx("save lost charges", func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DELETE FROM lost`); err != nil {
			return err
		}
		for _, l := range lost {
			gaps, _ := json.Marshal(l.Gaps)
			if l.Gaps == nil {
				gaps = []byte("[]")
			}
			across := []any{nil, nil, nil}
			if l.Split {
				across = []any{l.LostAcross, l.LibraryAcross, l.SourceAcross}
			}
			if _, err := tx.Exec(`INSERT INTO lost (lib, slot, grp, stream, lost, lost_library, lost_source, gap_overflow, gaps_json,
					lost_across, lost_across_library, lost_across_source)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, l.Lib, l.Slot, l.Group, l.Stream, l.Lost, l.Library, l.Source, l.Overflow, string(gaps),
				across[0], across[1], across[2]); err != nil {
				return fmt.Errorf("%s/%d/%s: %w", l.Lib, l.Slot, l.Stream, err)
			}
		}
		for _, d := range dials {
			if err := upsertDials(tx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

// LostCharges returns the stored charges by library, slot and stream.
func (s *DB) LostCharges() ([]LostCharge, error) {
	rows, err := s.db.Query(`SELECT lib, slot, grp, stream, lost, lost_library, lost_source, gap_overflow, gaps_json, ` +
		s.col("lost_across", "NULL") + `, ` + s.col("lost_across_library", "NULL") + `, ` + s.col("lost_across_source", "NULL") + `
		FROM lost ORDER BY lib, slot, stream`)
	if err != nil {
		return nil, fmt.Errorf("read lost: %w", err)
	}
	return collect(rows, "read lost", func(rows *sql.Rows) (LostCharge, error) {
		var (
			l                            LostCharge
			gaps                         string
			across, acrossLib, acrossSrc sql.NullInt64
		)
		if err := rows.Scan(&l.Lib, &l.Slot, &l.Group, &l.Stream, &l.Lost, &l.Library, &l.Source, &l.Overflow, &gaps,
			&across, &acrossLib, &acrossSrc); err != nil {
			return l, err
		}
		if across.Valid {
			l.LostAcross, l.LibraryAcross, l.SourceAcross = across.Int64, acrossLib.Int64, acrossSrc.Int64
			l.SetConnected()
		}
		return l, json.Unmarshal([]byte(gaps), &l.Gaps)
	})
}

// SlotDialAccounts returns the stored dial accounts by library and slot.
func (s *DB) SlotDialAccounts() ([]SlotDials, error) {
	rows, err := s.db.Query(`SELECT lib, slot, grp, dials, dial_fails, statuses_json, unrepairable, ` +
		s.colSince(wireVersion, "wire_bytes", "0") + `, ` + s.colSince(resumeVersion, "interim", "0") + ` FROM slot_dials ORDER BY lib, slot`)
	if err != nil {
		return nil, fmt.Errorf("read slot dials: %w", err)
	}
	return collect(rows, "read slot dials", func(rows *sql.Rows) (SlotDials, error) {
		var d SlotDials
		var st string
		if err := rows.Scan(&d.Lib, &d.Slot, &d.Group, &d.Dials, &d.DialFails, &st, &d.Unrepairable, &d.WireBytes, &d.Interim); err != nil {
			return d, err
		}
		return d, json.Unmarshal([]byte(st), &d.Statuses)
	})
}
