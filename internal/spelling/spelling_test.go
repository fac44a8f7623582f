package spelling

import "testing"

func TestNearest(t *testing.T) {
	for _, tc := range []struct {
		word  string
		words []string
		want  string
	}{
		{"lib", []string{"libs", "out", "profile"}, "libs"},
		{"runn", []string{"run", "serve", "report"}, "run"},
		{"aggtrade", []string{"aggTrade", "trade"}, "aggTrade"}, // case alike
		{"read_limit", []string{"read-limit"}, "read-limit"},    // '-' and '_' alike
		{"xyz", []string{"run", "serve"}, ""},                   // nothing near
		{"ab", []string{"xy"}, ""},                              // two edits of two letters: too far
	} {
		if got := Nearest(tc.word, tc.words); got != tc.want {
			t.Errorf("Nearest(%q, %q) = %q, want %q", tc.word, tc.words, got, tc.want)
		}
	}
}
