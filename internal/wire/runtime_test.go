package wire

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestRuntimeApply: Apply sets what it is given, keeps Go's default for a
// zero field, and reads back what the runtime then has.
func TestRuntimeApply(t *testing.T) {
	procs, gc, limit := runtime.GOMAXPROCS(0), debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(gc)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs); debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })

	got := Runtime{GOMAXPROCS: 1, GOGC: 50, GOMEMLIMIT: 256 << 20}.Apply()
	if want := (Runtime{GOMAXPROCS: 1, GOGC: 50, GOMEMLIMIT: 256 << 20}); got != want {
		t.Errorf("Apply = %+v, want %+v", got, want)
	}
	if runtime.GOMAXPROCS(0) != 1 || debug.SetMemoryLimit(-1) != 256<<20 {
		t.Error("the runtime does not have what Apply returned")
	}
	if s := got.String(); s != "GOMAXPROCS=1 GOGC=50 GOMEMLIMIT=268435456B" {
		t.Errorf("String = %q", s)
	}
	if again := (Runtime{}).Apply(); again != got {
		t.Errorf("a zero Runtime changed the runtime: %+v, was %+v", again, got)
	}
	if s := (Runtime{GOMAXPROCS: 2, GOGC: -1}).String(); s != "GOMAXPROCS=2 GOGC=off GOMEMLIMIT=off" {
		t.Errorf("String = %q", s)
	}
}
