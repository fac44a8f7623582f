// Package unit writes the numbers a reader sees in soak's tables, pages and
// comparisons: counts and rates with a k/M/G prefix (1.23M, 812k), bytes in
// decimal units (kB, MB), durations (µs, ms, s), percentages and integers
// with thousands separators. Every renderer formats through it, so the same
// number reads the same everywhere.
//
// A Scale is a ladder of steps in the manner of benchunit (golang.org/x/perf):
// a value is written in the first step it reaches, divided by that step's
// factor, with a fixed number of decimals (benchunit.Scaler) or of
// significant digits. Unlike benchunit.Scale, which picks the digits itself,
// each scale here fixes them, so that a table's column keeps the figures it
// has always had.
package unit

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"
)

// NotMeasured is what a value that was not measured (NaN) is written as.
const NotMeasured = "-"

// Step is one rung of a Scale: values from From up are divided by Factor
// and written with Prec decimals (Sig: Prec significant digits, trailing
// zeros dropped, as fmt's %g), followed by Prefix, which holds the unit
// prefix and whatever unit and space go with it (" kB", "k", " ms").
type Step struct {
	From float64
	benchunit.Scaler
	Sig bool
}

// Scale is a ladder of steps, the largest first; the last one's From is
// the floor: smaller values are written in it too.
type Scale []Step

// Format writes v in the first step it reaches.
func (s Scale) Format(v float64) string {
	st := s[len(s)-1]
	for _, x := range s {
		if v >= x.From {
			st = x
			break
		}
	}
	if !st.Sig {
		return st.Scaler.Format(v)
	}
	return strconv.FormatFloat(v/st.Factor, 'g', st.Prec, 64) + st.Prefix
}

func step(from float64, prec int, factor float64, prefix string) Step {
	return Step{From: from, Scaler: benchunit.Scaler{Prec: prec, Factor: factor, Prefix: prefix}}
}

func sig(from float64, digits int, factor float64, prefix string) Step {
	s := step(from, digits, factor, prefix)
	s.Sig = true
	return s
}

var (
	rate   = Scale{step(1e6, 2, 1e6, "M"), step(1e3, 0, 1e3, "k"), step(0, 0, 1, "")}
	rate3  = Scale{sig(999.5e3, 3, 1e6, "M"), sig(999.5, 3, 1e3, "k"), sig(0, 3, 1, "")}
	figure = Scale{step(1e6, 2, 1e6, "M"), step(1e4, 0, 1e3, "k"), step(100, 0, 1, ""), sig(0, 3, 1, "")}
	count  = Scale{step(1e9, 1, 1e9, " G"), step(1e6, 1, 1e6, " M"), step(1e4, 1, 1e3, " k"), step(0, 0, 1, "")}
	bytes  = Scale{step(1e9, 1, 1e9, " GB"), step(1e6, 1, 1e6, " MB"), step(1e3, 1, 1e3, " kB"), step(0, 0, 1, " B")}
	size   = Scale{step(1e6, 2, 1e6, " MB"), step(0, 1, 1e3, " kB")}
	millis = Scale{step(1000, 1, 1000, " s"), step(0, 0, 1, " ms")}
	micros = Scale{step(1e4, 0, 1e3, " ms"), step(1e3, 1, 1e3, " ms"), step(0, 0, 1, " µs")}
)

// Rate is a rate or a count of things, short: 1.23M, 812k, 950.
func Rate(v float64) string { return rate.Format(v) }

// Rate3 is a rate with three significant digits: 2.64k, 190k, 1.23M.
func Rate3(v float64) string { return rate3.Format(v) }

// Figure is a value of any unit, short: 1.23M, 523k, 8750, 364, 2.58; "-"
// when not measured.
func Figure(v float64) string {
	if math.IsNaN(v) {
		return NotMeasured
	}
	return figure.Format(v)
}

// Count is a number of things, short with a spaced prefix: 15.0 k, 1.2 M,
// 3.4 G; whole below ten thousand.
func Count(n float64) string { return count.Format(n) }

// Bytes is a number of bytes in decimal units: 950 B, 1.5 kB, 49.9 GB.
func Bytes(b float64) string { return bytes.Format(b) }

// Size is a message size: kB with one decimal, MB with two from a
// megabyte up (2.0 kB, 632.5 kB, 2.00 MB).
func Size(b float64) string { return size.Format(b) }

// MB is a number of bytes in MB with one decimal, without the unit (the
// caller writes it once for several): 62.4.
func MB(b float64) string { return strconv.FormatFloat(b/1e6, 'f', 1, 64) }

// Millis is a duration given in milliseconds: 350 ms, 2.0 s.
func Millis(ms float64) string { return millis.Format(ms) }

// Micros is a duration given in microseconds: 950 µs, 1.5 ms, 12 ms.
func Micros(us float64) string { return micros.Format(us) }

// Num is f rounded to an integer with thousands separators: 1,571.
func Num(f float64) string { return group(strconv.FormatFloat(f, 'f', 0, 64)) }

// Signed is d rounded to an integer with its sign and thousands
// separators: +1,571, -20, +0.
func Signed(d float64) string {
	s := "+"
	if math.Round(d) < 0 {
		s = "-"
	}
	return s + group(strconv.FormatFloat(math.Abs(d), 'f', 0, 64))
}

// group puts a comma between the thousands of the digits s (a leading
// minus sign kept in front).
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
