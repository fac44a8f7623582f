//go:build unix

package sampler

import (
	"runtime"
	"syscall"
)

// Rusage returns the CPU seconds and peak resident set of the calling
// process, from getrusage(RUSAGE_SELF). It returns zeros if the call fails.
func Rusage() (userSec, sysSec float64, maxRSSBytes int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	maxRSS := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		maxRSS *= 1024 // kilobytes elsewhere
	}
	return tv(ru.Utime), tv(ru.Stime), maxRSS
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
