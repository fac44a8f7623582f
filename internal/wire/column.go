package wire

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Column is one column of a run: a library, or a variant of one (the library
// under settings of its own, a profile's variants:), run by a worker process
// of its own. Everything that tells the columns apart goes by Name: the plan
// a worker gets, the connection tag, the store's lib, the worker's log file,
// the Prometheus label, the thresholds' verdicts and the export. A plain
// library's column is named as the library and has no settings.
type Column struct {
	Name     string   `json:"name"`
	Lib      string   `json:"lib"` // one of Libraries: the transport the worker runs
	Settings Settings `json:"settings,omitzero"`
}

// Settings are what a variant sets for its column, laid over the run's
// (Plan.For): the zero value is the run's settings unchanged.
type Settings struct {
	// ReadBufferSize is the library's read buffer in bytes (gorilla and
	// fasthttp Dialer.ReadBufferSize, gws ReadBufferSize, gobwas the size of
	// the adapter's bufio.Reader); 0: the adapter's 64 KiB. coder has none.
	ReadBufferSize int `json:"read_buffer_size,omitempty"`
	// Runtime's non-zero fields replace the run's worker runtime.
	Runtime Runtime `json:"runtime,omitzero"`
	// Compression, when set, replaces the run's permessage-deflate.
	Compression *Compression `json:"compression,omitempty"`
	// Encoding, when set, replaces the run's events' encoding.
	Encoding string `json:"encoding,omitempty"`
	// CalibrationCost is CPU time the worker burns on every message, in
	// its handler, by a calibrated busy loop: a known cost per message, to
	// check that the tool sees a difference it was given.
	CalibrationCost time.Duration `json:"calibration_cost,omitempty"`
}

// IsZero reports whether s changes nothing.
func (s Settings) IsZero() bool { return s == Settings{} }

// String lists the settings a variant sets, as "key=value" in profile key
// names ("gogc=25 calibration_cost=5µs"); "" for none.
func (s Settings) String() string {
	var out []string
	if s.ReadBufferSize > 0 {
		out = append(out, fmt.Sprintf("read_buffer_size=%d", s.ReadBufferSize))
	}
	if r := s.Runtime; r.GOMAXPROCS > 0 {
		out = append(out, fmt.Sprintf("gomaxprocs=%d", r.GOMAXPROCS))
	}
	if r := s.Runtime; r.GOGC != 0 {
		out = append(out, fmt.Sprintf("gogc=%d", r.GOGC))
	}
	if r := s.Runtime; r.GOMEMLIMIT > 0 {
		out = append(out, fmt.Sprintf("gomemlimit=%d", r.GOMEMLIMIT))
	}
	if s.Compression != nil {
		out = append(out, "compression="+s.Compression.String())
	}
	if s.Encoding != "" {
		out = append(out, "encoding="+s.Encoding)
	}
	if s.CalibrationCost > 0 {
		out = append(out, "calibration_cost="+s.CalibrationCost.String())
	}
	return strings.Join(out, " ")
}

// LibraryColumn is the column of a plain library.
func LibraryColumn(lib string) Column { return Column{Name: lib, Lib: lib} }

// Names returns the columns' names, in order.
func Names(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// MaxColumnName is the longest column name.
const MaxColumnName = 40

// CheckColumnName reports whether name may name a column. The name goes
// everywhere a column is named, so it takes only what each of them takes
// as it is: lowercase ASCII letters and digits, '-' and '_', starting with a
// letter, at most MaxColumnName bytes. That keeps it one part of a
// connection tag ("name/slot/attempt": no '/'), a file name
// ("worker-<name>.log": no '/', no dot-dot), a list item of -libs (no ','),
// a YAML key and a dotted key path (no ':' or '.'), a CSV cell and a
// Prometheus label value that need no quoting or escaping, and unlike any
// other column name in a case-insensitive file system.
func CheckColumnName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty column name")
	case len(name) > MaxColumnName:
		return fmt.Errorf("column name %q is longer than %d bytes", name, MaxColumnName)
	case name[0] < 'a' || name[0] > 'z':
		return fmt.Errorf("column name %q: want a lowercase letter first", name)
	}
	for i := range len(name) {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("column name %q: want lowercase letters, digits, '-' and '_' only", name)
		}
	}
	return nil
}

// Check reports whether c is a column a worker can run: a valid name, a
// known library, settings in range.
func (c Column) Check() error {
	if err := CheckColumnName(c.Name); err != nil {
		return err
	}
	if !slices.Contains(Libraries, c.Lib) {
		return fmt.Errorf("column %s: unknown library %q (known: %s)", c.Name, c.Lib, strings.Join(Libraries, ", "))
	}
	s := c.Settings
	switch {
	case s.ReadBufferSize < 0:
		return fmt.Errorf("column %s: negative read buffer size", c.Name)
	case s.ReadBufferSize > 0 && !HasReadBuffer(c.Lib):
		return fmt.Errorf("column %s: %s has no read buffer size to set", c.Name, c.Lib)
	case s.CalibrationCost < 0:
		return fmt.Errorf("column %s: negative calibration cost", c.Name)
	}
	return nil
}

// HasReadBuffer reports whether lib's reader has a size a column may set:
// coder reads through a fixed 4 KiB reader of its own.
func HasReadBuffer(lib string) bool { return lib != "coder" && slices.Contains(Libraries, lib) }

// Over returns r with v's non-zero fields in place of r's.
func (r Runtime) Over(v Runtime) Runtime {
	if v.GOMAXPROCS != 0 {
		r.GOMAXPROCS = v.GOMAXPROCS
	}
	if v.GOGC != 0 {
		r.GOGC = v.GOGC
	}
	if v.GOMEMLIMIT != 0 {
		r.GOMEMLIMIT = v.GOMEMLIMIT
	}
	return r
}

// Env is r as the environment of a process: GOMAXPROCS, GOGC and GOMEMLIMIT
// for its non-zero fields. A worker started with it runs under them from its
// first instruction, before Apply.
func (r Runtime) Env() []string {
	var out []string
	if r.GOMAXPROCS > 0 {
		out = append(out, fmt.Sprintf("GOMAXPROCS=%d", r.GOMAXPROCS))
	}
	switch {
	case r.GOGC < 0:
		out = append(out, "GOGC=off")
	case r.GOGC > 0:
		out = append(out, fmt.Sprintf("GOGC=%d", r.GOGC))
	}
	if r.GOMEMLIMIT > 0 {
		out = append(out, fmt.Sprintf("GOMEMLIMIT=%d", r.GOMEMLIMIT))
	}
	return out
}

// For returns the plan a column's worker gets: p with the column named and
// its settings laid over the run's runtime, compression and encoding.
func (p *Plan) For(c Column) *Plan {
	q := *p
	q.Column = c
	q.Columns = nil // the worker runs one
	q.Runtime = p.Runtime.Over(c.Settings.Runtime)
	if c.Settings.Compression != nil {
		q.Compression = *c.Settings.Compression
	}
	if c.Settings.Encoding != "" {
		q.Encoding = c.Settings.Encoding
	}
	return &q
}

// WidestCompression is the compression a server must allow for every one of
// cols to get what it asks for, run is the run's own: on allows a client
// that asks for no_context_takeover too, so any on makes it on.
func WidestCompression(run Compression, cols []Column) Compression {
	w := run
	for _, c := range cols {
		if c.Settings.Compression == nil {
			continue
		}
		switch x := *c.Settings.Compression; {
		case x == CompressionOn:
			w = CompressionOn
		case x == CompressionNoContextTakeover && w == CompressionOff:
			w = CompressionNoContextTakeover
		}
	}
	return w
}

// StoredColumns returns the columns of a plan stored as JSON (a run's "plan"
// setting): nil for a plan stored before plans listed them, or for none.
func StoredColumns(planJSON string) []Column {
	var p struct {
		Columns []Column `json:"columns"`
	}
	if json.Unmarshal([]byte(planJSON), &p) != nil {
		return nil
	}
	return p.Columns
}
