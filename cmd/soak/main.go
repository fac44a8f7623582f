// Command soak runs identical Binance market-data subscriptions through
// several Go WebSocket client libraries at once, each in its own process, and
// records throughput, memory, CPU, reconnects, silences, losses and latency.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/runner/outcome"
	"github.com/wssoak/wssoak/internal/spelling"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode prints err (once, here) and picks the exit code.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(stderr, "soak:", oneLine(endpoint.Mask(joined(err))))
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var te outcome.ThresholdError
	if errors.As(err, &te) {
		return outcome.ExitThreshold
	}
	var ie interruptedError
	if errors.As(err, &ie) {
		return exitInterrupted
	}
	return 1
}

// exitInterrupted is the exit code of soak run stopped by a signal (the first
// Ctrl-C or SIGTERM: the run is recorded as interrupted, its table printed)
// and of soak report of such a run, unless a threshold broke (3).
const exitInterrupted = 4

// interruptedError reports a run that was stopped before its end.
type interruptedError struct{ run string }

func (e interruptedError) Error() string {
	return fmt.Sprintf("run %s was interrupted before its end (exit code %d)", e.run, exitInterrupted)
}

const usage = `soak compares Go WebSocket client libraries on Binance market streams.

Usage:
  soak run [-profile FILE] [-duration D] [-libs LIBS]  a soak (default: profiles/local.yaml, 2m, embedded replay server)
  soak run -resume RUN_DIR                             continue a run whose controller died, into the same database
  soak run -http 127.0.0.1:8080 ...                    also serve the live view: the report at /, Prometheus /metrics
  soak report [-o FILE] [RUN_DIR|DB]                   write report.html beside a run's database (default: the latest)
  soak export [-format csv|ndjson] [RUN_DIR|DB]        write a run's tables as CSV or NDJSON files
  soak compare RUN_A RUN_B                             two runs' end tables side by side, with their differences
  soak bench [-scenarios LIST] [-libs LIBS]            msgs/s and CPU µs/msg per library on a full socket (-side client)
  soak bench -side server [-clients LIST]              the libraries as chat servers: deliveries/s, CPU, latency
  soak serve [-addr HOST:PORT] [-profile FILE]         the Binance-like replay server on its own
  soak firehose [-scenario NAME] [-n N]                a server that never paces: N messages a connection, then close
  soak chatserver [-lib LIB] [-n N]                    one library's chat server, to point any client at
  soak version                                         soak's version and commit, Go, and every library's version

Run 'soak <command> -h' for the flags and examples of a command.
`

// commands are soak's subcommands but soak child, which reads stdin.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"run": runCmd, "serve": serveCmd, "firehose": firehoseCmd, "bench": benchCmd, "chatserver": chatServerCmd,
	"report": reportCmd, "export": exportCmd, "compare": compareCmd, "synth": synthCmd, "version": versionCmd,
	"chatbench": chatBenchCmd, // the old name of soak bench -side server, for one release
}

// run is main without the process: testable.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{errors.New("no command given")}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "child":
		return childCmd(ctx, rest, stdin, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	if c, ok := commands[cmd]; ok {
		return c(ctx, rest, stdout, stderr)
	}
	msg := fmt.Sprintf("unknown command %q", cmd)
	if near := spelling.Nearest(strings.TrimLeft(cmd, "-"), slices.Collect(maps.Keys(commands))); near != "" && near != "synth" && near != "chatbench" {
		msg += fmt.Sprintf(": did you mean %q?", near)
	}
	return usageError{errors.New(msg + " (soak -h lists the commands)")}
}

// newLogger is the text logger of every subcommand. Whatever a log line carries (a
// target URL, a library's error) passes endpoint.Mask: no proxy password reaches a log.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Value.Kind() {
			case slog.KindString:
				a.Value = slog.StringValue(endpoint.Mask(a.Value.String()))
			case slog.KindAny:
				if err, ok := a.Value.Any().(error); ok {
					a.Value = slog.StringValue(endpoint.Mask(err.Error()))
				}
			}
			return a
		}}))
}
