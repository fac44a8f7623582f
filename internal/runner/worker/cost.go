package worker

import (
	"runtime"
	"slices"
	"time"
)

// burner burns a known CPU time on every message of a column with a
// calibration_cost (wire.Settings.CalibrationCost), so that the tool can be
// shown a difference it must find. It runs a busy loop of a number of steps
// measured at the worker's start to take that long on this CPU: the cost is
// CPU time (a sleep would cost none), the same work for every message, and
// it does not lengthen when the thread waits for a core (a loop on the
// clock would burn less CPU then).
type burner struct{ steps uint64 } // 0: no cost

// Calibration: the median of calibrationRounds timings of calibrationSteps
// steps each (about 5 ms apiece), after one round to warm the core up.
const (
	calibrationRounds = 9
	calibrationSteps  = 1 << 22
)

// newBurner returns a burner of cost d a call, calibrated on this thread's
// CPU clock; none for d ≤ 0.
func newBurner(d time.Duration) burner {
	if d <= 0 {
		return burner{}
	}
	return burner{steps: max(uint64(float64(d)/stepTime()), 1)}
}

// burn runs the loop from x and returns where it ended; the caller keeps the
// value, so the loop is work the compiler cannot leave out.
func (b burner) burn(x uint64) uint64 { return spin(x, b.steps) }

// spin is n steps of a linear congruential generator: one multiply and one
// add, each waiting for the last, so the time a step takes does not depend
// on how well the CPU overlaps independent work.
//
//go:noinline
func spin(x, n uint64) uint64 {
	for ; n > 0; n-- {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// stepTime is the CPU time of one step of spin, in nanoseconds.
func stepTime() float64 {
	runtime.LockOSThread() // the thread's CPU clock must be this goroutine's
	defer runtime.UnlockOSThread()
	x := spin(1, calibrationSteps)
	per := make([]float64, calibrationRounds)
	for i := range per {
		t0 := threadCPU()
		x = spin(x, calibrationSteps)
		per[i] = float64(threadCPU()-t0) / calibrationSteps
	}
	_ = x // spin is never inlined: each call runs its loop whatever becomes of x
	slices.Sort(per)
	return max(per[len(per)/2], 0.01) // a clock that did not move: a step is at least 0.01 ns
}
