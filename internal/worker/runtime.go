package worker

import (
	"math"
	"runtime"
	"runtime/debug"

	"github.com/wssoak/wssoak/internal/wire"
)

// applyRuntime sets the Go runtime the plan asks for (zero fields keep Go's
// default) and returns what the process then runs with, read back from the
// runtime: the same for every library of a run, and recorded with it.
func applyRuntime(r wire.Runtime) wire.Runtime {
	if r.GOMAXPROCS > 0 {
		runtime.GOMAXPROCS(r.GOMAXPROCS)
	}
	if r.GOGC != 0 {
		debug.SetGCPercent(r.GOGC)
	}
	if r.GOMEMLIMIT > 0 {
		debug.SetMemoryLimit(r.GOMEMLIMIT)
	}
	return currentRuntime()
}

// currentRuntime reads the runtime's settings without changing them.
func currentRuntime() wire.Runtime {
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	limit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	if limit == math.MaxInt64 {
		limit = 0 // none
	}
	return wire.Runtime{GOMAXPROCS: runtime.GOMAXPROCS(0), GOGC: gc, GOMEMLIMIT: limit}
}
