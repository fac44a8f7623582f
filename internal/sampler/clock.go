package sampler

import "strconv"

// ClockSync is the kernel's view of the local clock's synchronisation (by
// NTP, chrony, PTP …), as adjtimex(2) reports it. Latency against a live
// target is this clock's receive time minus the server's event time, so it
// is only as good as this clock's sync.
type ClockSync struct {
	Synced     bool  // State is not TIME_ERROR (5) and STA_UNSYNC (0x40) is clear in Status
	State      int   // adjtimex's result: TIME_OK (0), TIME_INS, TIME_DEL, TIME_OOP, TIME_WAIT, TIME_ERROR (5)
	Status     int   // the timex status bits
	EstErrorUs int64 // the kernel's estimated error, µs (set by the sync daemon)
	MaxErrorUs int64 // the kernel's maximum error, µs (grows while nobody syncs, capped at 16 s)
}

// HostInfo returns the reading as host-info entries (clock_synced,
// clock_state, clock_status, clock_esterror_us, clock_maxerror_us).
func (c ClockSync) HostInfo() map[string]string {
	return map[string]string{
		"clock_synced":      strconv.FormatBool(c.Synced),
		"clock_state":       strconv.Itoa(c.State),
		"clock_status":      strconv.Itoa(c.Status),
		"clock_esterror_us": strconv.FormatInt(c.EstErrorUs, 10),
		"clock_maxerror_us": strconv.FormatInt(c.MaxErrorUs, 10),
	}
}
