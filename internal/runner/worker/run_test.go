package worker

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestRunWorkerRejectsBadPlans(t *testing.T) {
	tests := []struct{ plan, lib, want string }{
		{`{"v":2}`, "gorilla", "plan version 2, want 1"},
		{`{"v":1}`, "nope", `unknown library "nope"`},
		{`{"v":1`, "gorilla", "decode plan"},
		{``, "gorilla", "read plan"},
	}
	for _, tc := range tests {
		err := Run(context.Background(), tc.lib, strings.NewReader(tc.plan+"\n"), io.Discard, slog.New(slog.DiscardHandler))
		if tc.plan == "" {
			err = Run(context.Background(), tc.lib, strings.NewReader(""), io.Discard, slog.New(slog.DiscardHandler))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan %q lib %s: %v, want an error containing %q", tc.plan, tc.lib, err, tc.want)
		}
	}
}
