package cert

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ServerFiles loads what Write wrote, and refuses a certificate or key file
// past the size bound (one that never ends, /dev/zero) naming it.
func TestServerFiles(t *testing.T) {
	a, err := New(time.Hour, LocalHosts...)
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ServerFiles(f.Cert, f.Key); err != nil {
		t.Fatalf("load what Write wrote: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := ServerFiles("/dev/zero", f.Key); err == nil || err.Error() != "certificate file /dev/zero: larger than 4 MiB" {
		t.Errorf("certificate /dev/zero: %v", err)
	}
	if _, err := ServerFiles(f.Cert, "/dev/zero"); err == nil || err.Error() != "key file /dev/zero: larger than 4 MiB" {
		t.Errorf("key /dev/zero: %v", err)
	}
	if _, err := ServerFiles(filepath.Join(t.TempDir(), "none.pem"), f.Key); err == nil {
		t.Error("a missing certificate file loaded")
	}
}
