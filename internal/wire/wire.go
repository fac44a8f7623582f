// Package wire is what the processes of a run share: the plan a controller
// hands its workers, the frames a worker sends back, the tag that names a
// connection to the replay server, the server's own endpoint paths, and the
// kinds of events and faults. It imports nothing of the project, so the
// worker, the controller and the replay server can all depend on it.
package wire
