package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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

// TestWriteFileRefusesSpecialFiles: a directory, a named pipe or a device at
// the name is refused and left as it was (as root, `soak report -o /dev/full`
// renamed the report over the device node).
func TestWriteFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	fifo := filepath.Join(dir, "fifo")
	dev := filepath.Join(dir, "full")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{sub: "is a directory", fifo: "is a named pipe"}
	if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err == nil {
		cases[dev] = "is a device"
	} else {
		t.Logf("no device node made here (%v): the device case is not checked", err)
	}
	for path, want := range cases {
		before, _ := os.Lstat(path)
		err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "report"); return err })
		if err == nil || !strings.Contains(err.Error(), path+" "+want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
		after, lerr := os.Lstat(path)
		if lerr != nil || after.Mode() != before.Mode() {
			t.Errorf("%s: %v %v after, was %v", path, after.Mode(), lerr, before.Mode())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestWriteFileNamesTheDirectory: a file written into a directory that is
// missing, is a file, or refuses new files gets an error naming the file
// asked for and the directory and what is wrong with it, never the
// temporary file the user did not name.
func TestWriteFileNamesTheDirectory(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(base, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{filepath.Join(base, "missing", "sub", "report.html"), "directory " + filepath.Join(base, "missing", "sub") + " does not exist"},
		{filepath.Join(file, "report.html"), file + " is not a directory"},
	}
	if unix.Access(ro, unix.W_OK) != nil { // root writes anywhere: the case needs a user
		cases = append(cases, struct{ path, want string }{filepath.Join(ro, "report.html"),
			"cannot create a file in directory " + ro + ": permission denied"})
	}
	for _, c := range cases {
		err := WriteFile(c.path, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
		if err == nil {
			t.Errorf("%s: written", c.path)
			continue
		}
		if want := c.path + ": " + c.want; err.Error() != want {
			t.Errorf("%s: %q\nwant %q", c.path, err, want)
		}
		if strings.Contains(err.Error(), ".tmp-") {
			t.Errorf("%s: the error names the temporary file: %v", c.path, err)
		}
	}
	// A failed fill is reported with the file's name too.
	path := filepath.Join(base, "out.csv")
	err := WriteFile(path, func(w io.Writer) error {
		f := w.(*os.File)
		f.Close() // the next write fails with the temporary file's name
		_, err := f.Write([]byte("x"))
		return err
	})
	if err == nil || strings.Contains(err.Error(), ".tmp-") || !strings.Contains(err.Error(), path) {
		t.Errorf("failed fill: %v; want an error naming %s and not the temporary file", err, path)
	}
}

// TestHeld: a run directory is held while a lock is taken (by this process
// too: another open file), not before, not after its release, and not when
// it has no lock file; asking takes no lock.
func TestHeld(t *testing.T) {
	dir := t.TempDir()
	if Held(dir) {
		t.Error("held without a lock file")
	}
	l, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !Held(dir) {
		t.Error("not held while locked")
	}
	l.Release()
	if Held(dir) {
		t.Error("held after the release")
	}
	l, err = TakeLock(dir) // asking left nothing behind
	if err != nil {
		t.Fatalf("lock after asking: %v", err)
	}
	l.Release()
}
