package profile

import (
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
	"go.yaml.in/yaml/v3"
)

// Sides of a run: which side of the WebSocket the libraries are.
const (
	SideClient = "client" // the libraries as clients of the replay server (or a live target)
	SideServer = "server" // the libraries as chat servers under a load client (package chat)
)

// ChatReadLimit is the largest message a chat server reads (package chat's
// DefaultReadLimit; the profile links no server); an oversize fault's
// default size is one byte more.
const ChatReadLimit = 1 << 20

// ChatLoad is the steady load of a side: server run: a room of N clients on
// every library's chat server, the clients together sending Rate messages a
// second of Payload bytes; a server drops a client with more than Queue
// messages waiting.
type ChatLoad struct {
	N       int      `yaml:"n" soak:"min=1,max=10000"`
	Rate    int      `yaml:"rate" soak:"min=1,max=1000000"` // messages a second sent into each room (each delivered N times)
	Payload ByteSize `yaml:"payload"`                       // bytes of a message; 0: its sequence number alone
	Queue   int      `yaml:"queue" soak:"min=1,max=1048576"`
}

// Server reports whether the run is a side: server run.
func (p *Profile) Server() bool { return p.Side == SideServer }

// side reads side: client or server.
func (d *decoder) side(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err == nil && s != SideClient && s != SideServer {
		err = d.errf(deref(v).Line, "bad %s %q: want %q or %q", name, s, SideClient, SideServer)
	}
	*dst = s
	return err
}

// validateSide checks what a side: server run needs: the local target (the
// servers run on loopback), a message no larger than a server reads, and
// the chat section only with side: server.
func (d *decoder) validateSide(p *Profile, add func(*Error)) {
	line := func(names ...string) int {
		for _, n := range names {
			if l, ok := d.lines[n]; ok {
				return l
			}
		}
		return 1
	}
	if p.Side != SideServer {
		if d.set["chat"] {
			add(d.errf(line("chat"), "chat settings apply only to side %q (the libraries as chat servers), not %q", SideServer, p.Side))
		}
		for _, f := range p.Faults {
			if k := wire.FaultKind(f.Kind); k.OnServerSide() && !k.OnClientSide() {
				l := f.lines["kind"]
				if l == 0 {
					l = f.Line
				}
				add(d.errf(l, "fault %s applies only to side %q: the load client injects it into a chat server", f.Kind, SideServer))
			}
		}
		return
	}
	if p.Target != TargetLocal {
		add(d.errf(line("target"), "side %q runs the chat servers on loopback: target must be %q, not %q", SideServer, TargetLocal, p.Target))
	}
	if p.Chat.Payload > 1<<20 {
		add(d.errf(line("chat.payload", "chat"), "chat.payload %v is larger than a chat server reads (1MiB)", p.Chat.Payload))
	}
}

// validateServerFaults checks the faults of a side: server run: the load
// client's kinds, instants inside the window, N at most the room's size.
func (d *decoder) validateServerFaults(p *Profile, add func(*Error)) {
	var firings int64
	for i := range p.Faults {
		f := &p.Faults[i]
		at := func(k string) int {
			if l := f.lines[k]; l > 0 {
				return l
			}
			return f.Line
		}
		kind := wire.FaultKind(f.Kind)
		if !kind.OnServerSide() {
			add(d.errf(at("kind"), "fault %s does not apply to side %q (the load client injects only %s)", f.Kind, SideServer, serverKindNames()))
			continue
		}
		if f.At >= p.Duration {
			add(d.errf(at("at"), "fault at %v is not inside the run's duration (%v)", f.At, p.Duration))
			continue
		}
		// The load injects faults between its ticks: one more often would
		// be thinned to one a tick (or fire in bursts), not honoured.
		if f.Every > 0 && time.Duration(f.Every) < wire.ServerTick {
			add(d.errf(at("every"), "fault %s every %v: the load client injects faults between its ticks of %v, so every must be %v or more",
				f.Kind, f.Every, wire.ServerTick, wire.ServerTick))
			continue
		}
		n := int64(1)
		if f.Every > 0 {
			n += int64(p.Duration-f.At-1) / int64(f.Every)
		}
		if firings += n; firings > MaxFaultFirings {
			add(d.errf(at("every"), "faults fire %d times or more in %v: at most %d in a run", firings, p.Duration, MaxFaultFirings))
			return
		}
		if f.N > p.Chat.N-1 {
			add(d.errf(at("n"), "fault %s n %d: at most chat.n-1 (%d) clients, one must stay in the room", f.Kind, f.N, p.Chat.N-1))
			continue
		}
		if kind == wire.FaultOversize && f.lines["size"] > 0 && (f.Size <= ChatReadLimit || f.Size > 64<<20) {
			add(d.errf(at("size"), "fault oversize size %v: want more than the servers read (1MiB) and at most 64MiB", f.Size))
			continue
		}
		for _, k := range []string{"streams", "code", "reason", "status", "retry_after", "size", "for", "delay"} {
			if f.lines[k] > 0 && (k != "size" || kind != wire.FaultOversize) {
				add(d.errf(at(k), "fault %s takes no %s on side %q (only at, every, n%s)", f.Kind, k, SideServer, map[bool]string{true: ", size"}[kind == wire.FaultOversize]))
				break
			}
		}
	}
}

// serverKindNames lists the load client's fault kinds.
func serverKindNames() string {
	names := make([]string, len(wire.ServerFaultKinds))
	for i, k := range wire.ServerFaultKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// ServerFault is a fault of a side: server run as the load client takes it.
type ServerFault struct {
	Kind  wire.FaultKind `json:"kind"`
	At    time.Duration  `json:"at"`
	Every time.Duration  `json:"every,omitempty"`
	N     int            `json:"n"`
	Size  int            `json:"size,omitempty"` // oversize: bytes of the message
}

// ServerFaults are the profile's faults for the load client (N at least 1).
func (p *Profile) ServerFaults() []ServerFault {
	var out []ServerFault
	for _, f := range p.Faults {
		sf := ServerFault{Kind: wire.FaultKind(f.Kind), At: time.Duration(f.At), Every: time.Duration(f.Every), N: max(f.N, 1)}
		if wire.FaultKind(f.Kind) == wire.FaultOversize {
			sf.Size = max(int(f.Size), ChatReadLimit+1)
		}
		out = append(out, sf)
	}
	return out
}
