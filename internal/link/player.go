package link

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// step is one change of the schedule: a fault applied, or lifted.
type step struct {
	at   time.Duration // from the window's start
	lift bool
	f    wire.Fault
	seq  int // list order, for steps at one instant
}

// schedule is the steps of the network faults of fs inside a window of
// length window: each firing (At, At+Every, … before the window's end) is
// applied at its instant and, when timed, lifted For later (at the latest at
// the window's end). Steps at one instant run lifts first, then in list
// order, so that a fault that ends as another begins does not cut it short.
func schedule(fs []wire.ScheduledFault, window time.Duration) []step {
	var out []step
	for i, sf := range fs {
		if !sf.Kind.OnNetwork() {
			continue
		}
		for at := sf.At; at < window; at += sf.Every {
			out = append(out, step{at: at, f: sf.Fault, seq: i})
			if sf.For > 0 && sf.Kind != wire.FaultRST {
				out = append(out, step{at: min(at+sf.For, window), lift: true, f: sf.Fault, seq: i})
			}
			if sf.Every <= 0 {
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b step) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		if a.lift != b.lift {
			if a.lift {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return out
}

// Play plays the network faults of fs on the link, each at epoch (the
// window's start on this process's monotonic clock) + its instant, until the
// window (of length window) ends or ctx does; steps already past when Play
// starts (a resumed run) are left out, the lifts of faults never applied
// with them. It tells played about each fault applied, and about every
// error (a fault the kernel refused is reported and the schedule goes on).
// At the end every fault still in force is lifted.
func (l *Link) Play(ctx context.Context, fs []wire.ScheduledFault, epoch time.Time, window time.Duration,
	played func(Played, error)) {
	type held struct {
		f wire.Fault
		n int // firings applied and not lifted
	}
	inForce := map[int]*held{} // by index in fs
	defer func() {
		for _, h := range inForce {
			for ; h.n > 0; h.n-- {
				_ = l.Lift(h.f)
			}
		}
	}()
	skip := time.Since(epoch)
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for _, st := range schedule(fs, window) {
		if st.at < skip {
			continue
		}
		t.Reset(time.Until(epoch.Add(st.at)))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h := inForce[st.seq]
		if st.lift {
			if h == nil || h.n == 0 {
				continue
			}
			h.n--
			if err := l.Lift(st.f); err != nil {
				played(Played{Fault: st.f, At: time.Now()}, err)
			}
			continue
		}
		p, err := l.Apply(st.f)
		if p.At.IsZero() {
			p.At = time.Now()
		}
		if err == nil && st.f.For > 0 && st.f.Kind != wire.FaultRST {
			if h == nil {
				h = &held{f: st.f}
				inForce[st.seq] = h
			}
			h.n++
		}
		played(p, err)
	}
}
