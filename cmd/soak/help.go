package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wssoak/wssoak/internal/terminal"
)

// printHelp prints the synopsis and the flags, and with full what the subcommand does and
// its examples, every line within 120 columns (a longer one folded under itself).
func (fs *flagSet) printHelp(out io.Writer, full bool) {
	var w bytes.Buffer
	defer func() {
		for line := range strings.Lines(w.String()) {
			line = strings.TrimSuffix(line, "\n")
			indent := "    "
			if rest, ok := strings.CutPrefix(line, "    \t"); ok { // a flag's usage: under the flag's name
				line, indent = "        "+rest, "        "
			}
			for _, l := range terminal.Fold(line, indent) {
				fmt.Fprintln(out, l)
			}
		}
	}()
	fs.printHelpTo(&w, full)
}

// printHelpTo is printHelp before the lines are folded.
func (fs *flagSet) printHelpTo(w io.Writer, full bool) {
	h := fs.help
	fmt.Fprintf(w, "Usage: %s\n", h.synopsis)
	if full {
		fmt.Fprintf(w, "\n%s\n", h.about)
	}
	// The current flags (with their defaults, not the values parsed so far), then the
	// deprecated spellings.
	cur := flag.NewFlagSet(fs.name, flag.ContinueOnError)
	var old []*deprecated
	fs.VisitAll(func(f *flag.Flag) {
		if d, ok := f.Value.(*deprecated); ok {
			old = append(old, d)
			return
		}
		cur.Var(f.Value, f.Name, f.Usage)
		cur.Lookup(f.Name).DefValue = f.DefValue
	})
	if countFlags(cur) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		cur.SetOutput(w)
		cur.PrintDefaults()
	}
	if len(old) > 0 {
		fmt.Fprintln(w, "\nDeprecated (they still work, with a warning, until the next release):")
		for _, d := range old {
			fmt.Fprintf(w, "  -%s: use %s\n", d.name, d.now)
		}
	}
	if !full {
		fmt.Fprintf(w, "\nRun 'soak %s -h' for examples.\n", fs.name)
		return
	}
	fmt.Fprintln(w, "\nExamples:")
	for _, e := range h.examples {
		fmt.Fprintf(w, "  %s\n      %s\n", e.cmd, e.what)
	}
}

func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}
