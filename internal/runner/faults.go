package runner

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/store"
)

// saveFaults reads the replay server's fault log (/_soak/faults) after the
// window and records each fault as a "fault" event at the server's instant:
// one per library it hit, or one run-wide event (Lib "") if it hit none.
// The log is read from the live server at the end, so no fault is lost to a
// pipe or a buffer.
func (c *controller) saveFaults() error {
	var log []replay.Applied
	if err := c.getLocal("/_soak/faults", &log); err != nil {
		return err
	}
	c.batch.Events = append(c.batch.Events, faultEvents(log, c.o.Profile.Libraries, c.plan.Start)...)
	return nil
}

// getLocal decodes the JSON the local replay server serves at path into v.
func (c *controller) getLocal(path string, v any) error {
	cl, err := c.httpClient(false)
	if err != nil {
		return err
	}
	resp, err := cl.Get(c.localBase() + path)
	if err != nil {
		return fmt.Errorf("get server %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get server %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("decode server %s: %w", path, err)
	}
	return nil
}

// faultEvents turns the server's fault log into events; libs are the run's
// libraries (a connection whose tag names no such library counts for none).
func faultEvents(log []replay.Applied, libs []string, start time.Time) []store.Event {
	var out []store.Event
	for _, a := range log {
		hit := map[string]int{}
		for _, tag := range a.Conns {
			if lib := replay.LibOf(tag); slices.Contains(libs, lib) {
				hit[lib]++
			}
		}
		code := a.Fault.Code
		if a.Fault.Kind == replay.FaultReject {
			code = a.Fault.Status
		}
		ev := store.Event{TS: a.At, Sec: a.At.Sub(start).Seconds(), Kind: "fault", Code: code,
			Stream: strings.Join(a.Fault.Streams, ",")}
		if len(hit) == 0 {
			ev.Detail = a.Fault.String() + "; hit no connection"
			out = append(out, ev)
			continue
		}
		for _, lib := range libs {
			if n := hit[lib]; n > 0 {
				ev.Lib = lib
				what := "connections"
				if a.Fault.Kind == replay.FaultReject {
					what = "handshakes rejected"
				}
				ev.Detail = fmt.Sprintf("%s; %d %s", a.Fault, n, what)
				out = append(out, ev)
			}
		}
	}
	return out
}
