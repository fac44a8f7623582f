package link

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// Played is a network fault the link played: when the kernel's rules
// changed, and what it found then.
type Played struct {
	Fault wire.Fault
	At    time.Time // just before the rules changed (wall and monotonic clock)
	// Conns are the TCP connections each column had established with the
	// server at the instant (as the column sees them), by column.
	Conns []int
}

// Apply plays a network fault (wire.NetworkFaultKinds) on every column at
// once: blackhole and syn_drop add their drop rule, throttle lowers every
// column's rate, rst puts the flows open now into the reset set for For (0:
// wire.RSTWindow). A timed fault (For) goes on until Lift: faults of a kind
// that overlap count, the rule goes with the last, and overlapping
// throttles take the lowest rate in force.
func (l *Link) Apply(f wire.Fault) (Played, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := Played{Fault: f}
	if err := l.usable(f); err != nil {
		return p, err
	}
	flows, err := l.flows()
	if err != nil {
		return p, err
	}
	p.Conns = make([]int, l.columns)
	for _, fl := range flows {
		p.Conns[l.columnOf(fl.Addr())]++
	}
	err = inside(l.ns, func() error {
		p.At = time.Now()
		switch f.Kind {
		case wire.FaultBlackhole:
			if l.blackhole++; l.blackhole == 1 {
				return run("nft", "add", "rule", "ip", table, "blackhole", "drop")
			}
		case wire.FaultSynDrop:
			if l.synDrop++; l.synDrop == 1 {
				return run("nft", "add", "rule", "ip", table, "syn_drop", "tcp", "flags", "&", "(syn|ack)", "==", "syn", "drop")
			}
		case wire.FaultThrottle:
			l.throttles = append(l.throttles, f.Rate)
			return runBatch("tc", l.rateChange(l.effectiveRate()))
		case wire.FaultRST:
			if len(flows) == 0 {
				return nil
			}
			window := f.For
			if window <= 0 {
				window = wire.RSTWindow
			}
			return run("nft", "add", "element", "ip", table, "rst", "{ "+flowElements(flows, window)+" }")
		}
		return nil
	})
	return p, err
}

// Lift ends a timed fault Apply played (blackhole, syn_drop, throttle);
// an rst ends by itself.
func (l *Link) Lift(f wire.Fault) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(f); err != nil {
		return err
	}
	return inside(l.ns, func() error {
		switch f.Kind {
		case wire.FaultBlackhole:
			if l.blackhole > 0 {
				if l.blackhole--; l.blackhole == 0 {
					return run("nft", "flush", "chain", "ip", table, "blackhole")
				}
			}
		case wire.FaultSynDrop:
			if l.synDrop > 0 {
				if l.synDrop--; l.synDrop == 0 {
					return run("nft", "flush", "chain", "ip", table, "syn_drop")
				}
			}
		case wire.FaultThrottle:
			if i := slices.Index(l.throttles, f.Rate); i >= 0 {
				l.throttles = slices.Delete(l.throttles, i, i+1)
				return runBatch("tc", l.rateChange(l.effectiveRate()))
			}
		}
		return nil
	})
}

// usable checks that f is the network's and the link is attached and open.
func (l *Link) usable(f wire.Fault) error {
	switch {
	case !f.Kind.OnNetwork():
		return fmt.Errorf("link: %s is not a network fault", f.Kind)
	case l.closed:
		return errors.New("link: closed")
	case l.ns == nil:
		return errors.New("link: not attached")
	}
	return nil
}

// effectiveRate is the columns' rate with the throttles in force.
func (l *Link) effectiveRate() wire.BitRate {
	r := l.rate()
	for _, t := range l.throttles {
		r = min(r, wire.BitRate(t))
	}
	return r
}

// columnOf is the column whose address a is (a is one: flows only
// returns those).
func (l *Link) columnOf(a netip.Addr) int {
	return int(a.As4()[3]) - int(l.ColumnAddr(0).As4()[3])
}

// isColumn reports whether a is a column's address.
func (l *Link) isColumn(a netip.Addr) bool {
	if !a.Is4() || !l.prefix.Contains(a) {
		return false
	}
	i := l.columnOf(a)
	return i >= 0 && i < l.columns
}

// flows are the columns' ends of the TCP connections they have established
// with the server now, as the columns see them: from this side's
// /proc/net/tcp. (The server's side may still hold a connection a column
// gave up during a blackhole: its close never arrived.)
func (l *Link) flows() ([]netip.AddrPort, error) {
	f, err := os.Open("/proc/thread-self/net/tcp")
	if err != nil {
		return nil, fmt.Errorf("link: connections: %w", err)
	}
	defer f.Close()
	all, err := parseTCP(f)
	if err != nil {
		return nil, err
	}
	var out []netip.AddrPort
	for _, c := range all {
		if c.established && c.remote.Addr() == l.ServerAddr() && l.isColumn(c.local.Addr()) {
			out = append(out, c.local)
		}
	}
	return out, nil
}

// tcpConn is a line of /proc/net/tcp.
type tcpConn struct {
	local, remote netip.AddrPort
	established   bool
}

// parseTCP reads /proc/net/tcp: a header, then a line per socket whose
// addresses are hexadecimal, each IPv4 address as the kernel's 32-bit word
// in this machine's byte order, the port big-endian; state 01 is
// ESTABLISHED.
func parseTCP(r io.Reader) ([]tcpConn, error) {
	var out []tcpConn
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		local, err1 := parseHexAddr(f[1])
		remote, err2 := parseHexAddr(f[2])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("link: connections: %w", err)
		}
		out = append(out, tcpConn{local: local, remote: remote, established: f[3] == "01"})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("link: connections: %w", err)
	}
	return out, nil
}

// parseHexAddr reads "0100007F:1F90" (127.0.0.1:8080 on a little-endian
// machine).
func parseHexAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok || len(host) != 8 {
		return netip.AddrPort{}, fmt.Errorf("address %q: want 8 hex digits:port", s)
	}
	b, err := hex.DecodeString(host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", s, err)
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", s, err)
	}
	var a [4]byte
	binary.NativeEndian.PutUint32(a[:], binary.BigEndian.Uint32(b))
	return netip.AddrPortFrom(netip.AddrFrom4(a), uint16(p)), nil
}
