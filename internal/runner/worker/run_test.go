package worker

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

// TestRunWorkerRejectsBadPlans: a plan of another version or of a library
// the worker does not know is refused before anything runs. (A plan that
// does not decode is refused by child.ReadSpec, which every child reads
// its spec with.)
func TestRunWorkerRejectsBadPlans(t *testing.T) {
	tests := []struct {
		plan wire.Plan
		want string
	}{
		{wire.Plan{Version: 2, Column: wire.LibraryColumn("gorilla")}, "plan version 2, want 1"},
		{wire.Plan{Version: wire.PlanVersion, Column: wire.LibraryColumn("nope")}, `unknown library "nope"`},
		{wire.Plan{Version: wire.PlanVersion}, `unknown library ""`},
	}
	for _, tc := range tests {
		err := Run(context.Background(), &tc.plan, strings.NewReader(""), io.Discard, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan v%d lib %q: %v, want an error containing %q", tc.plan.Version, tc.plan.Column.Lib, err, tc.want)
		}
	}
}
