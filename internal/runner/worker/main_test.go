package worker

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/link"
)

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
