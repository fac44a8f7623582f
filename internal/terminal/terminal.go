// Package terminal is what fits a terminal: the width every line soak
// prints keeps within (120 columns: what a terminal shows without wrapping
// a line, and what soak's tables are laid out for), a string's width in
// columns, and lines cut or folded to it. A rune takes one column: soak
// prints no wide characters.
package terminal

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Width is the most columns a line soak prints takes.
const Width = 120

// Columns is the columns s takes on a terminal: one a rune.
func Columns(s string) int { return utf8.RuneCountInString(s) }

// Cut cuts s to n columns, its last one "…" when cut.
func Cut(s string, n int) string {
	if Columns(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Fold breaks line on spaces into lines of at most Width columns, the ones
// after the first indented by indent; the line's own indent is kept, a
// separator "·" never begins a line, and a word wider than a line is cut.
func Fold(line, indent string) []string {
	var out []string
	rest := strings.TrimLeft(line, " ")
	lead := line[:len(line)-len(rest)]
	cur := ""
	for _, word := range strings.Split(rest, " ") {
		switch {
		case cur == "":
			cur = lead + word
		case Columns(cur)+1+Columns(word) <= Width:
			cur += " " + word
		case word == "·" && strings.LastIndex(cur, " ") > len(indent):
			// The word before the separator goes along with it.
			i := strings.LastIndex(cur, " ")
			out = append(out, Cut(cur[:i], Width))
			cur = indent + cur[i+1:] + " " + word
		default:
			out = append(out, Cut(cur, Width))
			cur = indent + word
		}
	}
	return append(out, Cut(cur, Width))
}

// Println writes line folded (Fold), each line after the first indented
// by two columns.
func Println(w io.Writer, line string) {
	for _, l := range Fold(line, "  ") {
		fmt.Fprintln(w, l)
	}
}

// Trimmed writes s's lines without their trailing spaces (what a
// tabwriter pads the last cell of a row with).
func Trimmed(w io.Writer, s string) {
	for line := range strings.Lines(s) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}

// Table writes rows (the first the header) as aligned columns two spaces
// apart, within Width: when they do not fit, in parts of as many columns
// as fit, each part repeating the first keys columns (what names a row),
// a blank line between parts. A column that fits no part alone is cut.
func Table(w io.Writer, rows [][]string, keys int) {
	if len(rows) == 0 {
		return
	}
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], Columns(c))
		}
	}
	keys = min(keys, n)
	keyW := 0
	for _, wd := range widths[:keys] {
		keyW += wd + 2
	}
	for from, part := keys, 0; from < n || part == 0; part++ {
		to, used := from, keyW
		for to < n && (to == from || used+widths[to] <= Width) {
			used += widths[to] + 2
			to++
		}
		if part > 0 {
			fmt.Fprintln(w)
		}
		cols := append(seq(0, keys), seq(from, to)...)
		for _, r := range rows {
			var b strings.Builder
			for k, i := range cols {
				c := ""
				if i < len(r) {
					c = r[i]
				}
				if k > 0 {
					b.WriteString("  ")
				}
				cw := min(widths[i], Width-keyW)
				c = Cut(c, cw)
				b.WriteString(c)
				if k < len(cols)-1 {
					b.WriteString(strings.Repeat(" ", cw-Columns(c)))
				}
			}
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
		from = to
	}
}

// seq is from, from+1, …, to-1.
func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
