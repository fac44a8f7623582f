package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/transport"
)

// versionHelp is what soak version -h prints.
var versionHelp = help{
	synopsis: "soak version",
	about: `Print what this binary is: soak's own version and the commit it was built from (with
"modified" when the tree had changes), the Go that built it, and the module and version of
every WebSocket library linked in (what a run's table compares).`,
	examples: []example{{"soak version", "the versions, one a line"}},
}

// versionCmd prints soak's version, commit and Go, and each library's
// module version, from the build information the binary carries.
func versionCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if err := parseFlags(newFlagSet("version", stdout, stderr), args); err != nil {
		return err
	}
	version, commit := "(devel)", "unknown (built without version control information)"
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" {
			version = v
		}
		var rev, modified, at string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			case "vcs.time":
				at = ", " + s.Value
			}
		}
		if rev != "" {
			commit = rev + modified + at
		}
	}
	fmt.Fprintf(stdout, "soak %s\ncommit %s\n%s %s/%s\n\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "library\tmodule\tversion")
	for _, t := range transport.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name(), t.Module(), t.Version())
	}
	return tw.Flush()
}
