package compare

import (
	"fmt"

	"github.com/wssoak/wssoak/internal/measure"
)

// Two runs of different kinds hold different things under the same names:
// a server-side soak's "Messages" are deliveries to chat clients, a client
// soak's the market messages a library read; a server bench's rates are
// deliveries per second of a chat room, a client bench's messages per
// second of a firehose. Their differences would be numbers about nothing,
// so a comparison of two kinds is refused, as one of a bench and a soak is.

// Kind is what the run is: "client soak" or "server-side soak".
func (s Side) Kind() string {
	if s.Run.Settings["side"] == measure.SideServer {
		return "server-side soak"
	}
	return "client soak"
}

// Check refuses a and b when they are not of one kind (Kind), naming both.
func Check(a, b Side) error {
	return sameKind(a.Path, a.Kind(), b.Path, b.Kind())
}

// Kind is what the bench is: "server bench" (the libraries as chat
// servers) or "client bench"; by its record, else by the runs it holds.
func (s BenchSide) Kind() string {
	switch {
	case s.Run.Settings["side"] == measure.SideServer:
		return "server bench"
	case s.Run.Settings["side"] == "" && len(s.Aggs) > 0 && s.agg(measure.ClientBench) == nil:
		return "server bench" // recorded before benches named their side
	}
	return "client bench"
}

// CheckBench refuses a and b when they are not of one kind (Kind), naming both.
func CheckBench(a, b BenchSide) error {
	return sameKind(a.Path, a.Kind(), b.Path, b.Kind())
}

func sameKind(pa, ka, pb, kb string) error {
	if ka == kb {
		return nil
	}
	return fmt.Errorf("compare: %s is a %s and %s a %s: compare two runs of one kind", pa, ka, pb, kb)
}
