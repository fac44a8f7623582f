//go:build !linux

package wire

// MonoNow: no machine-wide monotonic clock known here; plans fall back to
// the wall-clock Start.
func MonoNow() (int64, bool) { return 0, false }
