package firehose

import "testing"

// TestPayloadSizes: every scenario's mean payload (combined form) is within
// ±15 % of its target, and its messages are valid JSON.
func TestPayloadSizes(t *testing.T) {
	for _, sc := range Scenarios() {
		n := 400
		if sc.Name == "tickerArr" {
			n = 3
		}
		b, err := Prepare(sc, n, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		mean := float64(b.PayloadBytes) / float64(n)
		t.Logf("%s: mean %.0f B, target %d", sc.Name, mean, sc.Target)
		if lo, hi := 0.85*float64(sc.Target), 1.15*float64(sc.Target); mean < lo || mean > hi {
			t.Errorf("%s: mean payload %.0f B, want %.0f..%.0f (target %d ±15 %%)", sc.Name, mean, lo, hi, sc.Target)
		}
	}
}
