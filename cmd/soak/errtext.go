package main

import (
	"strconv"
	"strings"
	"unicode"
)

// oneLine escapes the control characters and line separators of s (a flag name or a path
// from the command line may hold a newline or an escape sequence), so that an error is one
// line, and prints as it was typed.
func oneLine(s string) string {
	escape := func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }
	if !strings.ContainsFunc(s, escape) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if escape(r) {
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u2028'
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// joined is err's text on one line: the errors joined in it (errors.Join,
// which separates them with newlines) separated by "; ".
func joined(err error) string {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err.Error()
	}
	var parts []string
	for _, e := range j.Unwrap() {
		if e != nil {
			parts = append(parts, joined(e))
		}
	}
	return strings.Join(parts, "; ")
}
