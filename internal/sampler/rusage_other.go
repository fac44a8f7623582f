//go:build !unix

package sampler

// Rusage is not available on this system and returns zeros.
func Rusage() (userSec, sysSec float64, maxRSSBytes int64) { return 0, 0, 0 }
