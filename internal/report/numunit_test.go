package report

import "testing"

func TestNumUnit(t *testing.T) {
	for metric, want := range map[string]string{
		"Messages / data":                    "messages",
		"Reconnects (arr / markets / depth)": "reconnects",
		"Reconnect duration (median / max)":  "ms",
		"Lost charged to library / source":   "ids",
		"RSS start → end (peak)":             "bytes",
		"Something new":                      "",
	} {
		if got := NumUnit(metric); got != want {
			t.Errorf("NumUnit(%q) = %q, want %q", metric, got, want)
		}
	}
}
