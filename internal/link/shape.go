package link

import (
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// unlimited is the rate of a class that is not shaped: beyond what a veth
// moves on one machine.
const unlimited = wire.BitRate(100e9)

// quantum is every class's htb quantum: explicit, so that the kernel need
// not derive one from the rate (and warn about it); the classes do not
// borrow from each other, so it does not decide any share.
const quantum = "60000"

// The htb tree on the namespace's end of the pair (what the server sends):
// the root qdisc 1:, the default class 1:2 (the controller's traffic,
// unshaped), and a class per column, 1:10 and up (hexadecimal), each at the
// link's rate, selected by the column's address.
const defaultClass = 2

// columnClass is column i's class minor number.
func columnClass(i int) int { return 0x10 + i }

// tcRate is r as tc reads it.
func tcRate(r wire.BitRate) string { return strconv.FormatInt(int64(r), 10) + "bit" }

// rate is the columns' rate: the link's, or unlimited.
func (l *Link) rate() wire.BitRate {
	if l.cfg.Rate > 0 {
		return l.cfg.Rate
	}
	return unlimited
}

// shaping is the tc commands that build the tree.
func (l *Link) shaping() [][]string {
	dev := l.peer
	cls := func(minor int, r wire.BitRate) []string {
		return []string{"class", "add", "dev", dev, "parent", "1:", "classid", fmt.Sprintf("1:%x", minor), "htb",
			"rate", tcRate(r), "ceil", tcRate(r), "quantum", quantum}
	}
	cmds := [][]string{
		{"qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", fmt.Sprintf("%x", defaultClass)},
		cls(defaultClass, unlimited),
	}
	for i := range l.columns {
		c := columnClass(i)
		cmds = append(cmds, cls(c, l.rate()),
			[]string{"filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
				"match", "ip", "dst", l.ColumnAddr(i).String() + "/32", "flowid", fmt.Sprintf("1:%x", c)})
		if l.cfg.NeedsNetem() {
			cmds = append(cmds, append([]string{"qdisc", "add", "dev", dev, "parent", fmt.Sprintf("1:%x", c),
				"handle", fmt.Sprintf("%x:", c), "netem"}, netemArgs(l.cfg)...))
		}
	}
	return cmds
}

// netemArgs are netem's arguments for the link's delay and jitter.
func netemArgs(cfg wire.Link) []string {
	args := []string{"delay", usec(cfg.Delay)}
	if cfg.Jitter > 0 {
		args = append(args, usec(cfg.Jitter))
	}
	return args
}

func usec(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) + "us" }

// rateChange is the tc commands that set every column's class to r.
func (l *Link) rateChange(r wire.BitRate) [][]string {
	var cmds [][]string
	for i := range l.columns {
		cmds = append(cmds, []string{"class", "change", "dev", l.peer, "parent", "1:", "classid", fmt.Sprintf("1:%x", columnClass(i)),
			"htb", "rate", tcRate(r), "ceil", tcRate(r), "quantum", quantum})
	}
	return cmds
}

// table is the name of the link's nft table, in the namespace.
const table = "soak"

// ruleset is the link's nft table: the columns' addresses, and chains that
// only their packets pass through (the controller's never): the loss, then
// the chains the faults fill (blackhole, syn_drop) and the set of the flows
// an rst fault resets.
func (l *Link) ruleset() string {
	var cols []string
	for i := range l.columns {
		cols = append(cols, l.ColumnAddr(i).String())
	}
	loss := ""
	if n := lossPerMillion(l.cfg.Loss); n > 0 {
		loss = fmt.Sprintf("\t\tnumgen random mod 1000000 < %d drop\n", n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table ip %s {\n", table)
	fmt.Fprintf(&b, "\tset columns { type ipv4_addr; elements = { %s } }\n", strings.Join(cols, ", "))
	b.WriteString("\tset rst { type ipv4_addr . inet_service; flags timeout; }\n")
	b.WriteString("\tchain blackhole { }\n\tchain syn_drop { }\n")
	b.WriteString("\tchain from_columns {\n" + loss + "\t\tjump blackhole\n\t\tjump syn_drop\n" +
		"\t\tip saddr . tcp sport @rst tcp flags & rst == 0 reject with tcp reset\n\t}\n")
	b.WriteString("\tchain to_columns {\n" + loss + "\t\tjump blackhole\n\t}\n")
	b.WriteString("\tchain input { type filter hook input priority filter; policy accept; ip saddr @columns jump from_columns; }\n")
	b.WriteString("\tchain output { type filter hook output priority filter; policy accept; ip daddr @columns jump to_columns; }\n")
	b.WriteString("}\n")
	return b.String()
}

// lossPerMillion is a loss in percent as nft's numgen draws it.
func lossPerMillion(pct float64) int64 { return int64(math.Round(pct * 1e4)) }

// flowElements is the rst set's elements for flows, each reset for window.
func flowElements(flows []netip.AddrPort, window time.Duration) string {
	parts := make([]string, len(flows))
	for i, f := range flows {
		parts[i] = fmt.Sprintf("%s . %d timeout %dms", f.Addr(), f.Port(), window.Milliseconds())
	}
	return strings.Join(parts, ", ")
}
