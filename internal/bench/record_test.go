package bench

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
)

// TestNewDir: the directory is named by the prefix and the UTC second the
// bench starts, made under out (out included), and a directory that takes
// no file is refused.
func TestNewDir(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new")
	now := time.Date(2026, 12, 3, 9, 8, 7, 0, time.FixedZone("x", 3600))
	id, dir, err := NewDir(out, ChatPrefix, now)
	if err != nil || id != "bench-chat-20261203-080807" || dir != filepath.Join(out, id) {
		t.Fatalf("NewDir: %q %q %v; want bench-chat-20261203-080807 under %s", id, dir, err, out)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		t.Errorf("%s: %v, %v; want an empty directory (the probe removed)", dir, entries, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := NewDir(file, ClientPrefix, now); err == nil {
		t.Errorf("NewDir under a file: no error")
	}
}

// TestWriteRun: a bench's soak.db is a run of kind bench with its config in
// the settings, done, or failed with the run's error.
func TestWriteRun(t *testing.T) {
	for _, runErr := range []error{nil, errors.New("scenario depth: firehose process: exit 1")} {
		path := filepath.Join(t.TempDir(), "soak.db")
		run := store.Run{ID: "bench-x", Name: "bench", Target: "firehose", Settings: map[string]string{"sweep": "2KB..4KB"}}
		wrote := false
		if err := writeRun(path, run, Config{Runs: 3}, runErr, func(*store.DB) error { wrote = true; return nil }); err != nil || !wrote {
			t.Fatalf("writeRun: %v, rows written %v", err, wrote)
		}
		db, err := store.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Run()
		kind, kerr := db.Kind()
		db.Close()
		want := "done"
		if runErr != nil {
			want = "failed: " + runErr.Error()
		}
		if err != nil || kerr != nil || kind != store.KindBench || got.Status != want || got.Settings["sweep"] != "2KB..4KB" ||
			!strings.Contains(got.Settings["config"], `"Runs":3`) || got.GoVersion == "" {
			t.Errorf("run %+v (%v), kind %q (%v); want kind bench, status %q, the sweep, the config and the Go version", got, err, kind, kerr, want)
		}
	}
}

// TestChatPin: the server bench is pinned where asked when this machine
// has the CPUs, not pinned with none or when a CPU is missing (said in a
// note), and by default on CPUs 0 and 1 when it has both.
func TestChatPin(t *testing.T) {
	have := UsableCPUs()
	var c ChatConfig
	if notes := c.Pin(profile.CPUs{}, true); c.ServerCPUs != nil || len(notes) != 1 || !strings.Contains(notes[0], "-cpus none") {
		t.Errorf("none: pinned %v, notes %q; want not pinned, said once", c.ServerCPUs, notes)
	}
	c = ChatConfig{}
	far := profile.CPUs{Server: []int{0}, Client: []int{profile.MaxCPU}}
	if notes := c.Pin(far, false); c.ServerCPUs != nil || len(notes) != 1 || !strings.Contains(notes[0], "lacks CPU(s) [1023]") {
		t.Errorf("CPU %d: pinned %v, notes %q; want not pinned, the missing CPU named", profile.MaxCPU, c.ServerCPUs, notes)
	}
	c = ChatConfig{}
	notes := c.Pin(profile.CPUs{}, false)
	if have[0] && have[1] {
		if !slices.Equal(c.ServerCPUs, []int{0}) || !slices.Equal(c.ClientCPUs, []int{1}) || len(notes) != 1 || !strings.HasPrefix(notes[0], "pinned: ") {
			t.Errorf("default: servers %v, load %v, notes %q; want 0 and 1, said once", c.ServerCPUs, c.ClientCPUs, notes)
		}
	} else if c.ServerCPUs != nil || len(notes) != 1 {
		t.Errorf("default on a machine without CPU 0 or 1: pinned %v, notes %q", c.ServerCPUs, notes)
	}
}

// TestEffectiveRcvBuf: the header says what the kernel made of SO_RCVBUF
// (read back by the clients), not only what was asked (-rcvbuf 1 is 2304
// bytes on Linux: its minimum).
func TestEffectiveRcvBuf(t *testing.T) {
	for _, tt := range []struct {
		rs   []Result
		want string
	}{
		{nil, ""},
		{[]Result{{RcvBuf: 0}}, ""},
		{[]Result{{RcvBuf: 2304}, {RcvBuf: 2304}}, ", effective 2304 bytes (getsockopt)"},
		{[]Result{{RcvBuf: 4608}, {RcvBuf: 2304}, {}}, ", effective 2304–4608 bytes (getsockopt)"},
	} {
		if got := effectiveRcvBuf(tt.rs); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.rs, got, tt.want)
		}
	}
}
