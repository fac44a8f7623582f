package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/wire"
)

// A profile's link: section (wire.Link) puts the replay server (a bench's:
// the firehose) in a network namespace of its own behind a link:
//
//	link:
//	  rate: 2mbit     # what the server sends to each column, one htb class each; 0: not shaped
//	  loss: 0.5       # percent of the packets dropped each way, at random
//	  delay: 20ms     # added to what the server sends: needs the kernel's netem
//	  jitter: 5ms
//
// The network fault kinds (wire.NetworkFaultKinds) need it. The run checks
// at its start what the machine can do (root, namespaces, ip, tc, nft,
// netem for a delay); the profile only what it says.

var errBitRateUnit = errors.New("want a number with a unit such as 500kbit, 2mbit, 1gbit (bits per second)")

// parseBitRate reads "2mbit", "1.5Mbit", "500kbit", "8000bit" (powers of
// 1000, as tc reads them; the unit's case is free). "mbps" is refused: to
// tc it means megabytes.
func parseBitRate(s string) (wire.BitRate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if strings.HasSuffix(t, "bps") || strings.HasSuffix(t, "b/s") {
		return 0, fmt.Errorf("%q is ambiguous (bytes or bits?): %w", s, errBitRateUnit)
	}
	for _, u := range wire.BitRateUnits {
		num, ok := strings.CutSuffix(t, u.Name)
		if !ok {
			continue
		}
		num = strings.TrimSpace(num)
		x, err := strconv.ParseFloat(num, 64)
		if err != nil || num == "" || strings.ContainsAny(num, "eEinfINFaA") {
			return 0, errBitRateUnit
		}
		v := x * float64(u.Mult)
		if math.IsNaN(v) || v >= math.MaxInt64 || v <= math.MinInt64 {
			return 0, errors.New("out of range")
		}
		return wire.BitRate(math.Round(v)), nil
	}
	if t == "0" {
		return 0, nil
	}
	return 0, errBitRateUnit
}

// bitRate reads a rate in bits per second.
func (d *decoder) bitRate(name string, dst *wire.BitRate, s sign) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		text, err := d.scalar(v, name)
		if err != nil {
			return err
		}
		line := deref(v).Line
		x, err := parseBitRate(text)
		if err != nil {
			return d.errf(line, "%s: bad rate %q: %v", name, text, err)
		}
		if err := d.checkSign(line, name, x < 0, x == 0, s, text); err != nil {
			return err
		}
		*dst = x
		return nil
	}
}

// validateLink checks the link: section: a local target on the client
// side, a loss that is a percentage, a rate a link can be shaped to.
func (d *decoder) validateLink(p *Profile, add func(*Error)) {
	if !d.set["link"] {
		return
	}
	p.Link.On = true
	switch {
	case p.Target != TargetLocal:
		add(d.errf(d.linkLine(""), "link applies only to target %q (the replay server goes behind it), not %q", TargetLocal, p.Target))
	case p.Side == SideServer:
		add(d.errf(d.linkLine(""), "link applies only to side %q (the replay server goes behind it)", SideClient))
	}
	if e := d.checkLink(p.Link); e != nil {
		add(e)
	}
}

// linkLine is the line of the link: section's key k ("": the section's).
func (d *decoder) linkLine(k string) int {
	if l, ok := d.lines["link."+k]; ok {
		return l
	}
	return d.lines["link"]
}

// checkLink checks a link's values, a soak's or a bench's; nil when right.
func (d *decoder) checkLink(l wire.Link) *Error {
	switch {
	case l.Loss > 100:
		return d.errf(d.linkLine("loss"), "link.loss %v: want a percentage from 0 to 100", l.Loss)
	case l.Rate > 0 && l.Rate < wire.MinThrottle:
		return d.errf(d.linkLine("rate"), "link.rate %v: want at least %v (or 0: not shaped)", l.Rate, wire.BitRate(wire.MinThrottle))
	}
	return nil
}

// NetworkFaults returns the faults the controller plays on the link (the
// network's kinds), as ScheduledFaults returns the replay server's.
func (p *Profile) NetworkFaults() []wire.ScheduledFault {
	var out []wire.ScheduledFault
	for i := range p.Faults {
		f := &p.Faults[i]
		if wire.FaultKind(f.Kind).OnNetwork() {
			out = append(out, wire.ScheduledFault{Fault: f.replayFault(p.Symbols), At: f.At.Std(), Every: f.Every.Std()})
		}
	}
	return out
}
