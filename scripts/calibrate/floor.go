package main

import (
	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
)

// floor is the least difference of m worth a call for the pair r: the
// catalogue's practical floor, or a growth rate's over the span it rests
// on — the one the ranking applies.
func floor(m *measure.Measure, r rankRow) float64 {
	return ranking.Floor(m, ranking.Pair{N: r.n, Span: r.span})
}
