package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/link"
	"github.com/wssoak/wssoak/internal/store"
)

// TestMain lets the test binary stand in for the soak binary: soak re-executes
// its own executable as its children ("soak child ROLE", "soak chatserver"), and with
// SOAK_TEST_AS_MAIN set this binary behaves exactly like soak (but for a fuzzing
// worker, which go test -fuzz starts as a child too).
func TestMain(m *testing.M) {
	if os.Getenv("SOAK_TEST_AS_MAIN") == "1" && !slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		if ro := os.Getenv(readOnlyEnv); ro != "" {
			if err := mountReadOnly(ro); err != nil {
				fmt.Fprintf(os.Stderr, "mount %s read-only: %v\n", ro, err)
				os.Exit(readOnlyFailed)
			}
		}
		err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		os.Exit(exitCode(err, os.Stderr))
	}
	os.Setenv("SOAK_TEST_AS_MAIN", "1") // inherited by the children only
	code := m.Run()
	// The linked runs (link_test.go) leave no pair, nft table or namespace.
	if err := link.Remaining(5 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "leak check:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// runSoak runs the command in-process and returns stdout, stderr and the error.
func runSoak(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, nil, &out, &errb)
	return out.String(), errb.String(), err
}

// openRun opens, read-only, the one run database under dir; it is closed
// when the test ends.
func openRun(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.OpenReadOnly(dbPath(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// dbPath returns the path of the one run database under dir.
func dbPath(t *testing.T, dir string) string {
	t.Helper()
	dbs, _ := filepath.Glob(filepath.Join(dir, "*", "soak.db"))
	if len(dbs) != 1 {
		t.Fatalf("want one run database under %s, found %v", dir, dbs)
	}
	return dbs[0]
}

// writeProfile writes a profile file into dir and returns its path.
func writeProfile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
