package binance

// SeqCounts are sequence anomalies of one subscription.
//
// Units of Lost depend on the rule: messages for SeqContiguous (trade and block
// trade ids) and SeqAgg (aggTrade ids, one id per message); book update ids
// for SeqRange (a depth diff carries a range U..u of them, so one lost message
// counts as many ids as it covered); trade ids for SeqKline (ids that no kline
// update received covered). Dup, OutOfOrder and Regress count messages.
type SeqCounts struct {
	Lost       int64 // ids skipped over
	Dup        int64 // message repeated an id (range, closed kline) already seen
	OutOfOrder int64 // message older than one already seen
	Regress    int64 // SeqMonotonic id did not increase
}

// Add returns the sum of c and d.
func (c SeqCounts) Add(d SeqCounts) SeqCounts {
	return SeqCounts{c.Lost + d.Lost, c.Dup + d.Dup, c.OutOfOrder + d.OutOfOrder, c.Regress + d.Regress}
}

// window is how many ids behind the highest one SeqContiguous and SeqAgg
// remember, to tell a late message (counted lost when skipped) from a
// duplicate.
const window = 256

// SeqState is the sequence accounting of one subscription. The zero value is
// ready to use; Observe does not allocate. A SeqState is not safe for
// concurrent use.
type SeqState struct {
	started bool
	last    int64 // highest id (range end, kline L) seen
	first   int64 // SeqRange: U of the message that set last

	// SeqContiguous, SeqAgg: seen[id%window] for ids in (last-window, last].
	seen [window / 64]uint64

	// SeqKline.
	open   int64 // open time of the current kline
	base   int64 // highest L before the current kline; -1 if none is known
	checkF bool  // the current kline's first trade id is still to be checked against base
	closed bool  // the current kline's final update (x) was seen

	counts SeqCounts
}

// Observe accounts one message of a stream with sequence rule rule and returns
// what it added to the counts. A message without sequence fields
// (f.HasSeq false) and rule SeqNone are ignored. The first message after the
// zero value or Reset only sets the baseline.
//
// Rules:
//   - SeqContiguous, SeqAgg (id = f.Last): next id is prev+1. A jump over n ids
//     counts n lost. An id seen before within the last 256 ids is a Dup. An
//     older id not seen before is OutOfOrder, and if it is within 256 ids of the
//     highest it was counted lost when skipped, so Lost goes back down by one
//     (the returned delta then has Lost -1): a swap of two neighbours counts one
//     out-of-order message and nothing lost. The highest id never moves back.
//   - SeqRange (f.First = U, f.Last = u): U = prev u + 1. U > prev u + 1 counts
//     U - prev u - 1 update ids lost. u <= prev u: Dup if U..u equals the
//     previous message's range, else OutOfOrder. A range overlapping the end of
//     the previous one (U <= prev u < u) moves on without a count.
//   - SeqKline (f.KlineOpen, f.First = k.f, f.Last = k.L): updates of one kline
//     (same open time) may repeat while L does not decrease; L decreasing is
//     OutOfOrder; an update after the kline's final one (x true) is a Dup. The
//     first trade id (f >= 0; -1 means no trades yet) seen in a kline must be the
//     highest L of the klines before + 1, else the difference counts lost. An
//     older open time is OutOfOrder.
//   - SeqMonotonic (f.Last): strictly increasing; a non-increase is a Regress.
//     Gaps are by design and never counted.
func (s *SeqState) Observe(rule Seq, f *Fields) (c SeqCounts) {
	if rule == SeqNone || !f.HasSeq {
		return c
	}
	if !s.started {
		s.baseline(rule, f)
		return c
	}
	switch rule {
	case SeqContiguous, SeqAgg:
		c = s.contiguous(f.Last)
	case SeqRange:
		c = s.rangeOf(f.First, f.Last)
	case SeqKline:
		c = s.kline(f)
	case SeqMonotonic:
		if f.Last <= s.last {
			c.Regress = 1
		} else {
			s.last = f.Last
		}
	}
	s.counts = s.counts.Add(c)
	return c
}

func (s *SeqState) baseline(rule Seq, f *Fields) {
	s.started = true
	s.last, s.first = f.Last, f.First
	s.seen = [window / 64]uint64{}
	switch rule {
	case SeqContiguous, SeqAgg:
		s.mark(f.Last)
	case SeqKline:
		s.open, s.base, s.checkF, s.closed = f.KlineOpen, -1, false, f.KlineClosed
	}
}

func (s *SeqState) mark(id int64) { s.seen[uint64(id)%window/64] |= 1 << (uint64(id) % 64) }

func (s *SeqState) marked(id int64) bool {
	return s.seen[uint64(id)%window/64]&(1<<(uint64(id)%64)) != 0
}

func (s *SeqState) contiguous(id int64) (c SeqCounts) {
	switch {
	case id > s.last:
		c.Lost = id - s.last - 1
		// Forget the ids the window slides over. The difference is taken
		// unsigned: it is positive but may not fit an int64.
		if uint64(id)-uint64(s.last) >= window {
			s.seen = [window / 64]uint64{}
		} else {
			for x := s.last + 1; x < id; x++ {
				s.seen[uint64(x)%window/64] &^= 1 << (uint64(x) % 64)
			}
		}
		s.mark(id)
		s.last = id
	case uint64(s.last)-uint64(id) >= window:
		c.OutOfOrder = 1 // too old to know whether it was seen
	case s.marked(id):
		c.Dup = 1
	default:
		c.OutOfOrder = 1
		c.Lost = -1 // counted lost when it was skipped
		s.mark(id)
	}
	return c
}

func (s *SeqState) rangeOf(first, last int64) (c SeqCounts) {
	switch {
	case last <= s.last:
		if first == s.first && last == s.last {
			c.Dup = 1
		} else {
			c.OutOfOrder = 1
		}
		return c
	case first > s.last+1:
		c.Lost = first - s.last - 1
	}
	s.first, s.last = first, last
	return c
}

func (s *SeqState) kline(f *Fields) (c SeqCounts) {
	switch {
	case f.KlineOpen < s.open:
		c.OutOfOrder = 1
		return c
	case f.KlineOpen > s.open:
		s.base = max(s.base, s.last)
		s.open, s.last, s.checkF, s.closed = f.KlineOpen, -1, true, false
	case s.closed:
		c.Dup = 1
		return c
	}
	if f.Last >= 0 && f.Last < s.last {
		c.OutOfOrder = 1
		return c
	}
	if s.checkF && f.First >= 0 {
		s.checkF = false
		if s.base >= 0 {
			switch {
			case f.First > s.base+1:
				c.Lost = f.First - s.base - 1
			case f.First <= s.base:
				c.OutOfOrder = 1 // trade ids reused across klines
			}
		}
	}
	s.last = max(s.last, f.Last)
	s.closed = f.KlineClosed
	return c
}

// Counts returns the cumulative counts.
func (s *SeqState) Counts() SeqCounts { return s.counts }

// Last returns the highest id seen: trade or aggTrade id, depth diff u, kline
// L, bookTicker u or depthN lastUpdateId; 0 before the first message (and for
// a kline stream before any trade).
func (s *SeqState) Last() int64 {
	if !s.started {
		return 0
	}
	return max(s.last, s.base, 0)
}

// Reset makes the next message set a new baseline, so nothing is counted
// between the last message before and the first after. Cumulative counts are
// kept. A caller that wants the messages lost across a reconnect counted
// keeps the state instead.
func (s *SeqState) Reset() {
	counts := s.counts
	*s = SeqState{counts: counts}
}
