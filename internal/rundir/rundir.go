// Package rundir is how soak treats the directories it writes into: a run
// directory is private to its owner (0700, files 0600: it holds the
// profile, logs and a throwaway key), has one owner at a time (a lock that
// dies with its process), and every file soak writes there or into a
// directory the user names is replaced by a rename, so a symlink planted at
// the name is replaced, never followed.
package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Perm is the mode of every file soak writes; DirPerm that of a run directory.
const (
	Perm    fs.FileMode = 0o600
	DirPerm fs.FileMode = 0o700
)

// LockName is the lock file's name inside a run directory.
const LockName = "lock"

// Create makes the run directory parent/name (and parent if missing), mode
// DirPerm. The directory must not exist yet: two runs never share one.
func Create(parent, name string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("create run dir: %w", err)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, DirPerm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create run dir: %s exists already (a run of the same name started in the same second?)", dir)
		}
		return "", fmt.Errorf("create run dir: %w", err)
	}
	return dir, nil
}

// Use makes the run directory dir, mode DirPerm, or takes it as it is when
// it exists and is a directory (soak run -dir: a service's state directory
// made beforehand); the database file created in it must not exist yet.
func Use(dir string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("create run dir: %w", err)
	}
	if err := os.Mkdir(dir, DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create run dir: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("create run dir: %s is not a directory", dir)
	}
	return dir, nil
}

// CreateEmpty creates the file path, mode Perm, empty; it must not exist (a
// symlink there is an error, not followed).
func CreateEmpty(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, Perm)
	if err != nil {
		return err
	}
	return f.Close()
}

// OpenAppend opens path for appending (a log), creating it with mode Perm;
// a symlink at path is an error, not followed.
func OpenAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW, Perm)
}

// WriteFile writes path through fill, atomically: into a temporary file in
// the same directory, mode Perm, renamed over path once complete. A reader
// sees the old file or the new one, never half; a failed write leaves the
// old one; and a symlink at path is replaced by the file, its target left
// untouched. Anything else at path (a directory, a device such as
// /dev/full, a pipe, a socket) is refused: the rename would replace it. An
// error names path and, when the directory is what is wrong (missing, not a
// directory, not writable), the directory; never the temporary file, which
// the user did not name and which is gone.
func WriteFile(path string, fill func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return dirError(path, dir, err)
	}
	if err := replaceable(path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return dirError(path, dir, err)
	}
	defer os.Remove(tmp.Name()) // after the rename this finds nothing
	if err := fill(tmp); err != nil {
		tmp.Close()
		return renamed(err, tmp.Name(), path)
	}
	if err := tmp.Chmod(Perm); err != nil { // CreateTemp's mode already, whatever the umask did
		tmp.Close()
		return renamed(err, tmp.Name(), path)
	}
	if err := tmp.Close(); err != nil {
		return renamed(err, tmp.Name(), path)
	}
	if err := replaceable(path); err != nil { // it may have appeared meanwhile
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return renamed(err, tmp.Name(), path)
	}
	return nil
}

// dirError is why no file could be created in dir to write path: the
// directory is missing, is not a directory, or refuses (permissions, a
// read-only mount). err is what failed (nil: dir is not a directory).
func dirError(path, dir string, err error) error {
	fi, serr := os.Stat(dir)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return fmt.Errorf("%s: directory %s does not exist", path, dir)
	case serr == nil && !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // its path is the temporary file's, or dir
	}
	return fmt.Errorf("%s: cannot create a file in directory %s: %w", path, dir, err)
}

// renamed is err with the temporary file's name (in a *fs.PathError or a
// *os.LinkError) replaced by path, the file being written.
func renamed(err error, tmp, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) && le.Old == tmp {
		return fmt.Errorf("%s: %w", path, le.Err)
	}
	return err
}

// replaceable returns nil when path does not exist or is a regular file or a
// symlink, which WriteFile's rename replaces; else an error naming what is
// there.
func replaceable(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	var what string
	switch m := fi.Mode(); {
	case m.IsRegular(), m&fs.ModeSymlink != 0:
		return nil
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	default:
		what = "not a regular file"
	}
	return fmt.Errorf("%s is %s: want the name of a file to write", path, what)
}

// Writable returns nil when this process may write path (a file, or a
// directory to create files in), else why not: a read-only mount, another
// user's file.
func Writable(path string) error {
	if err := unix.Access(path, unix.W_OK); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// Lock is the ownership of a run directory, held by the process that
// writes the run (soak run, soak run -resume). It is a flock(2) on the
// directory's lock file: the kernel drops it when the process dies, however
// it dies, so a crashed run never stays locked.
type Lock struct {
	f *os.File
}

// BusyError is a run directory that another process owns.
type BusyError struct {
	Dir string
	Pid int // 0: unknown
}

func (e *BusyError) Error() string {
	owner := "another soak process"
	if e.Pid > 0 {
		owner += " (pid " + strconv.Itoa(e.Pid) + ")"
	}
	return fmt.Sprintf("run directory %s is in use by %s, which holds %s: one process at a time writes a run",
		e.Dir, owner, filepath.Join(e.Dir, LockName))
}

// TakeLock takes the run directory's lock without waiting: a *BusyError
// when another process holds it. The lock file keeps the owner's pid.
func TakeLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, Perm)
	if err != nil {
		return nil, fmt.Errorf("lock run dir: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &BusyError{Dir: dir, Pid: pid}
		}
		return nil, fmt.Errorf("lock run dir: %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) // the pid is for the message only
	}
	return &Lock{f: f}, nil
}

// Release gives the directory up (closing the file drops the flock). Safe
// on a nil Lock and more than once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close()
	l.f = nil
}

// Held says whether a process holds the run directory's lock (soak run or
// soak run -resume writing the run, this process included) without taking
// it: false when no lock file is there. It opens the file read-only, so a
// run on a read-only volume is answered too.
func Held(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}
