package wire

// The replay server's own endpoints, next to the Binance-like paths.
const (
	PathStats  = "/_soak/stats"  // GET: every connection since the start, open or closed
	PathFaults = "/_soak/faults" // GET: the append-only log of faults applied
)
