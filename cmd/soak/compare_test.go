package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/report/synth"
)

// TestCompareSets: soak compare A -- B1 B2 names every run and tests the
// ranked measures (one run against two: the batch means within the runs,
// said so); A B is the two tables side by side, then the same test.
func TestCompareSets(t *testing.T) {
	dir := t.TempDir()
	runs := map[string]string{}
	for i, name := range []string{"a", "b1", "b2"} {
		runs[name] = filepath.Join(dir, name)
		if err := synth.Write(filepath.Join(runs[name], "soak.db"), synth.Config{Duration: 2 * time.Minute, Symbols: 1, Libs: []string{"gorilla", "gws"},
			Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, err := runSoak(t, "compare", runs["a"], "--", runs["b1"], runs["b2"])
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	}
	for _, want := range []string{"A: " + runs["a"], "B1: " + runs["b1"], "B2: " + runs["b2"], "within-run noise only", "mean of per-second CPU %"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare A -- B1 B2 lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runSoak(t, "compare", runs["a"], runs["b1"])
	if err != nil || !strings.Contains(out, "gorilla  ") || !strings.Contains(out, "Ranked measures, B − A") {
		t.Errorf("compare A B: %v\n%s", err, out)
	}
}
