package link

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMain plays a test's child role when roleEnv is set; else it runs the
// tests, then checks that they left nothing: no pair of this process here,
// no nft table of the tool in this namespace, no namespace held by a file
// of this process, and fails the suite if they did.
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(playRole(role))
	}
	code := m.Run()
	if err := leaks(); err != nil {
		fmt.Fprintln(os.Stderr, "leak check:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// leaks reports what the tests left behind, waiting a little for the
// kernel, which removes a namespace (and the pair in it) asynchronously.
func leaks() error { return Remaining(5 * time.Second) }
