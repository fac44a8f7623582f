package wire

// EventKind names what happened in an event: a worker's connection events
// (sent in its frames), the controller's own (about the workers, the
// replay server's faults and the database) and the server-side soak's (the
// load client's notices about the chat servers). The events table stores it
// as text.
type EventKind string

// The worker's event kinds.
const (
	EventDial           EventKind = "dial"            // a dial starts; detail: the attempt
	EventDialError      EventKind = "dial_error"      // the dial failed; detail: cause: specifics
	EventConnected      EventKind = "connected"       // the handshake succeeded
	EventSubscribed     EventKind = "subscribed"      // the SUBSCRIBE messages were written
	EventFirstData      EventKind = "first_data"      // the first data message on a connection
	EventReconnect      EventKind = "reconnect"       // every subscription delivered again after a loss; detail: phases, lost=, back=
	EventDisconnected   EventKind = "disconnected"    // a connection was lost (the slot reconnects)
	EventClosed         EventKind = "closed"          // a connection ended with the run
	EventStall          EventKind = "stall"           // a subscription silent past its threshold
	EventStallEnd       EventKind = "stall_end"       // data came back on a stalled subscription
	EventUnrepairable   EventKind = "unrepairable"    // the profile's unrepairable rule fired on a slot
	EventServerShutdown EventKind = "server_shutdown" // the server announced its shutdown
)

// The controller's event kinds.
const (
	EventWorkerHung    EventKind = "worker_hung"    // no frame for the worker timeout: killed
	EventWorkerExit    EventKind = "worker_exit"    // a worker died on its own
	EventWorkerRestart EventKind = "worker_restart" // a dead worker was started again
	EventFault         EventKind = "fault"          // the replay server applied a fault (events.fault holds its kind)
	EventOutage        EventKind = "outage"         // the controller was down (a resumed run)
	EventWriteFailed   EventKind = "write_failed"   // database writes failed for a while
	EventMissing       EventKind = "missing"        // seconds not recorded because writes failed
	EventWireTruth     EventKind = "wire_truth"     // a local run's end: a library's frame bytes read against the replay server's written; detail: the check
)

// The server-side soak's event kinds, besides EventFault (a fault the load
// client injected), EventReconnect (clients back after a reset or an
// oversize close) and EventDisconnected (one per client so closed).
const (
	EventDropped   EventKind = "dropped"    // a server dropped slow clients (Code: how many; Fault: slow_reader or half_open)
	EventTruth     EventKind = "truth"      // a server's end account: Code 0 when exact, 1 when not
	EventLoadError EventKind = "load_error" // the load on a server stopped with an error
)

// EventKinds lists every kind the worker, the controller and the
// server-side soak write.
var EventKinds = []EventKind{
	EventDial, EventDialError, EventConnected, EventSubscribed, EventFirstData, EventReconnect,
	EventDisconnected, EventClosed, EventStall, EventStallEnd, EventUnrepairable, EventServerShutdown,
	EventWorkerHung, EventWorkerExit, EventWorkerRestart, EventFault, EventOutage, EventWriteFailed, EventMissing, EventWireTruth,
	EventDropped, EventTruth, EventLoadError,
}
