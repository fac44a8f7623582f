package worker

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph: the worker role links none of the controller's side (the
// store, the replay server, the certificate code, the controller itself), so
// what runs next to the libraries under test stays small.
func TestImportGraph(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/wssoak/wssoak/internal/runner/worker").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || !slices.Contains(deps, "github.com/wssoak/wssoak/internal/wire") {
		t.Fatalf("go list -deps gave no plausible list: %q", out)
	}
	for _, bad := range []string{"store", "replay", "runner/controller", "cert"} {
		if p := "github.com/wssoak/wssoak/internal/" + bad; slices.Contains(deps, p) {
			t.Errorf("the worker package depends on %s", p)
		}
	}
}
