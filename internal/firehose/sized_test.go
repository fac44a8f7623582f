package firehose

import (
	"strings"
	"testing"
)

// TestSized: a sized scenario's mean payload is within ±3 % of its size, it
// is found by its name, and sizes out of range are refused.
func TestSized(t *testing.T) {
	for _, size := range []int{SizedMin() + 200, 9000, 41_000, 900_000} {
		sc, err := Lookup(SizedName(size))
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != SizedName(size) || sc.Target != size {
			t.Errorf("Lookup(%q): %s, target %d", SizedName(size), sc.Name, sc.Target)
		}
		n := max(3, 400_000/size)
		b, err := Prepare(sc, n, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		mean := float64(b.PayloadBytes) / float64(n)
		t.Logf("%s: %d levels, mean %.0f B", sc.Name, sc.Levels, mean)
		if lo, hi := 0.97*float64(size), 1.03*float64(size); mean < lo || mean > hi {
			t.Errorf("%s: mean payload %.0f B, want %.0f..%.0f", sc.Name, mean, lo, hi)
		}
	}
	for _, bad := range []int{SizedMin() - 1, MaxSized + 1, 0} {
		if _, err := Sized(bad); err == nil || !strings.Contains(err.Error(), "payload size") {
			t.Errorf("Sized(%d): error %v, want one about the payload size", bad, err)
		}
	}
	for _, name := range []string{"depth-B", "depth-09000B", "depth-9000", "depth-+9000B", "depth-9KB"} {
		if _, err := Lookup(name); err == nil {
			t.Errorf("Lookup(%q): no error", name)
		}
	}
}
