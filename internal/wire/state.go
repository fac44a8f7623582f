package wire

// RunState is where a run is in its life, as the live view shows it
// (soak_run_state): the controller tells each change, the end's state last.
type RunState string

// The states of a run, in the order a run goes through them; it ends in
// one of the last three.
const (
	StateWarmup      RunState = "warmup"      // recorded; the workers connect before the window starts
	StateRunning     RunState = "running"     // the measured window
	StateDraining    RunState = "draining"    // the window ended or a signal came: the workers are stopping
	StateDone        RunState = "done"        // ended at its end, recorded as done
	StateInterrupted RunState = "interrupted" // stopped by a signal before its end
	StateFailed      RunState = "failed"      // ended by an error (see the run's status)
)

// RunStates are the states in order.
var RunStates = []RunState{StateWarmup, StateRunning, StateDraining, StateDone, StateInterrupted, StateFailed}
