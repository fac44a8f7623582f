package main

import (
	"flag"
	"fmt"
	"io"
)

// printHelp prints the synopsis and the flags, and with full what the subcommand does and
// its examples.
func (fs *flagSet) printHelp(w io.Writer, full bool) {
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
