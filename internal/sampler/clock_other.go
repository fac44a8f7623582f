//go:build !linux

package sampler

import (
	"errors"
	"runtime"
)

// ReadClock is only available on Linux (adjtimex(2)).
func ReadClock() (ClockSync, error) {
	return ClockSync{}, errors.New("read clock sync state: not available on " + runtime.GOOS)
}
