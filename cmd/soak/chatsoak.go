package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/wssoak/wssoak/internal/chat"
)

// chatSoakCmd is the hidden load process of a side: server run: a
// chat.SoakConfig as the first line of stdin, then a chat.SoakRecord per
// line on stdout (seconds, events, each room's end). It stops when stdin
// closes (the controller ended or died).
func chatSoakCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("chatsoak", stdout, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("chatsoak: read config: %w", err)
	}
	var cfg chat.SoakConfig
	if err := json.Unmarshal(line, &cfg); err != nil {
		return fmt.Errorf("chatsoak: read config: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, in)
		cancel()
	}()
	w := bufio.NewWriter(stdout)
	var werr error
	chat.RunSoak(ctx, cfg, func(r chat.SoakRecord) {
		b, _ := json.Marshal(r)
		if _, err := w.Write(append(b, '\n')); err != nil && werr == nil {
			werr = err
		}
		if err := w.Flush(); err != nil && werr == nil {
			werr = err
		}
	})
	return werr
}
