package profile

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// banned are what the profile must not depend on: the replay server, the
// store, and the client libraries (through internal/transport or directly).
var banned = []string{
	"github.com/wssoak/wssoak/internal/replay",
	"github.com/wssoak/wssoak/internal/transport",
	"github.com/wssoak/wssoak/internal/store",
	"github.com/gorilla/websocket",
	"github.com/gobwas/ws",
	"github.com/coder/websocket",
	"github.com/lxzan/gws",
	"github.com/fasthttp/websocket",
	"github.com/valyala/fasthttp",
}

// bannedDeps lists the packages pkg depends on that are banned or inside one.
func bannedDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var bad []string
	for _, d := range strings.Fields(string(out)) {
		if slices.ContainsFunc(banned, func(b string) bool { return d == b || strings.HasPrefix(d, b+"/") }) {
			bad = append(bad, d)
		}
	}
	return bad
}

// TestDeps: every role of the soak binary reads the profile; reading it
// pulls in neither the server, the store nor a client library.
func TestDeps(t *testing.T) {
	if bad := bannedDeps(t, "."); len(bad) > 0 {
		t.Errorf("profile depends on %q", bad)
	}
	// The check sees them where they are.
	if bad := bannedDeps(t, "../transport"); !slices.Contains(bad, "github.com/gorilla/websocket") {
		t.Errorf("transport's banned dependencies %q: want gorilla/websocket among them", bad)
	}
}
