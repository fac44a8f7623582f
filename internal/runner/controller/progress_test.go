package controller

import (
	"bytes"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

// The progress line: plain lines for a log or a pipe; on a terminal one line
// rewritten in place (carriage return, clear to end of line, no newline).
func TestProgressLine(t *testing.T) {
	workers := func() []*workerProc {
		return []*workerProc{
			{lib: "gorilla", last: &wire.SecStat{Msgs: 1380, Reconnects: 2}, stalls: 1},
			{lib: "gws", last: &wire.SecStat{Msgs: 1379}},
			{lib: "coder"}, // no complete second yet: left out
		}
	}
	const line = "[  10s/120s] gorilla 1380 msg/s, 2 reconnects, 1 stalls | gws 1379 msg/s, 0 reconnects, 0 stalls"
	for _, tt := range []struct {
		inPlace bool
		want    string
	}{
		{false, line + "\n" + line + "\n"},
		{true, "\r\x1b[K" + line + "\r\x1b[K" + line},
	} {
		var buf bytes.Buffer
		c := &controller{Lifecycle: &Lifecycle{o: Options{Progress: &buf, ProgressInPlace: tt.inPlace}}, workers: workers()}
		c.progress(10, 120)
		c.progress(10, 120)
		if buf.String() != tt.want || !c.progressed {
			t.Errorf("in place %v:\n got %q\nwant %q", tt.inPlace, buf.String(), tt.want)
		}
	}
}
