package profile

import (
	"slices"
	"testing"
)

// TestCPUsMissing: the CPUs a pinning names that this machine lacks, each
// once, in the order the lists name them; none when all are usable.
func TestCPUsMissing(t *testing.T) {
	usable := map[int]bool{0: true, 1: true}
	tests := []struct {
		cpus string
		want []int
	}{
		{"0:1", nil},
		{"0:0", nil},
		{"0:2", []int{2}},
		{"3,2:2-4", []int{3, 2, 4}},
		{"5:0-1", []int{5}},
	}
	for _, tc := range tests {
		c, err := ParseCPUs(tc.cpus)
		if err != nil {
			t.Fatalf("ParseCPUs(%q): %v", tc.cpus, err)
		}
		if got := c.Missing(usable); !slices.Equal(got, tc.want) {
			t.Errorf("%s: missing %v, want %v", tc.cpus, got, tc.want)
		}
	}
	if got := (CPUs{}).Missing(nil); got != nil {
		t.Errorf("not pinned: missing %v, want none", got)
	}
}
