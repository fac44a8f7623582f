package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
)

// TestResumeRefusesServerSide: a side: server run whose controller died is
// not resumed (its rooms would start anew), and says so; the refusal leaves
// the run directory unlocked (a second try says the same, not "busy") and
// its lock file as it was (it keeps the owner's pid: a refused resume is no
// owner).
func TestResumeRefusesServerSide(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	err = db.CreateRun(store.Run{ID: "20260101-000000-server", Name: "server", Status: "running", Started: time.Now(), Planned: time.Minute,
		ProfileText: "name: server\nside: server\n", Settings: map[string]string{"plan": `{"local":true,"side":"server"}`, "side": "server"}})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.LockName), []byte("4242\n"), rundir.Perm); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := Run(context.Background(), Options{Resume: dir})
		want := "resume " + dir + ": a side: server run cannot be resumed (its rooms start anew)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume: %v; want %q", err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, rundir.LockName)); err != nil || string(b) != "4242\n" {
		t.Errorf("lock file after the refusals: %q, %v; want it untouched", b, err)
	}
}
