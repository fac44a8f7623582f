package wire

import "golang.org/x/sys/unix"

// MonoNow reads CLOCK_MONOTONIC, which every process on the machine shares,
// so an instant on it means the same in the controller and in its workers.
func MonoNow() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
