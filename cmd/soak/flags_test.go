package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// meanings is the one meaning of every flag name of soak, with the placeholder of its
// value in the help (the backquoted word of its usage; "" for a switch). A subcommand
// that declares a flag uses the name in this meaning; a new name is added here first.
var meanings = map[string]struct{ arg, meaning string }{
	"o":               {"FILE", "the file the command writes"},
	"dir":             {"DIR", "the folder the command writes its files into"},
	"out":             {"DIR", "the folder that holds the run directories (made there, or looked for)"},
	"baseline":        {"COLUMN", "the column every other is marked better, worse or = against, instead of the leader's ★"},
	"wide":            {"", "a table's full cells, however wide, instead of one within 120 columns"},
	"resume":          {"RUN_DIR", "the run directory of a run to continue"},
	"profile":         {"FILE", "the YAML profile"},
	"duration":        {"DURATION", "how long the run (or the synthetic run) lasts"},
	"libs":            {"LIBS", "the libraries to run, comma-separated"},
	"lib":             {"LIB", "the one library a chat server is written with"},
	"worker-timeout":  {"DURATION", "how long a worker may stay silent before it is restarted"},
	"v":               {"", "log debug details"},
	"write-backlog":   {"SECONDS", "how much data is kept in memory while writes fail"},
	"http":            {"HOST:PORT", "where the live view listens"},
	"http-public":     {"", "allow -http outside loopback"},
	"http-token-file": {"FILE", "the file whose first line is the live view's bearer token"},
	"http-cert":       {"FILE", "the live view's PEM certificate (TLS)"},
	"http-key":        {"FILE", "the private key of -http-cert"},
	"metrics-only":    {"", "the live view serves /metrics alone"},
	"linger":          {"DURATION", "how long the live view stays up after the run's end"},
	"label":           {"KEY=VALUE", "a label of the run (soak_run_info, the report over several runs)"},
	"strict":          {"", "refuse runs of another profile in a report over several runs"},
	"addr":            {"HOST:PORT", "where the server (replay server, firehose) listens"},
	"addr-public":     {"", "allow -addr outside loopback"},
	"seed":            {"N", "the random seed of the generated streams"},
	"speed":           {"FACTOR", "the replay's rate factor"},
	"symbols":         {"N", "how many markets per library"},
	"cert":            {"FILE", "the server's PEM certificate"},
	"key":             {"FILE", "the private key of -cert"},
	"format":          {"FORMAT", "the format of the files written"},
	"scenario":        {"NAME", "the firehose's scenario"},
	"n":               {"N", "how many messages per connection"},
	"conns":           {"N", "how many connections are served"},
	"scenarios":       {"LIST", "the firehose scenarios to bench, comma-separated"},
	"paths":           {"LIST", "the client paths to bench, comma-separated"},
	"runs":            {"N", "how many counted rounds"},
	"rcvbuf":          {"SIZE", "the clients' SO_RCVBUF"},
	"cpus":            {"LISTS", "the CPUs the firehose and the clients are pinned to"},
	"sweep":           {"RANGE", "the payload sizes of soak bench's message-size sweep, LO..HI"},
	"encodings":       {"LIST", "the encodings to bench, comma-separated"},
	"side":            {"SIDE", "the side soak bench measures (server: the chat servers)"},
	"clients":         {"LIST", "the chat bench's room sizes, comma-separated"},
	"deliveries":      {"N", "how many deliveries per chat bench run"},
	"per-round":       {"N", "how many messages each chat client sends per round"},
	"queue":           {"N", "how many messages a chat connection may have queued"},
	"strategy":        {"STRATEGY", "a chat server's write strategy"},
	"strategies":      {"LIST", "the chat servers' write strategies"},
	"compression":     {"COMPRESSION", "permessage-deflate: off, on or no_context_takeover (soak bench: a comma-separated list, each scenario run under each)"},
}

// flagUse is a flag as one subcommand declares it.
type flagUse struct {
	sub, arg string
}

// flagUses walks the flag sets by subcommand and returns, by flag name, each use with its
// placeholder, leaving out the deprecated spellings (their old meaning lasts one release).
func flagUses(t *testing.T, sets map[string]*flagSet) map[string][]flagUse {
	t.Helper()
	uses := map[string][]flagUse{}
	for _, sub := range slices.Sorted(maps.Keys(sets)) {
		sets[sub].VisitAll(func(f *flag.Flag) {
			if _, ok := f.Value.(*deprecated); ok {
				return
			}
			arg, _ := flag.UnquoteUsage(f)
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				if !strings.Contains(f.Usage, "`") {
					t.Errorf("soak %s -%s: its usage %q names no `PLACEHOLDER` of its value", sub, f.Name, f.Usage)
				}
			}
			uses[f.Name] = append(uses[f.Name], flagUse{sub, arg})
		})
	}
	return uses
}

// clashes lists the flag names used with more than one placeholder.
func clashes(uses map[string][]flagUse) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(uses)) {
		args := map[string][]string{}
		for _, u := range uses[name] {
			args[u.arg] = append(args[u.arg], u.sub)
		}
		if len(args) > 1 {
			var parts []string
			for _, arg := range slices.Sorted(maps.Keys(args)) {
				parts = append(parts, fmt.Sprintf("-%s %s in %s", name, arg, strings.Join(args[arg], ", ")))
			}
			out = append(out, fmt.Sprintf("flag -%s has %d meanings: %s", name, len(args), strings.Join(parts, "; ")))
		}
	}
	return out
}

// allFlagSets declares every subcommand's flags, as soak does before parsing.
func allFlagSets() map[string]*flagSet {
	sets := map[string]*flagSet{}
	for sub, h := range helps {
		fs := newFlagSet(sub, io.Discard, io.Discard)
		if h.flags != nil {
			h.flags(fs)
		}
		sets[sub] = fs
	}
	return sets
}

// TestFlagMeanings: every flag of every subcommand is in the meanings table, with the
// table's placeholder, so that one name has one meaning across soak; every entry of the
// table is used. The check finds the clash that -o was (a file, a folder, a run directory).
func TestFlagMeanings(t *testing.T) {
	uses := flagUses(t, allFlagSets())
	for _, c := range clashes(uses) {
		t.Error(c)
	}
	for _, name := range slices.Sorted(maps.Keys(uses)) {
		m, ok := meanings[name]
		if !ok {
			t.Errorf("flag -%s (soak %s) is not in the meanings table: say what it means there", name, uses[name][0].sub)
			continue
		}
		for _, u := range uses[name] {
			if u.arg != m.arg {
				t.Errorf("soak %s declares -%s %s; the name means %q (-%s %s) everywhere", u.sub, name, u.arg, m.meaning, name, m.arg)
			}
		}
	}
	for name := range meanings {
		if _, ok := uses[name]; !ok {
			t.Errorf("the meanings table holds -%s, which no subcommand declares", name)
		}
	}

	// The layout before the rename: -o a file for report, a folder for export.
	old := map[string]*flagSet{"report": newFlagSet("report", io.Discard, io.Discard), "export": newFlagSet("export", io.Discard, io.Discard)}
	old["report"].String("o", "", "write the report to `FILE`")
	old["export"].String("o", "", "write the files into `DIR`")
	if got := clashes(flagUses(t, old)); len(got) != 1 || !strings.Contains(got[0], "-o DIR in export; -o FILE in report") {
		t.Errorf("the old -o: clashes %q; want the one clash of -o", got)
	}
}

// TestHelp: soak <sub> -h prints the synopsis, the flags and the examples on stdout and
// exits 0, for every subcommand; the synopsis names only current flags.
func TestHelp(t *testing.T) {
	sets := allFlagSets()
	for _, sub := range slices.Sorted(maps.Keys(helps)) {
		h := helps[sub]
		t.Run(sub, func(t *testing.T) {
			for _, f := range regexp.MustCompile(`-[a-z][a-z-]*`).FindAllString(h.synopsis, -1) {
				if fl := sets[sub].Lookup(f[1:]); fl == nil {
					t.Errorf("synopsis %q names %s, not a flag of soak %s", h.synopsis, f, sub)
				} else if _, old := fl.Value.(*deprecated); old {
					t.Errorf("synopsis %q names %s, a deprecated spelling", h.synopsis, f)
				}
			}
			if len(h.examples) == 0 {
				t.Errorf("soak %s has no example", sub)
			}
			for _, arg := range []string{"-h", "-help", "--help"} {
				stdout, stderr, err := runSoak(t, sub, arg)
				var line bytes.Buffer
				if code := exitCode(err, &line); code != 0 || line.Len() > 0 || !errors.Is(err, flag.ErrHelp) {
					t.Errorf("soak %s %s: exit code %d, error %v, printed %q; want 0 and nothing", sub, arg, code, err, line.String())
				}
				if stderr != "" {
					t.Errorf("soak %s %s: stderr %q; want nothing", sub, arg, stderr)
				}
				want := []string{"Usage: " + h.synopsis + "\n", h.about, "Examples:"}
				for _, e := range h.examples {
					want = append(want, "  "+e.cmd+"\n", e.what)
				}
				if h.flags != nil {
					want = append(want, "\nFlags:\n")
				}
				sets[sub].VisitAll(func(f *flag.Flag) {
					if _, old := f.Value.(*deprecated); !old {
						want = append(want, "  -"+f.Name)
					}
				})
				for _, w := range want {
					if !strings.Contains(stdout, w) {
						t.Errorf("soak %s %s: stdout lacks %q:\n%s", sub, arg, w, stdout)
					}
				}
			}
		})
	}
}

// TestHelpExamples: every example of every help parses with its subcommand's flags, takes
// no more arguments than the subcommand does, and uses no deprecated spelling.
func TestHelpExamples(t *testing.T) {
	for _, sub := range slices.Sorted(maps.Keys(helps)) {
		h := helps[sub]
		for _, e := range h.examples {
			words := strings.Split(e.cmd, " ")
			if len(words) < 2 || words[0] != "soak" || words[1] != sub {
				t.Errorf("example %q of soak %s does not start with soak %s", e.cmd, sub, sub)
				continue
			}
			var stdout, stderr bytes.Buffer
			fs := newFlagSet(sub, &stdout, &stderr)
			if h.flags != nil {
				h.flags(fs)
			}
			var pos []string
			var err error
			if h.args == 0 {
				err = parseFlags(fs, words[2:])
			} else {
				pos, err = parseInterspersed(fs, words[2:])
			}
			if err != nil || len(pos) > h.args || stdout.Len()+stderr.Len() > 0 {
				t.Errorf("example %q: error %v, %d arguments (at most %d), printed %q", e.cmd, err, len(pos), h.args, stdout.String()+stderr.String())
			}
		}
	}
}

// TestBadFlag: a mistake in the flags prints nothing on stdout nor stderr but the error,
// once, as the one line of exitCode, with the usage exit code 2: what is wrong and where
// the flags are listed (no page of usage around it).
func TestBadFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string // the error line, after "soak: "
	}{
		{[]string{"run", "-worker-timeout", "soon"}, `invalid value "soon" for flag -worker-timeout`},
		{[]string{"run", "extra"}, `run: unexpected argument "extra"`},
		{[]string{"synth", "-symbols", "many", "d"}, `invalid value "many" for flag -symbols`},
		{[]string{"export", "-format"}, `flag needs an argument: -format`},
	}
	for _, sub := range slices.Sorted(maps.Keys(helps)) {
		tests = append(tests, struct {
			args []string
			want string
		}{[]string{sub, "-bogus"}, "flag provided but not defined: -bogus"})
	}
	// A flag misspelt: the one meant.
	tests = append(tests, struct {
		args []string
		want string
	}{[]string{"run", "-lib", "gorilla"}, "flag provided but not defined: -lib: soak run has no such flag; did you mean -libs?"})
	for _, tc := range tests {
		stdout, stderr, err := runSoak(t, tc.args...)
		var line bytes.Buffer
		code := exitCode(err, &line)
		if code != 2 || strings.Count(line.String(), "\n") != 1 || !strings.HasPrefix(line.String(), "soak: "+tc.want) {
			t.Errorf("%q: exit code %d, error line %q; want 2 and one line with %q", tc.args, code, line.String(), tc.want)
		}
		if stdout != "" {
			t.Errorf("%q: stdout %q; want nothing", tc.args, stdout)
		}
		if stderr != "" {
			t.Errorf("%q: stderr %q; want nothing but the error line", tc.args, stderr)
		}
		if !strings.Contains(line.String(), "(soak "+tc.args[0]+" -h lists the flags)") {
			t.Errorf("%q: error line %q does not say where the flags are listed", tc.args, line.String())
		}
	}
}

// TestDeprecatedFlags: the old spellings (export -o DIR, synth -o RUN_DIR) still work for
// one release, and print one line on stderr, however often given, naming the new one.
func TestDeprecatedFlags(t *testing.T) {
	parse := []struct {
		sub  string
		args []string
		got  func(a any) string
		want string // the value set
		now  string // named by the warning
	}{
		{"export", []string{"-o", "a", "-o", "b"}, func(a any) string { return *a.(*exportArgs).dir }, "b", "use -dir DIR"},
		{"export", []string{"r", "-o", "a"}, func(a any) string { return *a.(*exportArgs).dir }, "a", "use -dir DIR"},
		{"synth", []string{"-o", "d", "-duration", "2m"}, func(a any) string { return *a.(*synthArgs).o }, "d", "use the argument RUN_DIR"},
	}
	for _, tc := range parse {
		var stdout, stderr bytes.Buffer
		fs := newFlagSet(tc.sub, &stdout, &stderr)
		a := helps[tc.sub].flags(fs)
		if _, err := parseInterspersed(fs, tc.args); err != nil {
			t.Errorf("soak %s %q: %v", tc.sub, tc.args, err)
			continue
		}
		if got := tc.got(a); got != tc.want {
			t.Errorf("soak %s %q: set %q, want %q", tc.sub, tc.args, got, tc.want)
		}
		want := fmt.Sprintf("soak %s: flag -o is deprecated and goes away in the next release: %s", tc.sub, tc.now)
		if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.HasPrefix(s, want) {
			t.Errorf("soak %s %q: stderr %q; want one line starting %q", tc.sub, tc.args, s, want)
		}
		if stdout.Len() > 0 {
			t.Errorf("soak %s %q: stdout %q", tc.sub, tc.args, stdout.String())
		}
	}

	// The commands: synth -o makes the run, export -o writes into the folder.
	dir := t.TempDir()
	run, csv := filepath.Join(dir, "run"), filepath.Join(dir, "csv")
	_, stderr, err := runSoak(t, "synth", "-o", run, "-duration", "2m", "-symbols", "1")
	if err != nil {
		t.Fatalf("synth -o: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(run, "soak.db")); err != nil || !strings.Contains(stderr, "flag -o is deprecated") {
		t.Errorf("synth -o: %v, stderr %q; want the run and the warning", err, stderr)
	}
	if _, stderr, err = runSoak(t, "export", "-o", csv, run); err != nil {
		t.Fatalf("export -o: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(csv, "samples.csv")); err != nil || strings.Count(stderr, "deprecated") != 1 {
		t.Errorf("export -o: %v, stderr %q; want the files and one warning", err, stderr)
	}
	if _, stderr, err = runSoak(t, "export", "-dir", csv, run); err != nil || stderr != "" {
		t.Errorf("export -dir: %v, stderr %q; want no warning", err, stderr)
	}
	var ue usageError
	if _, _, err = runSoak(t, "synth", "-o", run, run); !errors.As(err, &ue) || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("synth -o DIR DIR: %v; want a usage error: the run directory is given twice", err)
	}
	if _, _, err = runSoak(t, "synth"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "RUN_DIR is required") {
		t.Errorf("synth without RUN_DIR: %v; want a usage error", err)
	}
}
