// Package wire is what the processes of a run share: the plan a controller
// hands its workers, the frames a worker sends back, the tag that names a
// connection to the replay server, the server's own endpoint paths, and the
// kinds of events and faults. Of the project it imports only
// internal/binance (a fault's streams are checked against their sequence
// rules), which sits below every role, so the worker, the controller and the
// replay server can all depend on it.
package wire
