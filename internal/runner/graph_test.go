// Package runner holds the run's roles, one package each (controller,
// worker, serverside, and child, the launcher they start each other with); this directory's test guards the import graph of the whole
// module, the arrows of the rooms.
package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/wssoak/wssoak/"

// pkg is one package as go list describes it.
type pkg struct {
	ImportPath string
	Imports    []string // direct, not test files
	Deps       []string // every package it links, directly or not
	Standard   bool
}

// graph lists every package of the module and all it links, with one go
// list call.
func graph(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Deps,Standard", mod+"...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	g := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		g[p.ImportPath] = p
	}
	return g
}

// under reports whether path is root or a package inside it.
func under(path, root string) bool { return path == root || strings.HasPrefix(path, root+"/") }

// The packages the rules below name. Each must be somewhere in the graph,
// so that a misspelt or moved path cannot make a rule pass by naming
// nothing.
var (
	store       = mod + "internal/store"
	sqlite      = "github.com/mattn/go-sqlite3"
	replay      = mod + "internal/replay"
	controller  = mod + "internal/runner/controller"
	worker      = mod + "internal/runner/worker"
	cert        = mod + "internal/cert"
	chat        = mod + "internal/chat"
	firehose    = mod + "internal/firehose"
	profile     = mod + "internal/profile"
	transport   = mod + "internal/transport"
	wire        = mod + "internal/wire"
	binance     = mod + "internal/binance"
	runnerRoles = mod + "internal/runner"
	childPkg    = mod + "internal/runner/child"
	serverside  = mod + "internal/runner/serverside"
	measurePkg  = mod + "internal/measure"
	benchPkg    = mod + "internal/bench"
	reportPkg   = mod + "internal/report"
	cmdSoak     = mod + "cmd/soak"
	// The client libraries under test, linked through internal/transport
	// (and by the chat servers).
	clientLibs = []string{"github.com/gorilla/websocket", "github.com/gobwas/ws", "github.com/coder/websocket",
		"github.com/lxzan/gws", "github.com/fasthttp/websocket", "github.com/valyala/fasthttp"}
	renderers = []string{mod + "internal/report", mod + "internal/export", mod + "internal/compare", mod + "internal/live"}
)

// TestImportGraph: the arrows of the rooms point one way. The worker, which
// runs next to the library under test, links none of the controller's side
// (the store and SQLite, the replay server, the controller, the certificate
// code); the chat servers link no SQLite and no store; the profile, read by
// every role, links no server and no client library; the renderers link no
// role of the run; wire, the vocabulary the roles share, links of the
// project only internal/binance; nothing imports cmd/soak.
func TestImportGraph(t *testing.T) {
	g := graph(t)
	linked := map[string]bool{} // every package some package of the module links
	for _, p := range g {
		for _, d := range p.Deps {
			linked[d] = true
		}
	}
	for _, p := range slices.Concat([]string{store, sqlite, replay, controller, cert, chat, firehose, transport, binance, worker}, clientLibs) {
		if !linked[p] {
			t.Errorf("%s is linked by no package of the module: a rule naming it checks nothing", p)
		}
	}
	for _, p := range slices.Concat([]string{worker, chat, profile, wire, cmdSoak, childPkg, serverside, measurePkg, benchPkg}, renderers) {
		if _, ok := g[p]; !ok {
			t.Fatalf("go list has no package %s (listed %d packages)", p, len(g))
		}
	}
	if !slices.ContainsFunc(slices.Collect(maps.Keys(g)), func(p string) bool { return strings.HasPrefix(p, runnerRoles+"/") }) {
		t.Errorf("no package under %s: the run's roles live there", runnerRoles)
	}

	// links checks that pkg links none of banned (nor a package inside one),
	// and, as a check of the listing, that it links want.
	links := func(name string, banned []string, want string) {
		t.Helper()
		deps := g[name].Deps
		if !slices.Contains(deps, want) {
			t.Errorf("%s does not link %s: the listing is not what this test expects", name, want)
		}
		for _, d := range deps {
			if slices.ContainsFunc(banned, func(b string) bool { return under(d, b) }) {
				t.Errorf("%s links %s", name, d)
			}
		}
	}
	links(worker, []string{store, sqlite, replay, controller, cert}, transport)
	links(chat, []string{store, sqlite}, "github.com/gorilla/websocket")
	links(profile, slices.Concat([]string{replay, firehose, chat, transport}, clientLibs), wire)
	for _, r := range renderers {
		links(r, []string{runnerRoles}, store)
	}
	// The launcher starts any role, and links none of what they say or record.
	links(childPkg, []string{store, sqlite, measurePkg, controller, worker, wire}, mod+"internal/rundir")
	// The server-side soak is a role beside the client soak's controller
	// (it shares its lifecycle), not inside the worker's process.
	links(serverside, []string{worker}, controller)
	// No arrow back up: the store is below the catalogue, the catalogue
	// below the renderers and the roles, the bench below its renderers.
	links(store, []string{measurePkg, reportPkg, runnerRoles, benchPkg}, wire)
	links(measurePkg, slices.Concat([]string{runnerRoles, benchPkg}, renderers), store)
	links(benchPkg, renderers, measurePkg)

	// wire links of the project only binance and what binance links (its
	// package doc says so).
	allowed := []string{binance}
	for _, d := range g[binance].Deps {
		if under(d, strings.TrimSuffix(mod, "/")) {
			allowed = append(allowed, d)
		}
	}
	for _, d := range g[wire].Deps {
		if under(d, strings.TrimSuffix(mod, "/")) && !slices.Contains(allowed, d) {
			t.Errorf("%s links %s; of the project it may link only %v", wire, d, allowed)
		}
	}

	for _, p := range g {
		if slices.Contains(p.Imports, cmdSoak) {
			t.Errorf("%s imports %s", p.ImportPath, cmdSoak)
		}
	}
}
