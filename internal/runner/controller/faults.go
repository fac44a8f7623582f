package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/limit"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Faults are recorded as "fault" events at the server's instant: one per
// library a fault hit, or one run-wide event (Lib "") if it hit none. The
// controller reads the server's log (/_soak/faults, append-only) every
// faultPollEvery seconds during the run, so the live view and the report's
// refreshes show them, and once more after the window, so none is lost.
// Every second: a controller that dies takes its replay server, and the
// log, with it, and a resume keeps the faults recorded to the second.
const faultPollEvery = 1

// pollFaults fetches the server's fault log in the background; the main loop
// records what is new when it arrives. At most one poll is in flight.
func (c *controller) pollFaults() {
	if c.faultPoll || c.addr == "" || len(c.o.Profile.Faults) == 0 {
		return
	}
	cl, err := c.localClient()
	if err != nil {
		c.o.Log.Warn("server faults", "err", err)
		return
	}
	if c.faultLogs == nil {
		c.faultLogs = make(chan []wire.Applied, 1) // a poll still in flight at the end never blocks
	}
	c.faultPoll = true
	url := c.localBase() + wire.PathFaults
	go func() {
		var log []wire.Applied
		if err := getJSON(cl, url, &log); err != nil {
			log = nil // the next poll, or the one after the window, takes it
		}
		c.faultLogs <- log
	}()
}

// recordFaults adds the entries of the server's fault log not recorded yet.
// A reject fault's entry fills in as handshakes are rejected, after it was
// armed: each library gets its event at the first poll that shows one of
// its handshakes rejected (the count as of then); one that hit no library
// by the end of the run (final) is recorded run-wide then.
func (c *controller) recordFaults(log []wire.Applied, final bool) {
	libs := wire.Names(c.plan.Columns)
	for i := c.faultsSeen; i < len(log); i++ {
		if log[i].Fault.Kind == wire.FaultReject {
			c.rejects = append(c.rejects, pendingReject{entry: i, seen: map[string]bool{}})
			continue
		}
		c.batch.Events = append(c.batch.Events, faultEvents(log[i:i+1], libs, c.plan.Start)...)
	}
	c.faultsSeen = max(c.faultsSeen, len(log))
	for _, r := range c.rejects {
		if r.entry >= len(log) {
			continue
		}
		a := log[r.entry]
		fresh := a
		fresh.Conns = nil
		for _, tag := range a.Conns {
			if lib := wire.ColumnOf(tag); slices.Contains(libs, lib) && !r.seen[lib] {
				fresh.Conns = append(fresh.Conns, tag)
			}
		}
		if len(fresh.Conns) > 0 {
			c.batch.Events = append(c.batch.Events, faultEvents([]wire.Applied{fresh}, libs, c.plan.Start)...)
			for _, tag := range fresh.Conns {
				r.seen[wire.ColumnOf(tag)] = true
			}
		} else if final && len(r.seen) == 0 {
			c.batch.Events = append(c.batch.Events, faultEvents([]wire.Applied{fresh}, libs, c.plan.Start)...)
		}
	}
}

// pendingReject is a reject fault of the server's log and the libraries
// whose event is recorded.
type pendingReject struct {
	entry int
	seen  map[string]bool
}

// saveFaults records what the server's fault log holds beyond what the polls
// recorded, after the window.
func (c *controller) saveFaults() error {
	var log []wire.Applied
	if err := c.getLocal(wire.PathFaults, &log); err != nil {
		return err
	}
	c.recordFaults(log, true)
	return nil
}

// localClient is the client to the local replay server, made once (its idle
// connection is reused by every poll).
func (c *controller) localClient() (*http.Client, error) {
	if c.local == nil {
		cl, err := c.httpClient(false)
		if err != nil {
			return nil, err
		}
		c.local = cl
	}
	return c.local, nil
}

// getLocal decodes the JSON the local replay server serves at path into v.
func (c *controller) getLocal(path string, v any) error {
	cl, err := c.localClient()
	if err != nil {
		return err
	}
	return getJSON(cl, c.localBase()+path, v)
}

// getJSON decodes the JSON served at url (at most limit.ServerAnswer bytes) into v.
func getJSON(cl *http.Client, url string, v any) error {
	resp, err := cl.Get(url)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", url, resp.Status)
	}
	body, err := limit.ReadAll(resp.Body, "get "+url, limit.ServerAnswer)
	if err != nil {
		if errors.As(err, new(*limit.TooLargeError)) {
			return err
		}
		return fmt.Errorf("get %s: %w", url, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decode %s: %w", url, err)
	}
	return nil
}

// faultEvents turns the server's fault log into events; libs are the run's
// columns (a connection whose tag names no such column counts for none).
func faultEvents(log []wire.Applied, libs []string, start time.Time) []store.Event {
	var out []store.Event
	for _, a := range log {
		hit := map[string]int{}
		for _, tag := range a.Conns {
			if lib := wire.ColumnOf(tag); slices.Contains(libs, lib) {
				hit[lib]++
			}
		}
		code := a.Fault.Code
		if a.Fault.Kind == wire.FaultReject {
			code = a.Fault.Status
		}
		ev := store.Event{TS: a.At, Sec: a.At.Sub(start).Seconds(), Kind: wire.EventFault, Fault: a.Fault.Kind, Code: code,
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
				if a.Fault.Kind == wire.FaultReject {
					what = "handshakes rejected"
				}
				ev.Detail = fmt.Sprintf("%s; %d %s", a.Fault, n, what)
				out = append(out, ev)
			}
		}
	}
	return out
}
