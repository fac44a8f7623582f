package main

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// TestMain lets the test binary stand in for the soak binary: the controller
// re-executes its own executable as "serve" and "worker" children, and with
// SOAK_TEST_AS_MAIN set this binary behaves exactly like soak.
func TestMain(m *testing.M) {
	if os.Getenv("SOAK_TEST_AS_MAIN") == "1" {
		err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		os.Exit(exitCode(err, os.Stderr))
	}
	os.Setenv("SOAK_TEST_AS_MAIN", "1") // inherited by the children only
	os.Exit(m.Run())
}

// runSoak runs the command in-process and returns stdout, stderr and the error.
func runSoak(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, nil, &out, &errb)
	return out.String(), errb.String(), err
}
