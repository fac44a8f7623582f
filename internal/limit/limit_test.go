package limit

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, bytes.Repeat([]byte("x"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile("profile", exact, 1000); err != nil || len(b) != 1000 {
		t.Fatalf("file of exactly the bound: %d bytes, %v", len(b), err)
	}
	if _, err := ReadFile("profile", exact, 999); err == nil || err.Error() != "profile "+exact+": larger than 999 B" {
		t.Fatalf("file one byte over the bound: %v", err)
	}
	if _, err := ReadFile("profile", filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) ||
		!strings.HasPrefix(err.Error(), "read profile: open ") {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := ReadFile("profile", dir, 10); err == nil || !strings.HasPrefix(err.Error(), "read profile: ") {
		t.Fatalf("a directory: %v", err)
	}
}

// A character device without end is read up to the bound, not to the end.
func TestReadFileDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadFile("ca file", "/dev/zero", 4<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != "ca file /dev/zero: larger than 4 MiB" {
		t.Fatalf("err = %v, want ca file /dev/zero: larger than 4 MiB", err)
	}
}

// A sparse file of a terabyte is refused from its size, before reading.
func TestReadFileSparse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	if _, err := ReadFile("profile", path, 4<<20); err == nil || err.Error() != "profile "+path+": larger than 4 MiB" {
		t.Fatalf("err = %v", err)
	}
}

func TestReader(t *testing.T) {
	for _, n := range []int{0, 1, 99, 100, 101, 5000} {
		src := bytes.Repeat([]byte("y"), n)
		got, err := io.ReadAll(Reader(bytes.NewReader(src), "answer", 100))
		var tl *TooLargeError
		switch {
		case n <= 100 && (err != nil || len(got) != n):
			t.Errorf("%d bytes: read %d, %v", n, len(got), err)
		case n > 100 && (!errors.As(err, &tl) || len(got) > 100 || err.Error() != "answer: larger than 100 B"):
			t.Errorf("%d bytes: read %d, %v; want at most 100 and answer: larger than 100 B", n, len(got), err)
		}
		got, err = ReadAll(bytes.NewReader(src), "answer", 100)
		if n <= 100 && (err != nil || len(got) != n) || n > 100 && !errors.As(err, &tl) {
			t.Errorf("ReadAll of %d bytes: %d, %v", n, len(got), err)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{4 << 20: "4 MiB", 64 << 10: "64 KiB", 256 << 20: "256 MiB", 1 << 30: "1 GiB", 1000: "1000 B", 1536: "1536 B"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
