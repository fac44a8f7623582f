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

// TestTable: a table that fits is one part, aligned as a tabwriter would;
// one too wide comes in parts within Width, each with the key column,
// every cell printed once.
func TestTable(t *testing.T) {
	var b strings.Builder
	Table(&b, [][]string{{"scenario", "gorilla", "gws"}, {"aggTrade", "678k", "1.04M"}}, 1)
	if want := "scenario  gorilla  gws\naggTrade  678k     1.04M\n"; b.String() != want {
		t.Errorf("one part:\n%q\nwant\n%q", b.String(), want)
	}
	wide := strings.Repeat("x", 40)
	rows := [][]string{{"key", "a", "b", "c", "d"}, {"row1", wide + "1", wide + "2", wide + "3", wide + "4"}}
	b.Reset()
	Table(&b, rows, 1)
	out := b.String()
	parts := strings.Split(out, "\n\n")
	if len(parts) < 2 {
		t.Fatalf("want parts:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if Columns(l) > Width {
			t.Errorf("line of %d columns: %q", Columns(l), l)
		}
	}
	for i := 1; i <= 4; i++ {
		if strings.Count(out, wide+string(rune('0'+i))) != 1 {
			t.Errorf("cell %d printed %d times", i, strings.Count(out, wide+string(rune('0'+i))))
		}
	}
	for _, p := range parts {
		if !strings.HasPrefix(p, "key") {
			t.Errorf("a part without its key column: %q", p)
		}
	}
}
