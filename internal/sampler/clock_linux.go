package sampler

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ReadClock reads the kernel's clock synchronisation state with adjtimex(2)
// in read-only mode (modes 0: no privilege needed, nothing is changed).
func ReadClock() (ClockSync, error) {
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return ClockSync{}, fmt.Errorf("read clock sync state: %w", err)
	}
	c := ClockSync{State: state, Status: int(tx.Status), EstErrorUs: int64(tx.Esterror), MaxErrorUs: int64(tx.Maxerror)}
	c.Synced = state != unix.TIME_ERROR && tx.Status&unix.STA_UNSYNC == 0
	return c, nil
}
