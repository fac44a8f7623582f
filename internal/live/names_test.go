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
	re := regexp.MustCompile(`fqName: "([^"]+)"`)
	var served []string
	for _, d := range perLib() {
		sub := re.FindStringSubmatch(d.String())
		if sub == nil {
			t.Fatalf("no name in %s", d)
		}
		served = append(served, sub[1])
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
