package transport

import "time"

// SetWriteTimeout shortens the adapters' write deadline for a test and
// returns a function that restores it.
func SetWriteTimeout(d time.Duration) (restore func()) {
	old := writeTimeout.Swap(int64(d))
	return func() { writeTimeout.Store(old) }
}
