// Package measure is the catalogue of what a run is measured by: one entry
// per measure with its id, title, unit, better direction, profile threshold
// key and Prometheus name, and how its value is computed from the run's
// database. Compute reads the database once, streaming, and gives every
// measure's value per column (a library today); the end table, the HTML
// report, the verdicts, compare, export and the live view render or look up
// those results by id.
//
// Adding a measure is one entry in Catalogue (catalogue.go), and, if the
// streaming pass does not collect what it needs yet, a field filled in
// compute.go.
//
// soak bench's measures are here too (bench.go): Bench for a client run,
// Chat for a server bench's load run, each computed from one stored run.
// Aggregate (agg.go) is the one summary of a bench's runs: a cell per Dims,
// the median, min and max of its counted runs, their values by round for
// Paired and Versus; the bench's tables, the bench page, export, compare and
// the Go benchmark lines render it. A new bench measure is one entry in
// Bench or Chat; a new dimension is a field of Dims.
package measure

import (
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/wire"
)

// Better says which way a measure improves; every measure names one.
type Better string

// Directions of Measure.Better.
const (
	Higher Better = "higher"
	Lower  Better = "lower"
	NoRank Better = "none" // not ranked: a count of what happened to a library (faults), or a cross-check
)

// RankKind is what a measure is to the ranking (internal/ranking).
type RankKind string

// The rank kinds; every measure of the catalogue has one.
const (
	// Ranked: the columns are compared by a paired statistic (Rank.Stat),
	// and the best earns a ★ only when it is called against every other
	// column by more than Rank.Floor.
	Ranked RankKind = "ranked"
	// Never ranked: a count every column must share (messages, bytes, lost
	// ids without faults), a structural value (goroutines), a description,
	// or one figure of one run with no spread to judge it by.
	Never RankKind = "never"
	// Check: an integrity check of the measurement, ✓ when its number is 0
	// (the check's block says which fails and why); never ranked.
	Check RankKind = "check"
)

// Statistic is how a ranked measure compares two columns.
type Statistic string

// The statistics of the ranking.
const (
	// BatchMeans: the window's seconds paired (only seconds where both
	// columns have a value), cut into batches; the mean of the batch means'
	// differences with its t-interval.
	BatchMeans Statistic = "batch_means"
	// SteadyLevel: BatchMeans over the window's second half; the level
	// shown is the median of that half.
	SteadyLevel Statistic = "steady_level"
	// Growth: the Theil–Sen slope of the paired batch means after the
	// first minute, with Sen's interval.
	Growth Statistic = "growth"
	// PerFault: the consequences of each injected fault paired (the same
	// fault hit every column), the mean of their differences with its
	// t-interval.
	PerFault Statistic = "per_fault"
)

// Dimension is what a ranked measure or a check tells about a library, for
// the summary.
type Dimension string

// The summary's dimensions, in its order.
const (
	DimCPU         Dimension = "CPU"
	DimMemory      Dimension = "Memory"
	DimLatency     Dimension = "Latency"
	DimResilience  Dimension = "Resilience"
	DimCorrectness Dimension = "Correctness"
)

// Dimensions are the summary's dimensions in order.
var Dimensions = []Dimension{DimCPU, DimMemory, DimLatency, DimResilience, DimCorrectness}

// RankRule is how a measure takes part in the ranking.
type RankRule struct {
	Kind RankKind
	// The rest is a Ranked measure's.
	Stat Statistic
	Of   SeriesID // what is compared
	// Floor is the least difference (in Unit) worth a call: a smaller one,
	// however certain, is "=". A catalogue value: the calibration of A/A
	// runs may raise it.
	Floor float64
	Dim   Dimension
	// Name says what is compared, honestly: "mean of per-second p99", not
	// "p99".
	Name string
	// About, when set, is a per-second series the two columns of a pair
	// share — the messages a second they received — that their batch
	// means are taken about (stats.BatchMeansAbout): a difference that
	// follows the traffic's swings, one column spending more per message
	// than the other, is then neither taken for noise nor refused as
	// autocorrelated. The difference and the levels are still Of's.
	About SeriesID
	// SpanFloor, for a Growth, is the least change a slope must add up to
	// over the span it was taken over (in Unit × hours: MB for MB/h) to be
	// worth a call, whatever Floor says: a slope over one minute is that
	// minute's change times 60, and identical columns' RSS moves by tenths
	// of a MB from one minute to the next (tens of MB/h; the calibration).
	// Over a long run Floor binds.
	SpanFloor float64
}

// Measure is one entry of the catalogue.
type Measure struct {
	ID    string // stable: stored in the summary table, used by compare and export
	Title string // the end table's row name
	// Short is the row's name where the table must fit a terminal (120
	// columns); "" when Title is short already.
	Short  string
	Unit   string // of Cell.Num
	Better Better
	Rank   RankRule
	// Side is the kind of soak the measure is a row of: SideClient (the
	// libraries reading market streams), SideServer (the libraries as chat
	// servers), or "" for both.
	Side string
	// Parts name the values of a cell that shows several ("165.6 k / 34.3
	// MB": the messages, then the bytes), in the title's order: each is a
	// number of the cell (Cell.Vals) for compare and export. Nil for a cell
	// of one value (Cell.Num).
	Parts []Part
	// Threshold is the profile key ("thresholds:") whose limit is checked
	// against this measure's number, in Unit; "" when none.
	Threshold string
	// Prom is the name of the live view's Prometheus series (internal/live)
	// for this measure, "" when it has none. The live series is the running
	// form of the measure (a total so far, or the latest second).
	Prom string
	// Hidden measures are not rows of the end table: thresholds and the live
	// view need them.
	Hidden bool
	// WhenMeasured rows are in the end table only of a run that measured
	// them for some column: findings of what not every run does (a
	// blackhole on a link).
	WhenMeasured bool
	// Retired marks a row of earlier end tables that a newer pair of rows
	// replaced: hidden, but a table stored with it still finds it by title.
	Retired bool
	// label, when set, is the row's title for a run (Title with what the
	// run adds, e.g. the connection groups).
	label func(r *runInfo) string
	// parts, when set, are the run's Parts (a value per connection group).
	parts func(r *runInfo) []Part
	// short, when set, are the cell's shorter texts (ShortForms), instead
	// of the rule every cell follows.
	short func(text string) []string
	// Value computes the measure for one column from what the streaming
	// pass collected; nil for a measure only the live view has.
	Value func(c *column) Cell
	// Run computes a client bench measure (Bench) for one client run.
	Run func(r BenchRun) float64
	// Chat computes a server bench measure (Chat) for one load run.
	Chat func(r *store.ChatResult) float64
	// Column names a bench measure's column in export, "" when the
	// stored counts it derives from are its columns.
	Column string
}

// Cell is a measure's value for one column: its text as the table shows it
// and the number behind it in the measure's unit (NaN when it was not
// measured: the text is then "-", and compare and thresholds skip it).
type Cell struct {
	Text string
	Num  float64
	// Vals are the cell's values, one per part of its row (Row.Parts), NaN
	// for one not measured; nil for a measure of one value, or a cell not
	// measured.
	Vals []float64
}

// Part is one of the values a cell shows: what it is and its unit.
type Part struct{ Name, Unit string }

// Dims are what a column of results is measured for: a soak fills Lib, a
// bench its side and the dimensions it varies. A new dimension is a field
// here (and its part of Row's name): the aggregation keys cells by the
// whole value and needs no change.
type Dims struct {
	Lib         string // the library (client or server)
	Scenario    string
	Path        string // the client bench's read path
	Encoding    string // "" when the bench had no encoding dimension (json)
	Compression string // wire.Compression's name
	Clients     int    // the server bench's room size N
	Strategy    string // the server bench's write strategy (plain, best); "" before servers had one
	Side        string // SideClient or SideServer
}

// NotMeasured is the text of a value that was not measured.
const NotMeasured = unit.NotMeasured

// ByID returns the measure with that id, or nil.
func ByID(id string) *Measure {
	for _, m := range Catalogue {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// ByThreshold returns the measure a profile threshold key limits, or nil.
func ByThreshold(key string) *Measure {
	for _, m := range Catalogue {
		if key != "" && m.Threshold == key {
			return m
		}
	}
	return nil
}

// ByTitle returns the table measure whose row is shown as name — its title,
// or its title followed by what the run adds in parentheses — or nil. It
// finds the measure of a row stored without an id (a database written
// before the ids).
func ByTitle(name string) *Measure {
	for _, m := range Catalogue {
		if (!m.Hidden || m.Retired) && (name == m.Title || m.label != nil && strings.HasPrefix(name, m.Title+" (")) {
			return m
		}
	}
	return nil
}

// Find returns the measure of a stored row: by id, else by its name.
func Find(id, name string) *Measure {
	if m := ByID(id); m != nil && id != "" {
		return m
	}
	return ByTitle(name)
}

// Table returns the measures of the end table, in row order.
func Table() []*Measure {
	return slices.DeleteFunc(slices.Clone(Catalogue), func(m *Measure) bool { return m.Hidden })
}

// TableOf returns the measures of a side's end table (SideClient or
// SideServer), in row order.
func TableOf(side string) []*Measure {
	return slices.DeleteFunc(Table(), func(m *Measure) bool { return !m.Of(side) })
}

// Of says whether the measure is one of a soak of that side.
func (m *Measure) Of(side string) bool { return m.Side == "" || m.Side == side }

// Rank is a library's column position: the known libraries in their order,
// any other after them.
func Rank(lib string) int {
	if i := slices.Index(wire.Libraries, lib); i >= 0 {
		return i
	}
	return len(wire.Libraries)
}
