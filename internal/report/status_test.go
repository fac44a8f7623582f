package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
)

// TestReportStatusWithoutOwner: a run recorded as running is shown running
// while a process owns its directory, and as ended without its status once
// none does (its controller died, or a full disk kept it from recording its
// end), not "running" forever.
func TestReportStatusWithoutOwner(t *testing.T) {
	path := longRunDB(t) // recorded as running
	status := func() string {
		t.Helper()
		_, html := renderFile(t, path)
		page := string(html)
		i := strings.Index(page, `class="status">`)
		if i < 0 {
			t.Fatal("no status in the page")
		}
		rest := page[i+len(`class="status">`):]
		return rest[:strings.Index(rest, "<")]
	}
	lock, err := rundir.TakeLock(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "running" {
		t.Errorf("owned: status %q, want running", got)
	}
	lock.Release()
	if got := status(); got != store.StatusNoEnd {
		t.Errorf("owned by no process: status %q, want %q", got, store.StatusNoEnd)
	}
}
