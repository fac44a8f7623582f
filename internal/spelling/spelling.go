// Package spelling finds the word meant by a misspelt one: a profile key,
// a flag, a subcommand, a stream name.
package spelling

import "strings"

// Nearest is the word of words closest to word by edit distance (case,
// '-' and '_' alike), at most 2 edits and fewer than half the word's
// length; "" when none is that close.
func Nearest(word string, words []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestD := "", 3
	for _, w := range words {
		if dist := distance(norm(word), norm(w)); dist < bestD && dist*2 < len(w) {
			best, bestD = w, dist
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, byte by byte.
func distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
