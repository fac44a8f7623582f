package chat

import (
	"fmt"
	"slices"
	"strings"
)

// Write strategies of a chat server: how a broadcast reaches its members'
// sockets. The ranking of the servers depends on it more than on the
// library (a server that coalesces a connection's queued messages into one
// write does a tenth of the syscalls), so each library runs both ways where
// it can, and plain is compared with plain, best with best.
const (
	// StrategyPlain writes each message as its own frame with the library's
	// ordinary API, one write per delivery: the headline table and the
	// server-side soak's default.
	StrategyPlain = "plain"
	// StrategyBest uses the library's own facility for a broadcast, where
	// it has one (Best).
	StrategyBest = "best"
)

// Strategies are the write strategies, plain first.
var Strategies = []string{StrategyPlain, StrategyBest}

// best says, per library, what its best strategy uses, or why it has none
// (none: true).
var best = map[string]struct {
	none bool
	what string
}{
	"gorilla":  {what: "PreparedMessage: a broadcast framed once, WritePreparedMessage per connection (each still flushed: one write per delivery)"},
	"fasthttp": {what: "PreparedMessage, as gorilla's (one write per delivery)"},
	"gobwas":   {what: "frame-level batching: the frames of a connection's queue into one buffer, one write per drain of the queue"},
	"gws":      {what: "Broadcaster: a broadcast framed once, each connection's write on gws's own async queue (one write per delivery)"},
	"coder":    {none: true, what: "coder writes each message with its own Write: no prepared message, broadcaster or batched write"},
	"nbio":     {none: true, what: "nbio's WebSocket Conn frames and writes each message itself (WriteMessage): no prepared message, broadcaster or batched write"},
}

// Best describes lib's best strategy, and reports whether it has one (when
// it has none, the text says why).
func Best(lib string) (what string, ok bool) {
	b, known := best[lib]
	if !known {
		return "", false
	}
	return b.what, !b.none
}

// CheckStrategy reports whether lib's server can run strategy.
func CheckStrategy(lib, strategy string) error {
	switch strategy {
	case StrategyPlain:
		return nil
	case StrategyBest:
		if what, ok := Best(lib); !ok {
			return fmt.Errorf("%s has no best write strategy: %s", lib, what)
		}
		return nil
	}
	return fmt.Errorf("unknown write strategy %q (known: %s)", strategy, strings.Join(Strategies, ", "))
}

// HasBest lists the libraries of libs that have a best strategy.
func HasBest(libs []string) []string {
	return slices.DeleteFunc(slices.Clone(libs), func(l string) bool { _, ok := Best(l); return !ok })
}

// preparedSink is a sink that writes a broadcast framed once for every
// connection (Room.prepare made p).
type preparedSink interface {
	writePrepared(p any) error
}

// handSink is a sink whose library queues and writes by itself (gws's
// Broadcaster on its async queue): the room hands each message over at
// once, with no queue or writer of its own, and counts it delivered then.
// A message is handed over whole (its bytes, or what Room.prepare made).
type handSink interface {
	hand(x *msg) error
}
