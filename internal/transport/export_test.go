package transport

import "time"

// SetWriteTimeout shortens the adapters' write deadline for a test and
// returns a function that restores it.
func SetWriteTimeout(d time.Duration) (restore func()) {
	old := writeTimeout.Swap(int64(d))
	return func() { writeTimeout.Store(old) }
}

// StartNbio starts the process's nbio event loop of the default read
// buffer, which lives as long as the process: a test that counts
// goroutines starts it first.
func StartNbio() error {
	_, err := nbioEngine(defaultReadBufferSize)
	return err
}
