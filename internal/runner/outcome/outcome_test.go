package outcome

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/wssoak/wssoak/internal/store"
)

// TestDropCheckpoint: the final checkpoint's error is left out wherever it
// is joined (the end closed the database again, and that checkpoint
// counts); every other error stays, and none is nothing.
func TestDropCheckpoint(t *testing.T) {
	cp := &store.CheckpointError{Path: "soak.db", Err: errors.New("no space left on device")}
	run, write := errors.New("worker gws: exit 2"), errors.New("store the table: disk full")
	tests := []struct {
		name string
		err  error
		want []error
	}{
		{"nothing", nil, nil},
		{"checkpoint alone", cp, nil},
		{"joined", errors.Join(run, cp), []error{run}},
		{"nested", errors.Join(write, errors.Join(cp, run)), []error{write, run}},
		{"no checkpoint", run, []error{run}},
	}
	for _, tc := range tests {
		got := dropCheckpoint(tc.err)
		if fmt.Sprint(flatten(got)) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, flatten(got), tc.want)
		}
		var ce *store.CheckpointError
		if errors.As(got, &ce) {
			t.Errorf("%s: the checkpoint error is still there: %v", tc.name, got)
		}
	}
}

// TestPrintVerdicts: nothing without verdicts; all passed; the skipped and
// the broken one a line each, and a ThresholdError counting the broken.
func TestPrintVerdicts(t *testing.T) {
	pass := store.Verdict{Lib: "gws", Threshold: "max_errors", Limit: 0, Value: 0}
	broke := store.Verdict{Lib: "gws", Threshold: "max_stalls", Limit: 1, Value: 3, Broken: true}
	var b bytes.Buffer
	if err := PrintVerdicts(&b, nil); err != nil || b.Len() > 0 {
		t.Errorf("no verdicts: %v, printed %q", err, b.String())
	}
	if err := PrintVerdicts(&b, []store.Verdict{pass}); err != nil || b.String() != "thresholds: all 1 checks passed\n" {
		t.Errorf("one passed: %v, printed %q", err, b.String())
	}
	b.Reset()
	err := PrintVerdicts(&b, []store.Verdict{pass, broke})
	var te ThresholdError
	if !errors.As(err, &te) || te.Broken != 1 || err.Error() != "1 threshold(s) broken (exit code 3)" || !bytes.HasPrefix(b.Bytes(), []byte("threshold broken: gws max_stalls")) {
		t.Errorf("one broken: %v, printed %q; want a ThresholdError of 1 and the broken line", err, b.String())
	}
}
