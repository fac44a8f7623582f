package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLock: a second lock of a directory (another open file description,
// as another process would have) is refused at once, naming the owner's
// pid; once released, it is taken again.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	l, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = TakeLock(dir)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Pid != os.Getpid() || !strings.Contains(err.Error(), dir) ||
		!strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v; want a BusyError naming %s and pid %d", err, dir, os.Getpid())
	}
	l.Release()
	l.Release() // twice is harmless
	l2, err := TakeLock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.Release()
	if fi, err := os.Stat(filepath.Join(dir, LockName)); err != nil || fi.Mode().Perm() != Perm {
		t.Errorf("lock file: %v %v; want mode %v", fi, err, Perm)
	}
}

// TestWriteFileReplacesSymlink: WriteFile replaces a symlink at the name
// (its target unchanged), writes mode 0600, and a failed fill leaves the
// previous file and no temporary file.
func TestWriteFileReplacesSymlink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "target")
	if err := os.WriteFile(target, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out.csv")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	write := func(s string, fail error) error {
		return WriteFile(path, func(w io.Writer) error {
			if _, err := io.WriteString(w, s); err != nil {
				return err
			}
			return fail
		})
	}
	if err := write("ours", nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "theirs" {
		t.Errorf("the symlink's target now holds %q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != Perm {
		t.Errorf("%s: %v %v; want a regular file, mode %v", path, fi, err, Perm)
	}
	if err := write("half", errors.New("disk full")); err == nil {
		t.Error("a failed fill returned nil")
	}
	if b, _ := os.ReadFile(path); string(b) != "ours" {
		t.Errorf("after a failed write the file holds %q, want the previous one", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left in the directory: %v", ents)
	}
	// Create refuses an existing run directory.
	if _, err := Create(dir, "out.csv"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("Create over an existing name: %v", err)
	}
	run, err := Create(filepath.Join(dir, "runs"), "r1")
	if fi, _ := os.Stat(run); err != nil || fi.Mode().Perm() != DirPerm {
		t.Errorf("Create: %v, mode %v; want %v", err, fi.Mode().Perm(), DirPerm)
	}
}
