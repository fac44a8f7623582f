package wire

import (
	"math"
	"runtime"
	"runtime/debug"
)

// Apply sets the Go runtime of this process as r asks (zero fields keep Go's
// default) and returns what the process then runs with, read back from the
// runtime. A soak worker and a bench client call it once at their start, so
// every library of a run is measured with the same runtime.
func (r Runtime) Apply() Runtime {
	if r.GOMAXPROCS > 0 {
		runtime.GOMAXPROCS(r.GOMAXPROCS)
	}
	if r.GOGC != 0 {
		debug.SetGCPercent(r.GOGC)
	}
	if r.GOMEMLIMIT > 0 {
		debug.SetMemoryLimit(r.GOMEMLIMIT)
	}
	return CurrentRuntime()
}

// CurrentRuntime reads this process's runtime settings without changing them.
func CurrentRuntime() Runtime {
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	limit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	if limit == math.MaxInt64 {
		limit = 0 // none
	}
	return Runtime{GOMAXPROCS: runtime.GOMAXPROCS(0), GOGC: gc, GOMEMLIMIT: limit}
}
