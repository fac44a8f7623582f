package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/link"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// A run with link: puts its replay server in a network namespace of its
// own (package link): the link is reserved before the server starts (its
// addresses are in the server's certificate, its listen address and the
// workers' plans), attached to the server's namespace as it starts, played
// on by the network faults during the window, and closed after the server
// stopped. Each worker dials from its column's address; the controller's
// own requests leave from the host's, which nothing shapes or faults.

// netLink is the run's link, and the player of its faults.
type netLink struct {
	l      *link.Link
	played chan playedFault // from the player to the main loop
	stop   context.CancelFunc
	done   chan struct{}
}

// playedFault is a network fault the player played, or failed to.
type playedFault struct {
	link.Played
	err error
}

// preflightLink checks, before the run begins, that this machine can make
// the profile's link: a refusal is one line (not root, no namespaces, no
// ip, tc or nft, no netem for a delay), and nothing was created.
func preflightLink(p *profile.Profile) error {
	if !p.Link.On {
		return nil
	}
	return link.Check(p.Link)
}

// reserveLink reserves the profile's link for the run's columns; nothing
// without link:.
func (c *controller) reserveLink() error {
	p := c.o.Profile
	if !p.Link.On {
		return nil
	}
	l, err := link.Reserve(p.Link, len(c.columnNames()))
	if err != nil {
		return err
	}
	c.net = &netLink{l: l}
	c.o.Log.Info("link reserved", "host", l.Host(), "server", l.ServerAddr(), "link", link.Describe(p.Link))
	return nil
}

// closeLink stops the fault player and closes the link (after the server
// stopped: its namespace goes with it).
func (c *controller) closeLink() {
	if c.net == nil {
		return
	}
	c.stopNetFaults()
	if err := c.net.l.Close(); err != nil {
		c.o.Log.Warn("close link", "err", err)
	}
}

// columnNames are the run's columns, in the order of their link addresses.
func (c *controller) columnNames() []string {
	if c.plan != nil && len(c.plan.Columns) > 0 {
		return wire.Names(c.plan.Columns)
	}
	return wire.Names(c.o.Profile.Columns())
}

// columnAddr is the address the worker of lib dials from: its column's on
// the link; "" without one.
func (c *controller) columnAddr(lib string) string {
	i := slices.Index(c.columnNames(), lib)
	if c.net == nil || i < 0 {
		return ""
	}
	return c.net.l.ColumnAddr(i).String()
}

// certHosts are the names of the replay server's certificate: loopback's,
// and its address on the link.
func (c *controller) certHosts() []string {
	if c.net == nil {
		return cert.LocalHosts
	}
	return append(slices.Clone(cert.LocalHosts), c.net.l.ServerAddr().String())
}

// linkServer makes the replay server's options and config put it behind the
// link: started in a namespace of its own, the link attached to it before
// it reads its config, listening on its address there.
func (c *controller) linkServer(o *child.Options, cfg *wire.Replay) {
	if c.net == nil {
		return
	}
	l := c.net.l
	o.NewNet = true
	o.Setup = func(pid int) error { return l.Attach(fmt.Sprintf("/proc/%d/ns/net", pid)) }
	cfg.Listen = l.ServerListen()
}

// playNetFaults starts playing the profile's network faults on the link, on
// the window's clock; what is played comes back to the main loop (netPlayed).
func (c *controller) playNetFaults() {
	faults := c.o.Profile.NetworkFaults()
	if c.net == nil || len(faults) == 0 {
		return
	}
	n := c.net
	ctx, cancel := context.WithCancel(context.Background())
	n.stop, n.done, n.played = cancel, make(chan struct{}), make(chan playedFault, 64)
	go func() {
		defer close(n.done)
		n.l.Play(ctx, faults, c.epoch, c.plan.End.Sub(c.plan.Start), func(p link.Played, err error) {
			select {
			case n.played <- playedFault{p, err}:
			case <-ctx.Done():
			}
		})
	}()
}

// stopNetFaults stops the player (lifting what is in force) and records
// what it played and was not recorded yet.
func (c *controller) stopNetFaults() {
	n := c.net
	if n == nil || n.stop == nil {
		return
	}
	n.stop()
	<-n.done
	n.stop = nil
	for {
		select {
		case p := <-n.played:
			c.recordNetFault(p)
		default:
			return
		}
	}
}

// netPlayed is what the main loop reads the player's faults from (nil, never
// ready, without one).
func (c *controller) netPlayed() <-chan playedFault {
	if c.net == nil {
		return nil
	}
	return c.net.played
}

// recordNetFault records a played network fault as fault events: one per
// column, at the instant the kernel's rules changed, each with the
// connections the column had then; one run-wide event when the kernel
// refused it.
func (c *controller) recordNetFault(p playedFault) {
	if p.err != nil {
		c.o.Log.Warn("network fault", "fault", p.Fault.String(), "err", p.err)
	}
	c.AddEvent(netFaultEvents(p.Played, p.err, c.columnNames(), c.plan.Start)...)
}

// netFaultEvents are the fault events of a network fault played at p.At on
// the columns cols (err: it was not).
func netFaultEvents(p link.Played, err error, cols []string, start time.Time) []store.Event {
	ev := store.Event{TS: p.At, Sec: p.At.Sub(start).Seconds(), Kind: wire.EventFault, Fault: p.Fault.Kind}
	if err != nil {
		ev.Detail = p.Fault.String() + "; not played: " + strings.TrimPrefix(err.Error(), "link: ")
		return []store.Event{ev}
	}
	out := make([]store.Event, 0, len(cols))
	for i, lib := range cols {
		n := 0
		if i < len(p.Conns) {
			n = p.Conns[i]
		}
		ev.Lib, ev.Detail = lib, fmt.Sprintf("%s; %d connections (the link's, at once for every column)", p.Fault, n)
		out = append(out, ev)
	}
	return out
}
