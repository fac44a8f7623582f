// Package compare puts the end tables of two runs side by side, per library,
// with the difference of the number behind each cell, and tests the ranked
// measures of two runs (or of two sets of runs) with the ranking's
// statistics: per column, B against A by Mann–Whitney.
package compare

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/terminal"
	"github.com/wssoak/wssoak/internal/unit"
)

// Side is one run of a comparison: its record and its end table (the one
// stored, else computed), the table computed now (whose cells hold each of
// their values: measure.EndRow.Vals), and its ranked measures: each
// column's level and the samples within the run (ranking.Samples).
type Side struct {
	Path     string // what the user named
	Run      store.Run
	Rows     []store.SummaryRow
	Computed *measure.EndTable
	Ranking  *ranking.Ranking
	Samples  map[string][][]float64
}

// Load reads a run's record and stored end table; a run without one (still
// going, or crashed) has its table computed from the samples.
func Load(db *store.DB, path string) (Side, error) {
	run, err := db.Run()
	if err != nil {
		return Side{}, err
	}
	rows, err := db.Summary()
	if err != nil {
		return Side{}, err
	}
	res, err := measure.Compute(db)
	if err != nil {
		return Side{}, fmt.Errorf("summarize %s: %w", path, err)
	}
	t := res.EndTable()
	if len(rows) == 0 {
		rows = t.SummaryRows()
	}
	return Side{Path: path, Run: run, Rows: rows, Computed: t, Ranking: ranking.Compute(res), Samples: ranking.Samples(res)}, nil
}

// cell is a side's cell: its text, its number, and each of its values
// with their parts when the cell shows several (nil: one).
type cell struct {
	id    string
	value string
	num   float64
	vals  []float64
	parts []measure.Part
}

// key is what matches a row of A with a row of B: its measure's id (a row
// stored without one is matched to its measure by name), else its name.
func key(r store.SummaryRow) string {
	if m := measure.Find(r.ID, r.Metric); m != nil {
		return m.ID
	}
	return "\x00" + r.Metric // no measure of the catalogue: its name, apart from any id
}

// unitOf is the unit of the number behind a row's cells, "" when unknown.
func unitOf(k string) string {
	if m := measure.ByID(k); m != nil {
		return m.Unit
	}
	return ""
}

// index is a side's table by library, then row key, the key and library
// orders, and each key's row name. A stored cell takes its values from the
// table computed now when that shows the same text (it was computed from
// the same rows).
func index(s Side) (map[string]map[string]cell, []string, []string, map[string]string) {
	m := map[string]map[string]cell{}
	names := map[string]string{}
	var keys, libs []string
	for _, r := range s.Rows {
		if m[r.Lib] == nil {
			m[r.Lib] = map[string]cell{}
			libs = append(libs, r.Lib)
		}
		k := key(r)
		c := cell{id: strings.TrimPrefix(k, "\x00"), value: r.Value, num: r.Num}
		c.vals, c.parts = s.Computed.ValuesOf(k, r.Lib, r.Value)
		m[r.Lib][k] = c
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
			names[k] = r.Metric
		}
	}
	return m, keys, libs, names
}

// Options say how Write prints.
type Options struct {
	// Wide prints the rows' full names and cells however wide the lines
	// grow; else they fit 120 columns (short names, a cell too wide in its
	// short form).
	Wide bool
}

// Write prints the comparison: a header naming both runs, a warning for
// each way they differ that makes their differences say less (the same
// run twice; profiles, windows, hosts or Go versions that differ), then
// per column (the libraries in their usual order, then the others) every
// measure of either table (matched by id; a row is named as A names it)
// with A's cell, B's cell, B − A and (B − A) / |A| in % — each value of a
// cell that shows several — and, for a ranked measure, whether the two
// runs differ on it (Mann–Whitney on the batch means within them: = when
// not, else p); then the ranked measures' test in full (WriteRanked).
func Write(w io.Writer, a, b Side, o Options) {
	am, ametrics, alibs, names := index(a)
	bm, bmetrics, blibs, bnames := index(b)
	for _, m := range bmetrics {
		if !slices.Contains(ametrics, m) {
			ametrics = append(ametrics, m)
			names[m] = bnames[m]
		}
	}
	libs := slices.Clone(alibs)
	for _, l := range blibs {
		if !slices.Contains(libs, l) {
			libs = append(libs, l)
		}
	}
	slices.SortStableFunc(libs, func(x, y string) int { return cmp.Compare(measure.Rank(x), measure.Rank(y)) })
	WriteHeader(w, []Side{a}, []Side{b})
	for _, warn := range Warnings(a, b) {
		terminal.Println(w, "warning: "+warn)
	}
	fmt.Fprintln(w)

	type line struct{ id, name, a, b, d, pct, test string }
	var blocks [][]line
	for _, lib := range libs {
		block := []line{{name: lib, a: "A", b: "B", d: "B − A", pct: "Δ %", test: "test"}}
		for _, m := range ametrics {
			ac, aok := am[lib][m]
			bc, bok := bm[lib][m]
			if !aok && !bok {
				continue
			}
			l := line{id: strings.TrimPrefix(m, "\x00"), name: names[m], a: "-", b: "-", d: "-", pct: "-"}
			if !o.Wide {
				l.name = measure.ShortTitle(strings.TrimPrefix(m, "\x00"), names[m])
			}
			if aok {
				l.a = ac.value
			}
			if bok {
				l.b = bc.value
			}
			if aok && bok {
				l.d, l.pct = differences(ac, bc, unitOf(m))
			}
			if mm := measure.ByID(m); mm != nil && mm.Rank.Kind == measure.Ranked {
				l.test = test([]Side{a}, []Side{b}, mm, lib)
			}
			block = append(block, l)
		}
		blocks = append(blocks, block)
	}
	if !o.Wide {
		// A and B share what the other columns leave of the width.
		var nameW, dW, pW, tW int
		for _, bl := range blocks {
			for _, l := range bl {
				nameW, dW = max(nameW, terminal.Columns(l.name)), max(dW, terminal.Columns(l.d))
				pW, tW = max(pW, terminal.Columns(l.pct)), max(tW, terminal.Columns(l.test))
			}
		}
		cellW := max((terminal.Width-nameW-dW-pW-tW-5*2)/2, minCell)
		for _, bl := range blocks {
			for i := range bl[1:] {
				l := &bl[i+1]
				l.a, l.b = fit(l.id, l.a, cellW), fit(l.id, l.b, cellW)
			}
		}
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	for i, bl := range blocks {
		if i > 0 {
			fmt.Fprint(tw, "\t\t\t\t\t\n") // a blank line that keeps the columns aligned across libraries
		}
		for _, l := range bl {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.name, l.a, l.b, l.d, l.pct, l.test)
		}
	}
	tw.Flush()
	terminal.Trimmed(w, table.String())
	WriteRanked(w, []Side{a}, []Side{b})
}

// minCell is the narrowest A's and B's cells get.
const minCell = 8

// fit is a cell of measure id within n columns: as it is, else its first
// short form that fits (measure.ShortForms), else the last one cut.
func fit(id, text string, n int) string {
	if terminal.Columns(text) <= n {
		return text
	}
	forms := measure.ShortForms(id, text)
	for _, f := range forms {
		if terminal.Columns(f) <= n {
			return f
		}
	}
	return terminal.Cut(forms[len(forms)-1], n)
}

// differences are B − A and (B − A) / |A| in %: of each value when both
// cells show their values (a unit said once when they share it), else of
// the number behind each; "-" where either was not measured ("-" is a
// cell without a number, whatever number was stored) or A is 0.
func differences(a, b cell, u string) (string, string) {
	if a.value == measure.NotMeasured || b.value == measure.NotMeasured {
		return "-", "-"
	}
	if len(a.vals) > 1 && len(a.vals) == len(b.vals) && len(a.parts) == len(a.vals) {
		ds, ps := make([]string, len(a.vals)), make([]string, len(a.vals))
		units := map[string]bool{}
		for i := range a.vals {
			units[a.parts[i].Unit] = true
		}
		// A unit the values share is said once, after the last, when
		// every one of them has a difference.
		shared := len(units) == 1 && !slices.ContainsFunc(a.vals, math.IsNaN) && !slices.ContainsFunc(b.vals, math.IsNaN)
		for i, p := range a.parts {
			ds[i], ps[i] = "-", "-"
			x, y := a.vals[i], b.vals[i]
			if math.IsNaN(x) || math.IsNaN(y) {
				continue
			}
			ds[i] = delta(y-x, p.Unit)
			if shared {
				ds[i] = deltaNumber(y-x, p.Unit)
			}
			if x != 0 {
				ps[i] = fmt.Sprintf("%+.1f %%", 100*(y-x)/math.Abs(x))
			}
		}
		d := strings.Join(ds, " / ")
		if shared {
			d += " " + deltaUnit(a.parts[0].Unit)
		}
		pct := strings.Join(ps, " / ")
		if !slices.ContainsFunc(ps, func(s string) bool { return s != "-" }) {
			pct = "-"
		} else if !slices.Contains(ps, "-") {
			pct = strings.ReplaceAll(pct, " % / ", " / ") // one % after the last
		}
		return d, pct
	}
	if math.IsNaN(a.num) || math.IsNaN(b.num) {
		return "-", "-"
	}
	pct := "-"
	if a.num != 0 {
		pct = fmt.Sprintf("%+.1f %%", 100*(b.num-a.num)/math.Abs(a.num))
	}
	return delta(b.num-a.num, u), pct
}

// test is the ranked measure m of column lib, B against A, as a cell:
// "=" when Mann–Whitney does not call them different, else its p; "" when
// a side has no values of it.
func test(as, bs []Side, m *measure.Measure, lib string) string {
	xa, xb := values(as, m, lib, false), values(bs, m, lib, false)
	if len(xa) == 0 || len(xb) == 0 {
		return ""
	}
	if sig, p := measure.Significant(xa, xb); sig {
		return fmt.Sprintf("p %.3f", p)
	}
	return "="
}

// Warnings are what makes the differences of a and b say less than they
// seem to: the same run twice, or runs whose profiles, windows, hosts or
// Go versions differ.
func Warnings(a, b Side) []string { return warnings(a, b, "A", "B") }

// warnings are Warnings with the runs named an and bn.
func warnings(a, b Side, an, bn string) []string {
	var out []string
	ra, rb := a.Run, b.Run
	if ra.ID == rb.ID && ra.Started.Equal(rb.Started) {
		return []string{fmt.Sprintf("%s and %s are the same run (%s): every difference is 0 and says nothing", an, bn, ra.ID)}
	}
	both := func(x, y string) string { return fmt.Sprintf("%s %s, %s %s", an, x, bn, y) }
	if ra.ProfileText != rb.ProfileText || ra.Name != rb.Name {
		out = append(out, fmt.Sprintf("the profiles differ (%s): a difference may be theirs, not the libraries'", both(profileName(ra), profileName(rb))))
	}
	if ra.Planned != rb.Planned {
		out = append(out, fmt.Sprintf("the windows differ (%s): totals (messages, reconnects, faults, seconds missing) "+
			"are not comparable; rates, levels and latency are", both(ra.Planned.String(), rb.Planned.String())))
	}
	var host []string
	for _, k := range []string{"cpu_model", "cpu_logical", "mem_total", "kernel", "virtualization"} {
		if ra.Host[k] != rb.Host[k] {
			host = append(host, k+" "+both(orNone(ra.Host[k]), orNone(rb.Host[k])))
		}
	}
	if len(host) > 0 {
		out = append(out, "the hosts differ ("+strings.Join(host, "; ")+"): CPU, memory and latency depend on the machine")
	}
	if ra.GoVersion != rb.GoVersion {
		out = append(out, fmt.Sprintf("the Go versions differ (%s): the runtime is part of what is measured", both(orNone(ra.GoVersion), orNone(rb.GoVersion))))
	}
	return out
}

// profileName names a run's profile: its file, else its name.
func profileName(r store.Run) string {
	if p := r.Settings["profile_path"]; p != "" {
		return fmt.Sprintf("%s %q", p, r.Name)
	}
	return fmt.Sprintf("%q", r.Name)
}

func orNone(s string) string {
	if s == "" {
		return "none recorded"
	}
	return s
}

// deltaNumber is a difference in unit u without the unit: as delta
// formats it.
func deltaNumber(d float64, u string) string {
	return strings.TrimSuffix(delta(d, u), " "+deltaUnit(u))
}

// deltaUnit is the unit delta writes a difference in unit u with.
func deltaUnit(u string) string {
	switch u {
	case "bytes":
		return "MB"
	case "%":
		return "pp"
	}
	return u
}

// delta formats a difference in a metric's unit.
func delta(d float64, u string) string {
	switch u {
	case "bytes":
		return fmt.Sprintf("%+.1f MB", d/1e6)
	case "%":
		return fmt.Sprintf("%+.2f pp", d) // percentage points of one core
	case "s":
		return fmt.Sprintf("%+.2f s", d)
	case "ms":
		if math.Abs(d) < 10 {
			return fmt.Sprintf("%+.2f ms", d) // latency: tenths of a ms are what differs
		}
		return fmt.Sprintf("%+.1f ms", d)
	case "":
		return fmt.Sprintf("%+g", d)
	}
	return unit.Signed(d) + " " + u
}
