package wire

import (
	"strconv"
	"time"
)

// Link is a profile's link: section: the replay server (or the bench's
// firehose) in a network namespace of its own, joined to the clients by a
// virtual Ethernet pair, with what the link does to the traffic. A zero
// field leaves that property alone: a Link with only On set is a plain
// link, as fast as the machine moves packets between namespaces.
type Link struct {
	// On: the profile has a link: section (set by the profile's decoder).
	On bool `yaml:"-" json:"on"`
	// Rate shapes what the server sends to each column (worker) to this
	// many bits per second, one equal class each.
	Rate BitRate `yaml:"rate" json:"rate,omitempty"`
	// Loss drops this percentage of the packets between a column and the
	// server, each way, at random.
	Loss float64 `yaml:"loss" json:"loss,omitempty"`
	// Delay and Jitter add latency to what the server sends; they need
	// the kernel's netem qdisc (sch_netem), checked at the run's start.
	Delay  time.Duration `yaml:"delay" json:"delay,omitempty"`
	Jitter time.Duration `yaml:"jitter" json:"jitter,omitempty"`
}

// NeedsNetem reports whether l adds delay or jitter (the netem qdisc).
func (l Link) NeedsNetem() bool { return l.Delay > 0 || l.Jitter > 0 }

// BitRate is a rate in bits per second.
type BitRate int64

// String writes r with the largest unit that divides it: 10mbit, 1500kbit,
// 1gbit, 999bit (tc's units, powers of 1000).
func (r BitRate) String() string {
	for _, u := range BitRateUnits {
		if r != 0 && int64(r)%u.Mult == 0 {
			return strconv.FormatInt(int64(r)/u.Mult, 10) + u.Name
		}
	}
	return strconv.FormatInt(int64(r), 10) + "bit"
}

// BitRateUnits are the units a bit rate is written with, largest first
// (powers of 1000, as tc reads them).
var BitRateUnits = []struct {
	Name string
	Mult int64
}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}
