package main

import "github.com/wssoak/wssoak/internal/measure"

// floor is the least difference of m worth a call: the catalogue's
// practical floor, the one the ranking applies.
func floor(m *measure.Measure) float64 { return m.Rank.Floor }
