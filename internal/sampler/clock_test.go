//go:build linux

package sampler

import (
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// ntpPhaseLimit is the kernel's cap on the maximum error (NTP_PHASE_LIMIT,
// 16 s): while nobody syncs the clock, maxerror grows to it and the kernel
// sets STA_UNSYNC.
const ntpPhaseLimit = 16_000_000

// TestReadClock checks the reading against a raw adjtimex(2) taken around it
// (the same fields, not swapped or scaled) and against the kernel's own
// rules: STA_UNSYNC makes the state TIME_ERROR, the maximum error never
// exceeds 16 s, errors are not negative. It logs what this machine reports.
func TestReadClock(t *testing.T) {
	var before, after unix.Timex
	s0, err := unix.Adjtimex(&before)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadClock()
	if err != nil {
		t.Fatal(err)
	}
	s1, err := unix.Adjtimex(&after)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clock: %+v (TIME_ERROR=%d, STA_UNSYNC=%#x)", c, unix.TIME_ERROR, unix.STA_UNSYNC)
	if c.State != s0 && c.State != s1 || c.Status != int(before.Status) && c.Status != int(after.Status) {
		t.Errorf("state %d status %#x, raw readings %d %#x and %d %#x", c.State, c.Status, s0, before.Status, s1, after.Status)
	}
	// maxerror grows by 500 µs per second while unsynchronised: a few ms of slack.
	within := func(v int64, a, b int64) bool { return v >= min(a, b)-1000 && v <= max(a, b)+1000 }
	if !within(c.EstErrorUs, int64(before.Esterror), int64(after.Esterror)) || !within(c.MaxErrorUs, int64(before.Maxerror), int64(after.Maxerror)) {
		t.Errorf("esterror %d maxerror %d µs, raw %d/%d and %d/%d", c.EstErrorUs, c.MaxErrorUs,
			before.Esterror, before.Maxerror, after.Esterror, after.Maxerror)
	}
	if c.Status&unix.STA_UNSYNC != 0 && c.State != unix.TIME_ERROR {
		t.Errorf("STA_UNSYNC set but state %d, want TIME_ERROR", c.State)
	}
	if want := c.State != unix.TIME_ERROR && c.Status&unix.STA_UNSYNC == 0; c.Synced != want {
		t.Errorf("synced %v for state %d status %#x", c.Synced, c.State, c.Status)
	}
	if c.EstErrorUs < 0 || c.MaxErrorUs < 0 || c.MaxErrorUs > ntpPhaseLimit {
		t.Errorf("esterror %d maxerror %d µs: want 0 ≤ both, maxerror ≤ %d", c.EstErrorUs, c.MaxErrorUs, ntpPhaseLimit)
	}
	if c.Synced && c.MaxErrorUs >= ntpPhaseLimit {
		t.Errorf("synced with maxerror at the kernel's cap (%d µs)", c.MaxErrorUs)
	}

	info, _ := HostInfo()
	if info["clock_synced"] != strconv.FormatBool(c.Synced) || info["clock_state"] == "" || info["clock_esterror_us"] == "" ||
		info["clock_maxerror_us"] == "" || info["clock_status"] == "" {
		t.Errorf("host info clock entries %v, want the reading", info)
	}
}
