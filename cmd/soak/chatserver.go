package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/spelling"
)

// chatServerHelp is what soak chatserver -h prints.
var chatServerHelp = help{
	synopsis: "soak chatserver [-lib LIB] [-strategy STRATEGY] [-n N] [-addr HOST:PORT] [-queue N]",
	about: `Run one library's chat server until Ctrl-C: clients connect to / with ?name=NAME; when N
are in, every one gets "ready"; every text message m from x is sent as "x: m" to all N, x
included. A client whose queue of unsent messages passes -queue is dropped with close 1008.
Prints the address it listens on as the first line; GET /_stats returns its counts as JSON.`,
	examples: []example{
		{"soak chatserver -lib gws -n 32", "a gws room of 32 on a free loopback port"},
		{"soak chatserver -lib gorilla -n 16 -addr 127.0.0.1:9600", "a gorilla room of 16 on port 9600"},
	},
	flags: func(fs *flagSet) any { return chatServerFlags(fs) },
}

var chatAddrFlag = listenFlag{"-addr", "-addr-public", "the chat server", "127.0.0.1:9600"}

// maxChatClients bounds a room's size.
const maxChatClients = 10000

// chatServerArgs are the flags of soak chatserver.
type chatServerArgs struct {
	lib, addr  *string
	addrPublic *bool
	n, queue   *int
	strategy   *string
}

func chatServerFlags(fs *flagSet) *chatServerArgs {
	return &chatServerArgs{
		lib:        fs.String("lib", "gorilla", "the library `LIB` the server is written with: "+strings.Join(chat.Libs, ", ")),
		addr:       fs.String("addr", "127.0.0.1:0", "listen on `HOST:PORT` (loopback, port 0: a free one; see -addr-public)"),
		addrPublic: fs.Bool("addr-public", false, "allow -addr on an address other than loopback (the chat server has no authentication)"),
		n:          fs.Int("n", 32, "`N` clients in the room: \"ready\" is sent when N are in"),
		strategy:   fs.String("strategy", chat.StrategyPlain, "the write `STRATEGY`: plain (one frame per write with the library's ordinary API) or best (its own facility for a broadcast, where it has one)"),
		queue:      fs.Int("queue", chat.DefaultQueue, "`N` messages a connection may have queued; a client past it is dropped with close 1008"),
	}
}

// chatServerCmd runs one library's chat server until Ctrl-C or SIGTERM. Its
// first line on stdout is the address it listens on.
func chatServerCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("chatserver", stdout, stderr)
	a := chatServerFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := chatAddrFlag.check(*a.addr, *a.addrPublic); err != nil {
		return err
	}
	if !slices.Contains(chat.Libs, *a.lib) {
		msg := fmt.Sprintf("flag -lib: unknown library %q (known: %s)", *a.lib, strings.Join(chat.Libs, ", "))
		if near := spelling.Nearest(*a.lib, chat.Libs); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		return usageError{errors.New(msg)}
	}
	if *a.n < 1 || *a.n > maxChatClients {
		return usageError{fmt.Errorf("flag -n: %d is not a room size: want 1 to %d", *a.n, maxChatClients)}
	}
	if *a.queue < 1 || *a.queue > 1<<20 {
		return usageError{fmt.Errorf("flag -queue: %d is not a queue length: want 1 to %d", *a.queue, 1<<20)}
	}
	if err := chat.CheckStrategy(*a.lib, *a.strategy); err != nil {
		return usageError{fmt.Errorf("flag -strategy: %w", err)}
	}
	srv, err := chat.New(chat.Config{Lib: *a.lib, N: *a.n, Queue: *a.queue, Strategy: *a.strategy})
	if err != nil {
		return usageError{fmt.Errorf("flag -lib: %w", err)}
	}
	if err := srv.Listen(*a.addr); err != nil {
		return fmt.Errorf("chatserver: %w", err)
	}
	defer srv.Close()
	fmt.Fprintln(stdout, srv.Addr())
	fmt.Fprintf(stdout, "chat server %s (%s): room of %d on %s?name=NAME ; stats http://%s%s\n", *a.lib, *a.strategy, *a.n, srv.URL(), srv.Addr(), chat.StatsPath)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	st := srv.Stats(0)
	fmt.Fprintf(stdout, "deliveries %d, broadcasts %d, joined %d, dropped %d %v\n", st.Deliveries, st.Broadcasts, st.Joined, st.Drops, st.Dropped)
	return srv.Close()
}
