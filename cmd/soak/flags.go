package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wssoak/wssoak/internal/spelling"
)

// A subcommand's help and flags are declared in its file, and one name keeps one meaning
// across soak (TestFlagMeanings holds the list): -o is the file a command writes, -dir the
// folder it writes its files into, -out the folder that holds the run directories, and a run
// directory a command reads or creates is a positional argument (or -resume RUN_DIR).
// The backquoted word of a flag's usage is its value in the help (-o FILE) and the tag the
// test compares. A renamed flag keeps its old spelling for one release (flagSet.renamed).

// help is what soak <sub> -h prints, and the subcommand's flags.
type help struct {
	synopsis string    // the command line: "soak export [-format csv|json] ..."
	about    string    // what the subcommand does, wrapped
	examples []example // at least one
	args     int       // positional arguments at most (0: the flags alone)
	flags    func(fs *flagSet) any
}

// example is a command line of a subcommand's help: "soak", the subcommand and its
// arguments, separated by single spaces (TestHelpExamples parses them).
type example struct {
	cmd, what string
}

// helps holds every subcommand's help, declared in the subcommand's file;
// newFlagSet wants one.
var helps = map[string]help{
	"run":        runHelp,
	"serve":      serveHelp,
	"firehose":   firehoseHelp,
	"bench":      benchHelp,
	"chatserver": chatServerHelp,
	"report":     reportHelp,
	"export":     exportHelp,
	"compare":    compareHelp,
	"synth":      synthHelp,
	"child":      childHelp,
	"version":    versionHelp,
}

// flagSet is a subcommand's flags: its help is printed to stdout for -h, and with a
// mistake to stderr (the error itself is printed once, by exitCode).
type flagSet struct {
	*flag.FlagSet
	name           string
	help           help
	stdout, stderr io.Writer
}

// newFlagSet makes the flag set of subcommand name, which must have an entry in helps.
func newFlagSet(name string, stdout, stderr io.Writer) *flagSet {
	h, ok := helps[name]
	if !ok {
		panic("soak: no help for subcommand " + name)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parseFlags prints the help and the usage
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, name: name, help: h, stdout: stdout, stderr: stderr}
}

// parseFlags parses the flags of a subcommand that takes no argument.
func parseFlags(fs *flagSet, args []string) error {
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.usageError(fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0)))
	}
	return nil
}

// parseInterspersed parses flags placed before or after the positional
// arguments (soak export RUN -format json) and returns the positionals.
func parseInterspersed(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parse parses args: -h prints the help on stdout (flag.ErrHelp, exit code 0), a mistake
// is a usageError of one line: what is wrong, the flag meant when one is near, and where
// the flags are listed.
func (fs *flagSet) parse(args []string) error {
	err := fs.FlagSet.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp(fs.stdout, true)
		return err
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg := fmt.Sprintf("flag provided but not defined: -%s: soak %s has no such flag", name, fs.name)
		if near := spelling.Nearest(strings.TrimLeft(name, "-"), names); near != "" {
			msg += fmt.Sprintf("; did you mean -%s?", near)
		}
		err = errors.New(msg)
	}
	return fs.usageError(err)
}

// usageError returns err as a usageError, saying where the flags are listed.
func (fs *flagSet) usageError(err error) error {
	return usageError{fmt.Errorf("%w (soak %s -h lists the flags)", err, fs.name)}
}

// given tells whether flag name was on the command line, an empty value
// included: such a value is refused, not taken for the flag left out.
func given(fs *flagSet, name string) bool {
	seen := false
	fs.Visit(func(f *flag.Flag) { seen = seen || f.Name == name })
	return seen
}

// splitList splits a comma-separated flag value, leaving out empty items.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
