// Calibrate counts what the ranking called in runs of
// profiles/calibration.yaml (scripts/calibrate.sh makes them), against what
// is known of their columns:
//
//   - A/A: five columns of one library alike. Any difference called between
//     two of them is noise taken for a finding: the share of (measure, pair)
//     calls, and of runs where one of them got a ★ over the other four.
//   - A/B: a column burning a calibration cost per message must be called
//     higher on CPU than each of the A/A columns; two columns under GOGC 25
//     and 400 must be called different on the Go heap or on RSS.
//   - The RSS floor: the spread of RSS between A/A columns, as the steady
//     level (the median of the window's second half) of one minus the
//     other's, over every pair of every run: its 95th percentile.
//
// It reads each run's soak.db read-only; the ranking is the one the run
// stored (its ranking table), or with -recompute the one this build's
// ranking computes from the run's samples: the same runs counted again
// after a change of the statistic.
//
//	go run ./scripts/calibrate [-recompute] [-aa LIST] [-cost NAME] [-gc NAME,NAME] RUN_DIR... | PARENT_DIR
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/store"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
}

// columns names the calibration profile's columns by their part.
type columns struct {
	aa     []string // alike
	cost   string   // the calibration cost's
	gc     []string // GOGC low, GOGC high
	cpu    string   // the ranked measure the cost must be called on
	memory []string // those GOGC must be called different on (any)
	// recompute ranks the samples again instead of reading the stored ranking.
	recompute bool
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	aa := fs.String("aa", "gorilla-a1,gorilla-a2,gorilla-a3,gorilla-a4,gorilla-a5", "the A/A `COLUMNS`, alike")
	cost := fs.String("cost", "gorilla-cost5us", "the `COLUMN` with a calibration cost")
	gc := fs.String("gc", "gorilla-gc25,gorilla-gc400", "the two `COLUMNS` under a low and a high GOGC")
	cpu := fs.String("cpu", "cpu_avg", "the ranked `MEASURE` the cost must be called higher on")
	memory := fs.String("memory", "heap,rss_level", "the ranked `MEASURES` GOGC must be called different on (any of them)")
	verbose := fs.Bool("v", false, "a line per run")
	recompute := fs.Bool("recompute", false, "rank each run's samples with this build's ranking, not the ranking the run stored")
	csvPath := fs.String("csv", "", "write a row per run to `FILE` (CSV)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cols := columns{aa: split(*aa), cost: *cost, gc: split(*gc), cpu: *cpu, memory: split(*memory), recompute: *recompute}
	if len(cols.aa) < 2 || len(cols.gc) != 2 {
		return errors.New("want at least two -aa columns and two -gc columns")
	}
	dirs, err := runDirs(fs.Args())
	if err != nil {
		return err
	}
	var t tally
	var results []runResult
	if cols.recompute {
		fmt.Fprintln(out, "ranking: recomputed from the samples by this build")
	}
	for _, dir := range dirs {
		r, err := readRun(dir, cols)
		if err != nil {
			return err
		}
		t.add(r)
		results = append(results, r)
		if *verbose {
			fmt.Fprintln(out, r.line())
		}
	}
	t.print(out, cols)
	if *csvPath != "" {
		return writeCSV(*csvPath, results)
	}
	return nil
}

// writeCSV writes a row per run: its load, and what was called.
func writeCSV(path string, rs []runResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"run", "status", "load1_mean", "host_busy_pct", "aa_pairs_with_interval", "aa_called", "aa_star",
		"cost_called_over_aa", "aa_columns", "gogc_called_on"})
	for _, r := range rs {
		w.Write([]string{filepath.Base(r.dir), r.status, fmt.Sprintf("%.2f", r.load), fmt.Sprintf("%.1f", r.busy),
			fmt.Sprint(r.aaCallable), strings.Join(r.aaCalled, " "), strings.Join(r.aaStars, " "),
			fmt.Sprint(r.costOver), fmt.Sprint(r.aa), strings.Join(r.gcCalledOn, " ")})
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// runDirs are the run directories named, or those under a parent named
// alone, in name order (the run ids start with their time).
func runDirs(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, errors.New("no run directory given")
	}
	if len(args) == 1 {
		if _, err := os.Stat(filepath.Join(args[0], "soak.db")); err != nil {
			dbs, _ := filepath.Glob(filepath.Join(args[0], "*", "soak.db"))
			if len(dbs) == 0 {
				return nil, fmt.Errorf("%s: no soak.db in it or in a directory under it", args[0])
			}
			var out []string
			for _, db := range dbs {
				out = append(out, filepath.Dir(db))
			}
			slices.Sort(out)
			return out, nil
		}
	}
	return args, nil
}

// runResult is what one run says.
type runResult struct {
	dir        string
	status     string
	ranked     bool // the run stored a ranking
	aa         int  // A/A columns
	aaPairs    int  // (measure, pair) figures between A/A columns
	aaCallable int  // those with an interval: the ranking could have called them
	aaExcl     int  // those whose interval excludes 0, floor or not
	aaBy       map[string]aaCount
	aaCalled   []string // those called: "measure a b"
	aaStars    []string // "measure column": an A/A column called better than the other A/A ones
	costOver   int      // A/A columns the cost column was called higher than on CPU
	gcCalledOn []string // memory measures GOGC low and high were called different on
	rssDiffs   []float64
	levels     map[string]level // every column's, for the descriptive table
	host       string           // the run's host record in a line
	load, busy float64          // the host's mean 1-minute load and busy CPU % over the window
	// costMissed and gcMissed say why a known difference was not called:
	// per A/A column the cost was not called higher than, and per memory
	// measure GOGC low and high were not called different on.
	costMissed, gcMissed []string
}

// aaCount is one ranked measure's pairs between A/A columns: all of them,
// those with an interval, those whose interval excludes 0, and those
// called (past the floor too).
type aaCount struct{ pairs, callable, excl, called int }

// level is what a column's samples say, whatever the ranking calls: its
// mean CPU over the window, its median Go heap over the window and its RSS
// level (the median of the window's second half); NaN where not measured.
type level struct{ cpu, heap, rss float64 }

func (r runResult) line() string {
	s := fmt.Sprintf("%s: %s, load %.1f (host %.0f %% busy); A/A %d of %d called %v, ★ %v; cost higher than %d A/A columns; GOGC different on %v",
		filepath.Base(r.dir), r.status, r.load, r.busy, len(r.aaCalled), r.aaPairs, r.aaCalled, r.aaStars, r.costOver, r.gcCalledOn)
	if len(r.costMissed) > 0 {
		s += "\n    cost not called: " + strings.Join(r.costMissed, "; ")
	}
	if len(r.gcCalledOn) == 0 && len(r.gcMissed) > 0 {
		s += "\n    GOGC not called: " + strings.Join(r.gcMissed, "; ")
	}
	return s
}

// hostLine is the host a run recorded (its environment), in a line: the
// CPU, its logical CPUs, the kernel and the clock source.
func hostLine(h map[string]string) string {
	get := func(k string) string {
		if v := h[k]; v != "" {
			return v
		}
		return "-"
	}
	return fmt.Sprintf("%s, %s logical CPUs, kernel %s, clocksource %s", get("cpu_model"), get("cpu_logical"), get("kernel"), get("clocksource"))
}

func readRun(dir string, cols columns) (runResult, error) {
	r := runResult{dir: dir}
	path := filepath.Join(dir, "soak.db")
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return r, err
	}
	defer db.Close()
	run, err := db.Run()
	if err != nil {
		return r, fmt.Errorf("%s: %w", dir, err)
	}
	r.status = run.Status
	if r.levels, err = levels(db, run); err != nil {
		return r, fmt.Errorf("%s: %w", dir, err)
	}
	r.rssDiffs = rssDiffs(r.levels, cols.aa)
	r.host = hostLine(run.Host)
	if r.load, r.busy, err = hostLoad(db, run); err != nil {
		return r, fmt.Errorf("%s: %w", dir, err)
	}
	var rows []rankRow
	switch {
	case cols.recompute && run.Status == "running":
		// a run still going is not ranked again: its window is not over
	case cols.recompute:
		rows, err = rerank(db)
	default:
		rows, err = readRanking(path)
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w", dir, err)
	}
	r.ranked = len(rows) > 0
	r.judge(rows, cols)
	return r, nil
}

// levels reads every column's level from its samples: the window is
// seconds 1 … N (the drain after it left out); CPU over 2 … N, as the end
// table's, the first second holding the connections' start.
func levels(db *store.DB, run store.Run) (map[string]level, error) {
	window := int64(run.Planned.Seconds())
	ss, err := db.Samples("")
	if err != nil {
		return nil, err
	}
	type series struct{ cpu, heap, rss []float64 }
	by := map[string]*series{}
	for _, s := range ss {
		if s.Sec < 1 || s.Sec > window {
			continue
		}
		x := by[s.Lib]
		if x == nil {
			x = &series{}
			by[s.Lib] = x
		}
		if s.HasProc && s.Sec >= 2 {
			x.cpu = append(x.cpu, s.CPUPct)
		}
		if s.HasProc && s.Sec > window/2 {
			x.rss = append(x.rss, float64(s.RSS))
		}
		if s.HasWorker {
			x.heap = append(x.heap, float64(s.HeapBytes))
		}
	}
	out := map[string]level{}
	for c, x := range by {
		out[c] = level{cpu: mean(x.cpu), heap: median(x.heap), rss: median(x.rss)}
	}
	return out, nil
}

// hostLoad is the host's mean 1-minute load average and busy CPU % (of
// all its CPUs) over the run's window, from its host samples: what the
// run shared the machine with.
func hostLoad(db *store.DB, run store.Run) (load, busy float64, err error) {
	hs, err := db.HostSamples()
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	window := int64(run.Planned.Seconds())
	var loads, cpus []float64
	for _, h := range hs {
		if h.Sec >= 1 && h.Sec <= window {
			loads, cpus = append(loads, h.Load1), append(cpus, h.CPUPct)
		}
	}
	return mean(loads), mean(cpus), nil
}

// rssDiffs are |level(a) − level(b)| in bytes of RSS for every pair of cols
// both measured.
func rssDiffs(lv map[string]level, cols []string) []float64 {
	var out []float64
	for i, a := range cols {
		for _, b := range cols[i+1:] {
			if d := math.Abs(lv[a].rss - lv[b].rss); lv[a] != (level{}) && lv[b] != (level{}) && !math.IsNaN(d) {
				out = append(out, d)
			}
		}
	}
	return out
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var t float64
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile is the nearest-rank p-th percentile of xs (0 < p ≤ 100).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	k := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(k, 1), len(s))-1]
}

// tally adds the runs up.
type tally struct {
	runs, ranked    int
	aaRunsStarred   int
	aaPairs, called int
	aaCallable      int
	aaExcl          int
	aaBy            map[string]aaCount
	aaStats         []string // the measures of aaBy, as first seen
	costRuns        int      // runs where the cost was called higher than every A/A column
	gcRuns          int      // runs where GOGC low and high were called different on a memory measure
	gcOn            map[string]int
	rss             []float64
	unfinished      []string
	levels          map[string][]level // per column, a level per run
	order           []string           // columns as first seen
	hosts           []string           // the runs' host records, each once
	loads           []float64          // each run's mean load
	aaStarRuns      []string           // "run: measure column" for each A/A ★
	costMissed      []string           // "run: why" for each run the cost was not called in
	gcMissed        []string           // likewise for GOGC
}

func (t *tally) add(r runResult) {
	t.runs++
	if r.status != "done" {
		t.unfinished = append(t.unfinished, filepath.Base(r.dir)+" ("+r.status+")")
	}
	t.rss = append(t.rss, r.rssDiffs...)
	t.loads = append(t.loads, r.load)
	if !slices.Contains(t.hosts, r.host) {
		t.hosts = append(t.hosts, r.host)
	}
	if t.levels == nil {
		t.levels = map[string][]level{}
	}
	for _, c := range slices.Sorted(maps.Keys(r.levels)) {
		if _, ok := t.levels[c]; !ok {
			t.order = append(t.order, c)
		}
		t.levels[c] = append(t.levels[c], r.levels[c])
	}
	if !r.ranked {
		return
	}
	t.ranked++
	name := filepath.Base(r.dir)
	if len(r.aaStars) > 0 {
		t.aaRunsStarred++
		t.aaStarRuns = append(t.aaStarRuns, name+": "+strings.Join(r.aaStars, ", "))
	}
	t.aaPairs += r.aaPairs
	t.aaCallable += r.aaCallable
	t.aaExcl += r.aaExcl
	if t.aaBy == nil {
		t.aaBy = map[string]aaCount{}
	}
	for _, stat := range slices.Sorted(maps.Keys(r.aaBy)) {
		if _, ok := t.aaBy[stat]; !ok {
			t.aaStats = append(t.aaStats, stat)
		}
		a, b := t.aaBy[stat], r.aaBy[stat]
		t.aaBy[stat] = aaCount{a.pairs + b.pairs, a.callable + b.callable, a.excl + b.excl, a.called + b.called}
	}
	t.called += len(r.aaCalled)
	if r.costOver > 0 && r.costOver == r.aa {
		t.costRuns++
	} else {
		t.costMissed = append(t.costMissed, name+": "+orNone(r.costMissed))
	}
	if len(r.gcCalledOn) > 0 {
		t.gcRuns++
	} else {
		t.gcMissed = append(t.gcMissed, name+": "+orNone(r.gcMissed))
	}
	if t.gcOn == nil {
		t.gcOn = map[string]int{}
	}
	for _, m := range r.gcCalledOn {
		t.gcOn[m]++
	}
}

func (t *tally) print(out io.Writer, cols columns) {
	fmt.Fprintf(out, "runs: %d", t.runs)
	if len(t.unfinished) > 0 {
		fmt.Fprintf(out, " (not finished: %s)", strings.Join(t.unfinished, ", "))
	}
	fmt.Fprintln(out)
	for _, h := range t.hosts {
		fmt.Fprintln(out, "host:", h)
	}
	fmt.Fprintf(out, "load (the host's 1-minute load average, mean over each run's window): median %.1f, %.1f to %.1f\n",
		percentile(t.loads, 50), percentile(t.loads, 0), percentile(t.loads, 100))
	if t.ranked == 0 {
		fmt.Fprintln(out, "ranking: none stored in these runs (a soak that ranks its columns writes a ranking table)")
	} else {
		fmt.Fprintf(out, "A/A (%s): runs with a ★ among them: %d of %d (%s; want ≤ 10 %%); (measure, pair) differences called: %d of the %d with an interval (%s; want ≤ 5 %%), of %d in all (%s)\n",
			strings.Join(cols.aa, ", "), t.aaRunsStarred, t.ranked, pct(t.aaRunsStarred, t.ranked), t.called, t.aaCallable, pct(t.called, t.aaCallable),
			t.aaPairs, pct(t.called, t.aaPairs))
		list(out, t.aaStarRuns)
		fmt.Fprintf(out, "A/A intervals that exclude 0, before the floors: %d of %d (%s; 5 %% if the intervals hold their 95 %%)\n",
			t.aaExcl, t.aaCallable, pct(t.aaExcl, t.aaCallable))
		for _, stat := range t.aaStats {
			c := t.aaBy[stat]
			fmt.Fprintf(out, "    %-20s %4d pairs, %4d with an interval, %4d excluding 0 (%s), %4d called (%s)\n",
				stat, c.pairs, c.callable, c.excl, pct(c.excl, c.callable), c.called, pct(c.called, c.callable))
		}
		fmt.Fprintf(out, "A/B %s: called higher on %s than every A/A column: %d of %d runs (want ≥ 19 of 20)\n", cols.cost, cols.cpu, t.costRuns, t.ranked)
		list(out, t.costMissed)
		var on []string
		for _, m := range cols.memory {
			on = append(on, fmt.Sprintf("%s %d", m, t.gcOn[m]))
		}
		fmt.Fprintf(out, "A/B %s vs %s: called different on %s: %d of %d runs (want ≥ 19 of 20; %s)\n",
			cols.gc[0], cols.gc[1], strings.Join(cols.memory, " or "), t.gcRuns, t.ranked, strings.Join(on, ", "))
		list(out, t.gcMissed)
	}
	if len(t.order) > 0 {
		fmt.Fprintln(out, "levels, the mean over the runs (from the samples, not the ranking): CPU % of one core over the window, Go heap median, RSS median of the second half")
		for _, c := range t.order {
			var cpu, heap, rss []float64
			for _, l := range t.levels[c] {
				cpu, heap, rss = append(cpu, l.cpu), append(heap, l.heap), append(rss, l.rss)
			}
			fmt.Fprintf(out, "  %-20s CPU %6.2f %%   heap %6.2f MB   RSS %6.2f MB\n", c, mean(cpu), mean(heap)/1e6, mean(rss)/1e6)
		}
	}
	fmt.Fprintf(out, "RSS steady level |Δ| between A/A columns (median of the window's second half), %d pairs: p50 %.2f MB, p95 %.2f MB, max %.2f MB\n",
		len(t.rss), percentile(t.rss, 50)/1e6, percentile(t.rss, 95)/1e6, percentile(t.rss, 100)/1e6)
}

// orNone joins the reasons a difference was not called: none when the
// ranking holds no such pair.
func orNone(why []string) string {
	if len(why) == 0 {
		return "no such pair in the ranking"
	}
	return strings.Join(why, "; ")
}

// list prints the runs a count names, indented under it.
func list(out io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(out, "    "+l)
	}
}

func pct(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}
