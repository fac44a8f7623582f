// Package link puts a server in a network namespace of its own, joined to
// this process's namespace by a veth pair with addresses from the
// benchmarking range 198.18.0.0/15, and does to the packets between them what
// a real path does: a rate per column (htb, one equal class each, so that the
// library and not TCP's congestion control decides each column's share),
// random loss (nft numgen), delay and jitter where the kernel has netem, and
// the network faults of wire.NetworkFaultKinds (blackhole, rst, syn_drop,
// throttle), played by nft rules and htb rates at one instant for every
// column.
//
// Each column (a worker, or the bench's client) dials from an address of its
// own on this side of the link, which the shaping and the faults select by;
// the host's address (HostAddr, the one the kernel picks for anything else,
// such as the controller's /_soak/stats and /_soak/faults) is never shaped,
// dropped or reset.
//
// Everything inside the namespace (its end of the pair, the qdiscs, the nft
// table) goes with the namespace, which the kernel removes once no process
// holds it: the server child started in it (child.Options.NewNet, killed by
// the kernel when its parent dies), or this process (New's own namespace,
// held by a file). The one named object on this side, the host's end of the
// pair, is named soak<pid>-<n>, goes with its peer, and is deleted by Close;
// Reserve deletes those a dead process left. Nothing routes outside: the
// namespace has no route but its /26, this side none but the same /26 on the
// pair.
package link

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/wssoak/wssoak/internal/wire"
)

// Range is the benchmarking range (RFC 2544) every link's addresses come from.
var Range = netip.MustParsePrefix("198.18.0.0/15")

// subnetBits is the size of one link's subnet: a /26 holds the host's
// address, the server's and MaxColumns columns'.
const subnetBits = 26

// MaxColumns is how many columns one link takes.
const MaxColumns = 1<<(32-subnetBits) - 4 // network, host, server, broadcast

// Link is a server's network namespace and the veth pair to it.
type Link struct {
	cfg     wire.Link
	columns int
	prefix  netip.Prefix
	host    string // the pair's end here
	peer    string // its end in the namespace

	mu        sync.Mutex
	ns        *os.File // the namespace, once attached
	closed    bool
	blackhole int     // blackhole faults in force
	synDrop   int     // syn_drop faults in force
	throttles []int64 // rates of the throttle faults in force
}

// seq numbers the links of this process, for their names.
var seq atomic.Uint32

// Reserve makes a link for columns columns: it deletes what dead processes
// left, takes a free /26 of Range, and creates the veth pair here, the
// host's end up with its addresses (HostAddr first, then each column's), its
// peer waiting for Attach. Close undoes it.
func Reserve(cfg wire.Link, columns int) (*Link, error) {
	if columns < 1 || columns > MaxColumns {
		return nil, fmt.Errorf("link: %d columns: want 1 to %d", columns, MaxColumns)
	}
	if cfg.Rate != 0 && cfg.Rate < wire.MinThrottle {
		return nil, fmt.Errorf("link: rate %s: want at least %s", cfg.Rate, wire.BitRate(wire.MinThrottle))
	}
	if cfg.Loss < 0 || cfg.Loss > 100 {
		return nil, fmt.Errorf("link: loss %v%%: want 0 to 100", cfg.Loss)
	}
	n := seq.Add(1) % 100
	l := &Link{cfg: cfg, columns: columns, host: fmt.Sprintf("%s%d-%d", namePrefix, os.Getpid(), n)}
	l.peer = l.host + "p"
	unlock, err := lockHosts()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := sweep(); err != nil {
		return nil, err
	}
	if l.prefix, err = freeSubnet(os.Getpid()*31 + int(n)); err != nil {
		return nil, err
	}
	if err := run("ip", "link", "add", l.host, "type", "veth", "peer", "name", l.peer); err != nil {
		return nil, err
	}
	addrs := []netip.Addr{l.HostAddr()}
	for i := range columns {
		addrs = append(addrs, l.ColumnAddr(i))
	}
	var cmds [][]string
	for _, a := range addrs {
		cmds = append(cmds, []string{"address", "add", netip.PrefixFrom(a, subnetBits).String(), "dev", l.host})
	}
	cmds = append(cmds, []string{"link", "set", l.host, "up"})
	if err := runBatch("ip", cmds); err != nil {
		_ = run("ip", "link", "del", l.host)
		return nil, err
	}
	return l, nil
}

// HostAddr is this side's own address on the link: what the kernel picks to
// reach the server for anything that does not bind a column's (the
// controller's requests). Nothing shapes or faults it.
func (l *Link) HostAddr() netip.Addr { return l.nth(1) }

// ServerAddr is the server's address, in the namespace.
func (l *Link) ServerAddr() netip.Addr { return l.nth(2) }

// ColumnAddr is the address column i (0, 1, …) dials from.
func (l *Link) ColumnAddr(i int) netip.Addr { return l.nth(3 + i) }

// Columns is how many columns the link has.
func (l *Link) Columns() int { return l.columns }

// Host is the name of the pair's end on this side.
func (l *Link) Host() string { return l.host }

func (l *Link) nth(i int) netip.Addr {
	a := l.prefix.Addr().As4()
	a[3] += byte(i)
	return netip.AddrFrom4(a)
}

// Attach moves the pair's other end into the network namespace at nsPath
// (/proc/<pid>/ns/net of a child started in a namespace of its own) and sets
// the namespace up: loopback and the link up, the server's address, the
// rate classes, the nft table of the loss and the faults.
func (l *Link) Attach(nsPath string) error {
	f, err := os.Open(nsPath)
	if err != nil {
		return fmt.Errorf("link: open namespace: %w", err)
	}
	return l.attach(f)
}

// AttachNew attaches the link to a new network namespace that this process
// holds (until Close): for a server in this process, which listens in it
// with Listen.
func (l *Link) AttachNew() error {
	f, err := newNamespace()
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	return l.attach(f)
}

func (l *Link) attach(ns *os.File) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ns != nil || l.closed {
		ns.Close()
		return errors.New("link: attached already, or closed")
	}
	// The namespace is named by this process's open file: ip reads a
	// name with a slash as a path.
	if err := run("ip", "link", "set", l.peer, "netns", fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), ns.Fd())); err != nil {
		ns.Close()
		return err
	}
	l.ns = ns
	return inside(ns, func() error {
		if err := runBatch("ip", [][]string{
			{"link", "set", "lo", "up"},
			{"address", "add", netip.PrefixFrom(l.ServerAddr(), subnetBits).String(), "dev", l.peer},
			{"link", "set", l.peer, "up"},
		}); err != nil {
			return err
		}
		if err := runBatch("tc", l.shaping()); err != nil {
			return err
		}
		return runStdin("nft", l.ruleset(), "-f", "-")
	})
}

// Listen listens on the server's address (port 0: a free one) in the link's
// namespace, for a server in this process (AttachNew).
func (l *Link) Listen(port int) (net.Listener, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ns == nil {
		return nil, errors.New("link: not attached")
	}
	var ln net.Listener
	err := inside(l.ns, func() error {
		var err error
		ln, err = net.Listen("tcp", netip.AddrPortFrom(l.ServerAddr(), uint16(port)).String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("link: listen: %w", err)
	}
	return ln, nil
}

// Open is a link for a server in this process: reserved for columns
// columns, attached to a new namespace this process holds, and a listener
// on the server's address there (a free port). Close the link after the
// server.
func Open(cfg wire.Link, columns int) (*Link, net.Listener, error) {
	l, err := Reserve(cfg, columns)
	if err != nil {
		return nil, nil, err
	}
	err = l.AttachNew()
	var ln net.Listener
	if err == nil {
		ln, err = l.Listen(0)
	}
	if err != nil {
		return nil, nil, errors.Join(err, l.Close())
	}
	return l, ln, nil
}

// ServerListen is the address a server child attached to the link listens
// on: the server's, a free port.
func (l *Link) ServerListen() string {
	return net.JoinHostPort(l.ServerAddr().String(), "0")
}

// Close deletes the pair (its peer with it, and so the namespace's link)
// and lets go of the namespace: once no process holds it the kernel removes
// it with everything in it. Safe to call twice.
func (l *Link) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := deleteLink(l.host)
	if l.ns != nil {
		l.ns.Close()
	}
	return err
}

// deleteLink deletes the interface name here, if it is still there (the
// kernel deletes a pair whose peer's namespace went).
func deleteLink(name string) error {
	if _, err := net.InterfaceByName(name); err != nil {
		return nil
	}
	err := run("ip", "link", "del", name)
	if _, ierr := net.InterfaceByName(name); ierr != nil {
		return nil // gone, whoever took it
	}
	return err
}

// Describe is the link in one line, as a run records it.
func Describe(cfg wire.Link) string {
	if !cfg.On {
		return "none"
	}
	s := "veth to a network namespace"
	if cfg.Rate > 0 {
		s += ", rate " + cfg.Rate.String() + " per column"
	}
	if cfg.Loss > 0 {
		s += ", loss " + strconv.FormatFloat(cfg.Loss, 'g', -1, 64) + "% each way"
	}
	if cfg.Delay > 0 {
		s += ", delay " + cfg.Delay.String()
	}
	if cfg.Jitter > 0 {
		s += ", jitter " + cfg.Jitter.String()
	}
	return s
}
