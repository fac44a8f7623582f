package compare

import (
	"testing"

	"github.com/wssoak/wssoak/internal/store"
)

// TestCheckKinds: a server-side soak and a client soak, or a server (chat)
// bench and a client bench, are refused with one line naming both runs and
// both kinds; two runs of one kind pass.
func TestCheckKinds(t *testing.T) {
	client := Side{Path: "out/client", Run: store.Run{ID: "c"}}
	server := Side{Path: "out/server", Run: store.Run{ID: "s", Settings: map[string]string{"side": "server"}}}
	for _, c := range []struct {
		a, b Side
		want string
	}{
		{client, client, ""},
		{server, server, ""},
		{server, client, "compare: out/server is a server-side soak and out/client a client soak: compare two runs of one kind"},
		{client, server, "compare: out/client is a client soak and out/server a server-side soak: compare two runs of one kind"},
	} {
		err := Check(c.a, c.b)
		if got := errText(err); got != c.want {
			t.Errorf("Check(%s, %s) = %q, want %q", c.a.Path, c.b.Path, got, c.want)
		}
	}

	clientBench, err := LoadBench(benchDB(t, 10_000_000, false), "out/cb")
	if err != nil {
		t.Fatal(err)
	}
	chat, err := LoadBench(chatDB(t, map[string]string{"side": "server"}), "out/chat")
	if err != nil {
		t.Fatal(err)
	}
	unnamed, err := LoadBench(chatDB(t, nil), "out/old-chat") // a chat bench that did not record its side
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b BenchSide
		want string
	}{
		{clientBench, clientBench, ""},
		{chat, unnamed, ""},
		{chat, clientBench, "compare: out/chat is a server bench and out/cb a client bench: compare two runs of one kind"},
		{clientBench, unnamed, "compare: out/cb is a client bench and out/old-chat a server bench: compare two runs of one kind"},
	} {
		err := CheckBench(c.a, c.b)
		if got := errText(err); got != c.want {
			t.Errorf("CheckBench(%s, %s) = %q, want %q", c.a.Path, c.b.Path, got, c.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// chatDB writes a server bench: one counted round of gorilla as a chat server.
func chatDB(t *testing.T, settings map[string]string) *store.DB {
	t.Helper()
	db := newBench(t, "chat-", settings)
	if err := db.WriteChatResults([]store.ChatResult{{Lib: "gorilla", Clients: 4, Round: 1, Valid: true, Rounds: 1, PerRound: 10,
		Sent: 40, Deliveries: 160, ServerDeliveries: 160, WallNS: 1e6}}); err != nil {
		t.Fatal(err)
	}
	return db
}
