package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/wssoak/wssoak/internal/bench"
)

// benchClientCmd is the hidden client process of soak bench: a ClientSpec
// on stdin, one JSON result line on stdout.
func benchClientCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fset := newFlagSet("benchclient", stdout, stderr)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	var spec bench.ClientSpec
	if err := json.NewDecoder(stdin).Decode(&spec); err != nil {
		return fmt.Errorf("benchclient: read spec: %w", err)
	}
	res := bench.RunClient(ctx, spec)
	b, _ := json.Marshal(res)
	_, err := fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// benchServerCmd is the hidden firehose process of soak bench.
func benchServerCmd(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fset := newFlagSet("benchserver", stdout, stderr)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	signal.Ignore(syscall.SIGINT) // the parent ends it (stdin)
	return bench.Serve(stdin, stdout)
}
