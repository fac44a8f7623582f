package worker

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/link"
)

// eventLoops are the goroutines nbio keeps for the process's life, which a
// test's leak check leaves aside: the task pools of its package's default
// engine, started when the package is loaded, and the pollers of the nbio
// adapter's event loop, started at its first connection (one per process,
// by design: every connection of a worker shares it).
var eventLoops = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/lesismal/nbio/taskpool.New.func3"),
	goleak.IgnoreAnyFunction("github.com/lesismal/nbio.(*poller).start"),
}

// TestMain runs the tests, then checks that the failure matrix's network
// scenarios left no link behind (no pair, nft table or namespace), and fails
// the suite if they did.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := link.Remaining(5 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "leak check:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
