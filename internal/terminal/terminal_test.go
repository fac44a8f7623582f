package terminal

import (
	"strings"
	"testing"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"gorilla", 7, "gorilla"},
		{"gorilla", 6, "goril…"},
		{"✓ 35.0 MB", 4, "✓ 3…"}, // columns, not bytes
		{"x", 0, ""},
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestFold: every line within Width, the words in order, the first line's
// indent kept, the others indented, no line beginning with a separator.
func TestFold(t *testing.T) {
	words := strings.Repeat("gorilla: 62.6 → 122.6 MB (122.6) · ", 12)
	line := "  [1] RSS — " + strings.TrimSuffix(words, " · ")
	got := Fold(line, "    ")
	if len(got) < 3 || !strings.HasPrefix(got[0], "  [1] RSS") {
		t.Fatalf("Fold: %q", got)
	}
	for i, l := range got {
		if n := Columns(l); n > Width {
			t.Errorf("line %d: %d columns", i, n)
		}
		if i > 0 && (!strings.HasPrefix(l, "    ") || strings.HasPrefix(strings.TrimSpace(l), "·")) {
			t.Errorf("line %d: %q", i, l)
		}
	}
	if back := strings.Join(strings.Fields(strings.Join(got, " ")), " "); back != strings.Join(strings.Fields(line), " ") {
		t.Errorf("words lost or moved:\n%s\n%s", back, line)
	}
	if got := Fold("short", "  "); len(got) != 1 || got[0] != "short" {
		t.Errorf("Fold(short) = %q", got)
	}
}
