package live

import (
	"regexp"
	"slices"
	"testing"

	"github.com/wssoak/wssoak/internal/measure"
)

// TestPromNamesFromCatalogue: /metrics serves one series for every measure
// of the catalogue that has a Prometheus name, and no other per-library
// series.
func TestPromNamesFromCatalogue(t *testing.T) {
	var served []string
	for _, d := range perLib() {
		name := descName(d)
		if !regexp.MustCompile(`^soak_[a-z0-9_]+$`).MatchString(name) {
			t.Fatalf("no name in %s: %q", d, name)
		}
		served = append(served, name)
	}
	var want []string
	for _, m := range measure.Catalogue {
		if m.Prom != "" {
			want = append(want, m.Prom)
		}
	}
	slices.Sort(served)
	slices.Sort(want)
	if !slices.Equal(served, want) {
		t.Errorf("served %v, catalogue %v", served, want)
	}
}
