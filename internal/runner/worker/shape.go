package worker

import (
	"github.com/wssoak/wssoak/internal/binance"
)

// A stream's messages keep one layout: the same keys in the same order, the
// same symbol, numbers of the same shape; only the digits of the event time
// and the ids change. A shape is that layout as learnt from one message: the
// bytes before, between and after the digit runs binance.Scan reads its
// fields from, up to where Scan stops. A message that matches the shape
// byte for byte outside those digit runs is read by comparing the literal
// bytes and parsing the runs, and gives exactly what Scan gives (learn checks
// that on the message it learns from, with every run perturbed): on an
// aggTrade that is a third of the general scan's time. Any message that does
// not match is scanned in full, and the shape learnt anew.

// maxShapeFields is the most digit runs a shape reads (event time, first
// and last id).
const maxShapeFields = 3

// Which field of binance.Fields a digit run of a shape fills (bits: a run
// may fill both ids, as an aggTrade's "a" does).
const (
	fieldE uint8 = 1 << iota
	fieldFirst
	fieldLast
)

// maxShapeDigits bounds a run: 18 digits never overflow an int64.
const maxShapeDigits = 18

// shape is a learnt layout (ok false: none yet, or the stream has none).
type shape struct {
	ok     bool
	n      int                    // digit runs
	lits   [maxShapeFields][]byte // the bytes before each run (lits[0] from the data's start)
	fields [maxShapeFields]uint8
	hasSeq bool   // what Scan said of the learnt message: its HasSeq
	buf    []byte // the literals' bytes
	tmp    []byte // learn's copy of a message
	// wait counts the messages that missed the shape before the next try to
	// learn one; backoff is the wait after a failed try (doubling): a stream
	// whose layout changes with every message (kline) is scanned in full
	// without paying for a try each time.
	wait, backoff int
}

// maxLearnBackoff is the longest wait between two tries to learn a shape.
const maxLearnBackoff = 4096

// read fills f from data when data matches the shape; false when it does
// not (f is then in an unspecified state).
func (s *shape) read(data []byte, f *binance.Fields) bool {
	if !s.ok {
		return false
	}
	*f = binance.Fields{}
	i := 0
	for k := range s.n {
		lit := s.lits[k]
		if len(data)-i < len(lit)+1 || string(data[i:i+len(lit)]) != string(lit) {
			return false
		}
		i += len(lit)
		v, j, ok := digits(data, i)
		if !ok {
			return false
		}
		i = j
		b := s.fields[k]
		if b&fieldE != 0 {
			f.E = v
		}
		if b&fieldFirst != 0 {
			f.First = v
		}
		if b&fieldLast != 0 {
			f.Last = v
		}
	}
	// The run must end where the learnt one did: the byte after it is the
	// one that followed in the learnt message (kept as the last literal's
	// successor, s.lits[n] is not needed: the next byte is checked here).
	if i >= len(data) || data[i] != s.buf[len(s.buf)-1] {
		return false
	}
	f.HasSeq = s.hasSeq
	return true
}

// digits parses the maximal run of ASCII digits at p[i:] as a JSON integer
// would be: 1 to maxShapeDigits digits, no leading zero. It returns the value
// and the index after the run.
func digits(p []byte, i int) (v int64, end int, ok bool) {
	u, end := binance.DigitRun(p, i)
	n := end - i
	if n == 0 || n > maxShapeDigits || n > 1 && p[i] == '0' {
		return 0, end, false
	}
	return int64(u), end, true
}

// scanData fills f from a text message's data of a stream of kind k: by its
// shape when it matches, else by binance.Scan (and then it tries to learn the
// shape, when its wait is over).
func (s *shape) scanData(data []byte, k binance.Kind, f *binance.Fields) bool {
	if s.read(data, f) {
		return true
	}
	if !binance.Scan(data, k, f) {
		return false
	}
	if s.wait > 0 {
		s.wait--
		return true
	}
	if s.learn(data, k, *f) {
		s.backoff = 0
	} else {
		s.backoff = min(max(2*s.backoff, 1), maxLearnBackoff)
		s.wait = s.backoff
	}
	return true
}

// run is a digit run of a message: p[start:end].
type run struct{ start, end int }

// learn learns the shape of data, whose binance.Scan gave want. It reports
// false (and keeps no shape) when the message has none: a field Scan read
// from something other than a plain digit run after a colon, a field that
// is not the event time or an id (a kline's), Scan reading past the last
// run it used, or more runs than a shape holds. It allocates only to grow
// its buffers, as the first message and a longer one do.
func (s *shape) learn(data []byte, k binance.Kind, want binance.Fields) bool {
	s.ok = false
	// Which digit runs after a colon (where a JSON number value starts) Scan
	// reads, and into which field: change a run's last digit, see what changes.
	s.tmp = append(s.tmp[:0], data...)
	p := s.tmp
	var used [maxShapeFields]run
	var fields [maxShapeFields]uint8
	n := 0
	for i := 1; i < len(data); i++ {
		if data[i-1] != ':' || data[i] < '0' || data[i] > '9' {
			continue
		}
		_, end, ok := digits(data, i)
		r := run{i, end}
		i = end
		if !ok {
			continue
		}
		p[end-1] = bump(p[end-1], 1)
		var g binance.Fields
		ok = binance.Scan(p, k, &g)
		p[end-1] = data[end-1]
		if !ok {
			return false
		}
		if g == want {
			continue
		}
		var b uint8
		if g.E != want.E {
			b |= fieldE
		}
		if g.First != want.First {
			b |= fieldFirst
		}
		if g.Last != want.Last {
			b |= fieldLast
		}
		g.E, g.First, g.Last = want.E, want.First, want.Last
		if g != want || n == maxShapeFields {
			return false // another field depends on the run (a kline's), or too many runs
		}
		used[n], fields[n] = r, b
		n++
	}
	if n == 0 {
		return false
	}
	end := used[n-1].end
	if end >= len(data) {
		return false
	}
	// Scan must stop at the last run's end, so that what follows it is not
	// part of the shape: it reads data cut there exactly as the whole.
	var g binance.Fields
	if !binance.Scan(data[:end], k, &g) || g != want {
		return false
	}
	s.buf = append(s.buf[:0], data[:end+1]...) // the literals, and the byte after the last run
	from := 0
	for i, r := range used[:n] {
		s.lits[i] = s.buf[from:r.start:r.start]
		s.fields[i] = fields[i]
		from = r.end
	}
	s.n, s.hasSeq, s.ok = n, want.HasSeq, true
	// Check: with every used run changed, each by another amount, the shape
	// reads what Scan reads.
	for i, r := range used[:n] {
		p[r.end-1] = bump(data[r.end-1], i+1)
	}
	var a, b binance.Fields
	if !binance.Scan(p, k, &a) || !s.read(p, &b) || a != b {
		s.ok = false
	}
	return s.ok
}

// bump is digit d plus by, modulo 10.
func bump(d byte, by int) byte { return '0' + byte((int(d-'0')+by)%10) }
