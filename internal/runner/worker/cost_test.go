package worker

import (
	"testing"
	"time"
)

// TestBurner: no cost, no steps (OnMessage then skips the loop); a cost
// below one step is one step; a cost twice as long is twice the steps.
func TestBurner(t *testing.T) {
	if b := newBurner(0); b.steps != 0 {
		t.Errorf("no cost: %d steps", b.steps)
	}
	if b := newBurner(-time.Microsecond); b.steps != 0 {
		t.Errorf("a negative cost: %d steps", b.steps)
	}
	if b := newBurner(time.Nanosecond); b.steps != 1 {
		t.Errorf("1 ns, below a step: %d steps, want 1", b.steps)
	}
	one, two := newBurner(10*time.Microsecond), newBurner(20*time.Microsecond)
	if r := float64(two.steps) / float64(one.steps); one.steps == 0 || r < 1.5 || r > 2.6 {
		t.Errorf("10 µs: %d steps, 20 µs: %d steps: want about twice", one.steps, two.steps)
	}
}

// TestOnMessageWithCostAllocatesNothing: the burn allocates nothing either.
func TestOnMessageWithCostAllocatesNothing(t *testing.T) {
	s := hotSlot(t)
	s.cost = newBurner(time.Microsecond)
	msgs := aggTrades(1000)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		s.OnMessage(true, msgs[i%len(msgs)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("OnMessage with a calibration cost allocates %.2f per message, want 0", allocs)
	}
	if s.burnLast == 0 {
		t.Error("the cost was never burnt")
	}
}
