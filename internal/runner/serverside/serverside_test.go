package serverside

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/runner/controller"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestEvents: a load's event record becomes events of the run as the load
// named them (no kind of its own here); a reconnect is preceded by one
// disconnected event per client, abnormal closure for a reset, the server's
// close code for an oversize message.
func TestEvents(t *testing.T) {
	at := time.Now()
	tests := []struct {
		rec   chat.SoakRecord
		kinds []wire.EventKind
		codes []int
	}{
		{chat.SoakRecord{Kind: wire.EventFault, Fault: wire.FaultSlowReader, Count: 1, At: at}, []wire.EventKind{wire.EventFault}, []int{1}},
		{chat.SoakRecord{Kind: wire.EventDropped, Fault: wire.FaultHalfOpen, Count: 2, At: at}, []wire.EventKind{wire.EventDropped}, []int{2}},
		{chat.SoakRecord{Kind: wire.EventLoadError, Detail: "boom", At: at}, []wire.EventKind{wire.EventLoadError}, []int{0}},
		{chat.SoakRecord{Kind: wire.EventReconnect, Count: 2, DurMs: 12, At: at},
			[]wire.EventKind{wire.EventDisconnected, wire.EventDisconnected, wire.EventReconnect}, []int{1006, 1006, 2}},
		{chat.SoakRecord{Kind: wire.EventReconnect, Count: 1, Codes: []int{1009}, At: at},
			[]wire.EventKind{wire.EventDisconnected, wire.EventReconnect}, []int{1009, 1}},
	}
	for _, tc := range tests {
		evs := loadEvents("gws", tc.rec, 7.5)
		if len(evs) != len(tc.kinds) {
			t.Errorf("%s: %d events %+v, want %d", tc.rec.Kind, len(evs), evs, len(tc.kinds))
			continue
		}
		for i, e := range evs {
			if e.Kind != tc.kinds[i] || e.Code != tc.codes[i] || e.Lib != "gws" || e.Slot != -1 || !e.TS.Equal(at) || e.Sec != 7.5 {
				t.Errorf("%s: event %d %+v; want %s code %d", tc.rec.Kind, i, e, tc.kinds[i], tc.codes[i])
			}
		}
		last := evs[len(evs)-1]
		if last.Fault != tc.rec.Fault || last.DurMs != tc.rec.DurMs || last.Detail != tc.rec.Detail {
			t.Errorf("%s: %+v lost the record's fault, duration or detail", tc.rec.Kind, last)
		}
	}
}

// TestTruthEvent: a server's end account is exact (code 0) only when the
// load's truth holds; no account, a stopped load or a count that differs is
// code 1 saying why.
func TestTruthEvent(t *testing.T) {
	exact := &chat.SoakResult{Deliveries: 90, Resets: 2, Reconnects: 2, SlowInjected: 1, SlowDropped: 1,
		Server: &chat.Stats{Deliveries: 100, DroppedDeliveries: 10, Drops: 1}}
	short := *exact
	short.Deliveries = 89
	skipped := *exact
	skipped.SkippedTicks = 3
	tests := []struct {
		end  *chat.SoakResult
		code int
		want string
	}{
		{exact, 0, "exact: clients read 90 deliveries, the server wrote 100 (less 10 to the 1 clients it dropped"},
		{&skipped, 0, "; the load fell behind and skipped 3 ticks of 100ms"},
		{&short, 1, "clients read 89 deliveries, the server wrote 90"},
		{nil, 1, "no account from the load client"},
		{&chat.SoakResult{Err: "dial: refused"}, 1, "the load stopped: dial: refused"},
	}
	for _, tc := range tests {
		ev := truthEvent(tc.end)
		if ev.Kind != wire.EventTruth || ev.Code != tc.code || !strings.Contains(ev.Detail, tc.want) {
			t.Errorf("%+v: %s code %d %q; want truth, code %d, %q", tc.end, ev.Kind, ev.Code, ev.Detail, tc.code, tc.want)
		}
	}
}

// TestRunRefusesClientProfile: the server-side soak runs side: server
// profiles only, and the client soak's controller refuses them.
func TestRunRefusesClientProfile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Run(context.Background(), controller.Options{Profile: profile.Default(), OutDir: dir}); err == nil {
		t.Error("serverside.Run took a side: client profile")
	}
	p := profile.Default()
	p.Side = profile.SideServer
	if _, err := controller.Run(context.Background(), controller.Options{Profile: p, OutDir: dir}); err == nil || !strings.Contains(err.Error(), "serverside") {
		t.Errorf("controller.Run of a side: server profile: %v; want it sent to package serverside", err)
	}
}
