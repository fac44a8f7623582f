package worker

import "slices"

// maxGaps is how many id ranges a subscription keeps of what it lost; ids
// lost beyond them are only counted (gapSet.overflow).
const maxGaps = 64

// gapSet is the ids one subscription lost, as coalesced inclusive ranges in
// the order they were found (ascending: ids only move forward). The slot's
// read goroutine writes it and the reporter reads it, under the
// subscription's lock (sub.gmu); it never allocates.
//
// Each range says whether its ids were lost across a reconnect (found at the
// subscription's first message on a new connection) or while a connection
// was up; ranges of the two kinds are never merged.
type gapSet struct {
	r              [maxGaps][2]int64
	across         [maxGaps]bool // r[i] was lost across a reconnect
	n              int
	overflow       int64 // lost ids not in r
	overflowAcross int64 // of them, lost across a reconnect
}

// add records ids first..last as lost, across a reconnect or not.
func (g *gapSet) add(first, last int64, across bool) {
	if last < first {
		return
	}
	if g.n > 0 && g.across[g.n-1] == across && first <= g.r[g.n-1][1]+1 && last >= g.r[g.n-1][0]-1 {
		g.r[g.n-1][0] = min(g.r[g.n-1][0], first)
		g.r[g.n-1][1] = max(g.r[g.n-1][1], last)
		return
	}
	if g.n == maxGaps {
		g.overflow += last - first + 1
		if across {
			g.overflowAcross += last - first + 1
		}
		return
	}
	g.r[g.n], g.across[g.n] = [2]int64{first, last}, across
	g.n++
}

// remove takes id out of the set: it arrived late after it was counted lost.
// An id in no recorded range was counted in overflow, which goes down
// instead (what was lost while connected first). It returns whether the id
// had been counted as lost across a reconnect.
func (g *gapSet) remove(id int64) (across bool) {
	for i := g.n - 1; i >= 0; i-- {
		lo, hi := g.r[i][0], g.r[i][1]
		if id < lo || id > hi {
			continue
		}
		across = g.across[i]
		switch {
		case lo == hi:
			copy(g.r[i:], g.r[i+1:g.n])
			copy(g.across[i:], g.across[i+1:g.n])
			g.n--
		case id == lo:
			g.r[i][0]++
		case id == hi:
			g.r[i][1]--
		case g.n < maxGaps:
			copy(g.r[i+2:g.n+1], g.r[i+1:g.n])
			copy(g.across[i+2:g.n+1], g.across[i+1:g.n])
			g.r[i] = [2]int64{lo, id - 1}
			g.r[i+1], g.across[i+1] = [2]int64{id + 1, hi}, across
			g.n++
		default: // no room to split: keep the lower part, count the upper one
			g.r[i][1] = id - 1
			g.overflow += hi - id
			if across {
				g.overflowAcross += hi - id
			}
		}
		return across
	}
	switch {
	case g.overflow > g.overflowAcross:
		g.overflow--
	case g.overflow > 0:
		g.overflow--
		g.overflowAcross--
		return true
	}
	return false
}

// ranges returns a copy of the recorded ranges and, when any of them was
// lost across a reconnect, which (nil when none was).
func (g *gapSet) ranges() ([][2]int64, []bool) {
	if g.n == 0 {
		return nil, nil
	}
	r := append([][2]int64(nil), g.r[:g.n]...)
	if !slices.Contains(g.across[:g.n], true) {
		return r, nil
	}
	return r, append([]bool(nil), g.across[:g.n]...)
}
