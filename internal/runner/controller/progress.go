package controller

import (
	"fmt"
	"strings"
)

func (c *controller) progress(k, total int64) {
	if c.o.Progress == nil {
		return
	}
	var parts []string
	for _, w := range c.workers {
		if st := w.last; st != nil {
			parts = append(parts, fmt.Sprintf("%s %d msg/s, %d reconnects, %d stalls", w.lib, st.Msgs, st.Reconnects, w.stalls))
		}
	}
	c.Progress(fmt.Sprintf("[%4ds/%ds] %s", k, total, strings.Join(parts, " | ")))
}
