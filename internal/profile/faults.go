package profile

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/wire"
)

// Fault is one item of "faults:": what the replay server injects, and when,
// into every library's connections at the same instant (target local only).
type Fault struct {
	At    Duration `yaml:"at"`                    // offset from the window's start; with Every, the first instant (default Every)
	Every Duration `yaml:"every" soak:"positive"` // repeat period; 0 = once
	// Kind and parameters as wire.Fault takes them. Streams are stream
	// names or templates ("{symbol}@trade" expands over the profile's
	// symbols); each must be subscribed by some group.
	Kind       string         `yaml:"kind" soak:"kind=fault_kind"`
	Streams    []string       `yaml:"streams" soak:"kind=fault_streams"`
	Code       int            `yaml:"code" soak:"min=0,max=4999"`
	Reason     string         `yaml:"reason"`
	N          int            `yaml:"n" soak:"min=1,max=1048576"`
	Status     int            `yaml:"status" soak:"min=100,max=599"`
	RetryAfter Duration       `yaml:"retry_after"`
	Size       ByteSize       `yaml:"size" soak:"positive"`
	For        Duration       `yaml:"for"`
	Delay      Duration       `yaml:"delay" soak:"positive"`
	Rate       wire.BitRate   `yaml:"rate" soak:"positive"` // throttle: the link's rate toward each column meanwhile
	Line       int            `yaml:"-"`                    // line of the item in the file
	lines      map[string]int // key → line, for validation messages
}

func (d *decoder) faults(v *yaml.Node, dst *[]Fault) error {
	v = deref(v)
	if v.Kind != yaml.SequenceNode {
		return d.errf(v.Line, "faults must be a list, got %s", kindName(v))
	}
	out := make([]Fault, len(v.Content))
	for i, fn := range v.Content {
		if err := d.via(fn, func(fn *yaml.Node) error { return d.fault(fn, &out[i]) }); err != nil {
			return err
		}
	}
	*dst = out
	return nil
}

// fault decodes one item of faults into f.
func (d *decoder) fault(fn *yaml.Node, f *Fault) error {
	f.Line, f.lines = d.at(deref(fn).Line), map[string]int{}
	if err := d.listItem(fn, reflect.ValueOf(f), "fault", f.lines); err != nil {
		return err
	}
	switch {
	case f.Kind == "":
		return d.errf(f.Line, "fault has no kind (one of %s)", strings.Join(kindNames(), ", "))
	case f.lines["at"] == 0 && f.lines["every"] == 0:
		return d.errf(f.Line, "fault %s has neither at: nor every:", f.Kind)
	case f.lines["at"] == 0:
		f.At = f.Every
	}
	return nil
}

func (d *decoder) faultKind(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err != nil {
		return err
	}
	if k := wire.FaultKind(s); !k.OnClientSide() && !k.OnServerSide() && !k.OnNetwork() {
		kinds := kindNames()
		hint := suggest(s, kinds)
		if hint == "" {
			hint = " (known: " + strings.Join(kinds, ", ") + ")"
		}
		return d.errf(deref(v).Line, "unknown %s %q%s", name, s, hint)
	}
	*dst = s
	return nil
}

func (d *decoder) faultStreams(v *yaml.Node, name string, dst *[]string) error {
	ss, _, err := d.list(v, name, MaxStreams)
	if err == nil && len(ss) == 0 {
		err = d.errf(deref(v).Line, "%s is empty: leave it out to mean every connection", name)
	}
	*dst = ss
	return err
}

// kindNames are the fault kinds of a side: client run: the replay server's,
// then the network's.
func kindNames() []string {
	var out []string
	for _, k := range append(slices.Clone(wire.FaultKinds), wire.NetworkFaultKinds...) {
		out = append(out, string(k))
	}
	return out
}

// replayFault returns the fault as the replay server takes it, its streams
// expanded over symbols.
func (f *Fault) replayFault(symbols []string) wire.Fault {
	var streams []string
	for _, t := range f.Streams {
		if !strings.Contains(t, SymbolPlaceholder) {
			streams = append(streams, t)
			continue
		}
		for _, s := range symbols {
			streams = append(streams, strings.ReplaceAll(t, SymbolPlaceholder, s))
		}
	}
	size := int(min(f.Size, math.MaxInt32)) // Validate rejects anything that large
	return wire.Fault{Kind: wire.FaultKind(f.Kind), Streams: streams, Code: f.Code, Reason: f.Reason, N: f.N,
		Status: f.Status, RetryAfter: f.RetryAfter.Std(), Size: size, For: f.For.Std(), Delay: f.Delay.Std(), Rate: int64(f.Rate)}
}

// ScheduledFaults returns the faults for the replay server's schedule:
// none on side: server, whose faults are the load client's (ServerFaults),
// and none of the network's kinds, which the controller plays on the link
// (NetworkFaults).
func (p *Profile) ScheduledFaults() []wire.ScheduledFault {
	if p.Server() {
		return nil
	}
	out := []wire.ScheduledFault{}
	for i := range p.Faults {
		f := &p.Faults[i]
		if wire.FaultKind(f.Kind).OnNetwork() {
			continue
		}
		out = append(out, wire.ScheduledFault{Fault: f.replayFault(p.Symbols), At: f.At.Std(), Every: f.Every.Std()})
	}
	return out
}

// validateFaults checks what the fault items need from the rest of the
// profile: a local target, instants inside the window, the kind's parameters
// and streams that some group subscribes.
func (d *decoder) validateFaults(p *Profile, add func(*Error)) {
	if len(p.Faults) == 0 {
		return
	}
	if p.Side == SideServer {
		d.validateServerFaults(p, add)
		return
	}
	if p.Target != TargetLocal {
		add(d.errf(d.lines["faults"], "faults need target %q: only the replay server can inject them, not %q", TargetLocal, p.Target))
		return
	}
	// With symbols as {top: N} the groups' streams are known only at the start.
	resolve := p.NeedsResolve()
	subscribed := map[string]bool{}
	if groups, err := p.Expand(); err == nil && !resolve {
		for _, g := range groups {
			for _, st := range g.Streams {
				subscribed[st.Name] = true
			}
		}
	}
	var firings int64
	for i := range p.Faults {
		f := &p.Faults[i]
		at := func(k string) int {
			if l := f.lines[k]; l > 0 {
				return l
			}
			return f.Line
		}
		if f.At >= p.Duration {
			add(d.errf(at("at"), "fault at %v is not inside the run's duration (%v)", f.At, p.Duration))
			continue
		}
		n := int64(1)
		if f.Every > 0 {
			n += int64(p.Duration-f.At-1) / int64(f.Every)
		}
		if firings += n; firings > MaxFaultFirings {
			add(d.errf(at("every"), "faults fire %d times or more in %v: at most %d in a run (every fault is logged and recorded per library)",
				firings, p.Duration, MaxFaultFirings))
			return
		}
		if wire.FaultKind(f.Kind).OnNetwork() && !p.Link.On {
			add(d.errf(at("kind"), "fault %s needs link: (the kernel plays it on the link to the replay server)", f.Kind))
			continue
		}
		if err := checkFaultTemplates(p, f.Streams); err != nil {
			add(d.errf(at("streams"), "fault %v", err))
			continue
		}
		rf := f.replayFault(p.Symbols)
		if err := rf.Validate(); err != nil {
			field := "kind"
			if fe := (*wire.FaultError)(nil); errors.As(err, &fe) {
				field = fe.Field
			}
			add(d.errf(at(field), "fault %s", err))
			continue
		}
		for _, n := range rf.Streams {
			if !resolve && !subscribed[n] {
				add(d.errf(at("streams"), "fault stream %q is not subscribed by any group", n))
				break
			}
		}
		if f.For > 0 && f.Every > 0 && f.For >= f.Every {
			add(d.errf(at("for"), "fault for %v must be shorter than every %v", f.For, f.Every))
		}
	}
}

// checkFaultTemplates checks the {symbol} templates among a fault's streams.
// They expand over the profile's symbols list, so they need one: with
// symbols given as {top: N} the server's schedule is fixed before the
// symbols are known.
func checkFaultTemplates(p *Profile, streams []string) error {
	for _, t := range streams {
		if !strings.ContainsAny(t, "{}") {
			continue
		}
		if p.Top != nil || len(p.Symbols) == 0 {
			return fmt.Errorf("streams template %q needs a symbols list; with symbols: {top: N} name the streams", t)
		}
		if _, _, err := checkTemplate(t, p.Symbols[0]); err != nil {
			return err
		}
	}
	return nil
}
