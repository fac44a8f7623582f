package firehose

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// MaxSized bounds the payload size of a sized scenario.
const MaxSized = 16 << 20

// sizedPrefix and sizedSuffix frame a sized scenario's name: depth-9000B.
const sizedPrefix, sizedSuffix = "depth-", "B"

// SizedName is the name of the sized scenario of size bytes.
func SizedName(size int) string { return sizedPrefix + strconv.Itoa(size) + sizedSuffix }

func sizedBytes(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, sizedPrefix)
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, sizedSuffix); !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// diffFit is the mean payload of a depth diff of btcusdt (combined form) as
// a function of its levels a side: base + perLevel × levels.
var diffFit = sync.OnceValues(func() (float64, float64) {
	mean := func(levels int) float64 {
		sc := Scenario{Name: "fit", Streams: []string{"btcusdt@depth"}, Target: 9318, Levels: levels}
		b, err := Prepare(sc, 16, 1, true)
		if err != nil {
			panic(err) // a fixed scenario: cannot fail
		}
		return float64(b.PayloadBytes) / 16
	}
	m1, m256 := mean(1), mean(256)
	per := (m256 - m1) / 255
	return m1 - per, per
})

// SizedMin is the smallest payload a sized scenario can aim at: a depth diff
// of one level a side.
func SizedMin() int {
	base, per := diffFit()
	return int(math.Ceil(base + per))
}

// Sized returns a scenario of depth diffs of btcusdt whose mean payload
// (combined form) is about size bytes: as many levels a side as it takes.
// Its name is SizedName(size).
func Sized(size int) (Scenario, error) {
	if lo := SizedMin(); size < lo || size > MaxSized {
		return Scenario{}, fmt.Errorf("payload size %d bytes: want %d (a depth diff of one level a side) to %d (16 MiB)", size, lo, MaxSized)
	}
	base, per := diffFit()
	levels := max(1, int(math.Round((float64(size)-base)/per)))
	return Scenario{Name: SizedName(size), Streams: []string{"btcusdt@depth"}, Target: size, Levels: levels,
		About: fmt.Sprintf("diff depth of one market, %d levels a side, ~%d bytes", levels, size)}, nil
}
