// Command gen writes the soak dashboard (package dashboard) as JSON: go
// generate ./internal/dashboard rewrites deploy/grafana/soak.json.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/wssoak/wssoak/internal/dashboard"
)

func main() {
	out := flag.String("o", "", "write the dashboard to `FILE` (default: stdout)")
	flag.Parse()
	b, err := dashboard.JSON()
	if err == nil {
		if *out == "" {
			_, err = os.Stdout.Write(b)
		} else {
			err = os.WriteFile(*out, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
