package worker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestAccountsSentWhenChanged: the controller must hold every account to
// the second (a resume continues from its last recorded second), so a subs
// frame comes in the second a subscription's loss account or a slot's dial
// account changed: with the changed subscriptions only, each with its lost
// ranges, and the slots' accounts; a second with no change sends none (the
// full totals come every SubsEvery seconds, here never).
func TestAccountsSentWhenChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("drives real connections")
	}
	tr, err := transport.Lookup("gorilla")
	if err != nil {
		t.Fatal(err)
	}
	srv := listenReplay(t, replay.Config{Replay: wire.Replay{Seed: 1, Start: time.Now().Add(time.Hour), Symbols: []string{"btcusdt"}},
		MaxControlPerSec: 1000})
	plan := localPlan("acct", tr.Name(), srv.URL())
	plan.StallMin, plan.SubsEvery = time.Minute, 1000
	plan.Slots = []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade", "ethusdt@trade"}}}
	var (
		mu     sync.Mutex
		frames []wire.Frame // subs frames
		secs   int
	)
	tw := newTestWorker(t, plan, tr, func(f *wire.Frame) {
		mu.Lock()
		defer mu.Unlock()
		switch f.Type {
		case wire.FrameSubs:
			frames = append(frames, *f)
		case wire.FrameSec:
			secs++
		}
	})
	tw.start()
	defer tw.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// subs waits for the first subs frame after the n-th one and returns it.
	subs := func(n int, what string) wire.Frame {
		t.Helper()
		var f wire.Frame
		if err := waitFor(5*time.Second, what, func() bool {
			mu.Lock()
			defer mu.Unlock()
			if len(frames) > n {
				f = frames[n]
				return true
			}
			return false
		}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	c, err := srv.WaitConn(ctx, tr.Name()+"/0/0")
	if err != nil {
		t.Fatal(err)
	}
	f := subs(0, "the first dial's account")
	if len(f.Subs) != 0 || !slices.EqualFunc(f.Slots, []wire.SlotStat{{Slot: 0, Group: "g", Dials: 1}}, sameAccount) {
		t.Fatalf("after the first dial: subs %+v slots %+v; want no subscription and the slot's one dial", f.Subs, f.Slots)
	}
	for _, id := range []int64{1, 2, 3, 8, 9} { // 4..7 lost
		if err := c.SendText(trade(id, "")); err != nil {
			t.Fatal(err)
		}
	}
	f = subs(1, "the loss")
	if len(f.Slots) != 0 || len(f.Subs) != 1 {
		t.Fatalf("after the loss: subs %+v slots %+v; want btcusdt@trade alone", f.Subs, f.Slots)
	}
	if s := f.Subs[0]; s.Stream != "btcusdt@trade" || s.Lost != 4 || fmt.Sprint(s.Gaps) != "[[4 7]]" || s.Msgs != 5 {
		t.Fatalf("after the loss: %+v; want btcusdt@trade, 5 messages, ids 4–7 lost", s)
	}
	// Seconds without a change send no subs frame.
	mu.Lock()
	before, sec0 := len(frames), secs
	mu.Unlock()
	if err := waitFor(5*time.Second, "two more seconds", func() bool { mu.Lock(); defer mu.Unlock(); return secs >= sec0+2 }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(frames) != before {
		t.Errorf("%d subs frames in seconds without a change: %+v", len(frames)-before, frames[before:])
	}
	mu.Unlock()
	if err := c.Close(1001, "going away"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitConn(ctx, tr.Name()+"/0/1"); err != nil {
		t.Fatal(err)
	}
	for i := before; ; i++ {
		f = subs(i, "the redial's account")
		if f.Slots != nil {
			break
		}
	}
	if !slices.EqualFunc(f.Slots, []wire.SlotStat{{Slot: 0, Group: "g", Dials: 2}}, sameAccount) {
		t.Fatalf("after the redial: slots %+v; want two dials", f.Slots)
	}
}

func sameAccount(a, b wire.SlotStat) bool {
	return a.Slot == b.Slot && a.Group == b.Group && a.Dials == b.Dials && a.DialFails == b.DialFails && len(a.Statuses) == len(b.Statuses)
}
