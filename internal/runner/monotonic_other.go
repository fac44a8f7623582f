//go:build !linux

package runner

// monoNow: no machine-wide monotonic clock known here; plans fall back to
// the wall-clock Start.
func monoNow() (int64, bool) { return 0, false }
