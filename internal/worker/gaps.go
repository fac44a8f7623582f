package worker

// maxGaps is how many id ranges a subscription keeps of what it lost; ids
// lost beyond them are only counted (gapSet.overflow).
const maxGaps = 64

// gapSet is the ids one subscription lost, as coalesced inclusive ranges in
// the order they were found (ascending: ids only move forward). It is owned
// by the slot's read goroutine and read after it ended; it never allocates.
type gapSet struct {
	r        [maxGaps][2]int64
	n        int
	overflow int64 // lost ids not in r
}

// add records ids first..last as lost.
func (g *gapSet) add(first, last int64) {
	if last < first {
		return
	}
	if g.n > 0 && first <= g.r[g.n-1][1]+1 && last >= g.r[g.n-1][0]-1 {
		g.r[g.n-1][0] = min(g.r[g.n-1][0], first)
		g.r[g.n-1][1] = max(g.r[g.n-1][1], last)
		return
	}
	if g.n == maxGaps {
		g.overflow += last - first + 1
		return
	}
	g.r[g.n] = [2]int64{first, last}
	g.n++
}

// remove takes id out of the set: it arrived late after it was counted lost.
// An id in no recorded range was counted in overflow, which goes down instead.
func (g *gapSet) remove(id int64) {
	for i := g.n - 1; i >= 0; i-- {
		lo, hi := g.r[i][0], g.r[i][1]
		if id < lo || id > hi {
			continue
		}
		switch {
		case lo == hi:
			copy(g.r[i:], g.r[i+1:g.n])
			g.n--
		case id == lo:
			g.r[i][0]++
		case id == hi:
			g.r[i][1]--
		case g.n < maxGaps:
			copy(g.r[i+2:g.n+1], g.r[i+1:g.n])
			g.r[i] = [2]int64{lo, id - 1}
			g.r[i+1] = [2]int64{id + 1, hi}
			g.n++
		default: // no room to split: keep the lower part, count the upper one
			g.r[i][1] = id - 1
			g.overflow += hi - id
		}
		return
	}
	if g.overflow > 0 {
		g.overflow--
	}
}

// ranges returns a copy of the recorded ranges.
func (g *gapSet) ranges() [][2]int64 {
	if g.n == 0 {
		return nil
	}
	return append([][2]int64(nil), g.r[:g.n]...)
}
