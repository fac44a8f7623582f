// Package limit holds the size bounds of what the tool reads — the files a
// user names (profile, certificates) and the answers of servers it asks —
// and the reader that enforces them: past its bound a read stops with an
// error naming what was read, never growing without end (a profile
// /dev/zero, a CA file that is really a disk image).
package limit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Bounds of what the tool reads. A real profile is a few KiB (100,000
// symbols, the most a profile may list, take about 1.5 MiB); a CA bundle of
// every public root is about 250 KiB.
const (
	ProfileFile  = 4 << 20   // a profile
	PEMFile      = 4 << 20   // a CA file (tls.ca), a certificate or key file (soak serve -cert, -key)
	ServerAnswer = 256 << 20 // a JSON answer of the local replay server (/_soak/stats, /_soak/faults)
	RESTAnswer   = 64 << 20  // GET /api/v3/ticker/24hr (about 1 MiB on binance.com)
	ProxyAnswer  = 64 << 10  // the status line and headers of an HTTP proxy's answer to CONNECT
)

// TooLargeError is a read stopped at its bound.
type TooLargeError struct {
	What string // "profile /dev/zero", "get http://127.0.0.1:9443/_soak/stats"
	Max  int64
}

func (e *TooLargeError) Error() string { return e.What + ": larger than " + Size(e.Max) }

// ReadFile returns the contents of the file at path, at most max bytes;
// what names the file in errors: "read profile: open x.yaml: no such file or
// directory", "profile /dev/zero: larger than 4 MiB". A regular file larger
// than max is refused before reading; anything else (a device, a pipe) is
// read up to the bound.
func ReadFile(what, path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	name := what + " " + path
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, &TooLargeError{What: name, Max: max}
	}
	data, err := ReadAll(f, name, max)
	if err != nil && !errors.As(err, new(*TooLargeError)) {
		return nil, fmt.Errorf("read %s: %w", what, err) // a *PathError: it names the file
	}
	return data, err
}

// ReadAll reads r to its end, at most max bytes; past the bound the error is
// a *TooLargeError naming what.
func ReadAll(r io.Reader, what string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{What: what, Max: max}
	}
	return data, nil
}

// Reader returns a reader of at most max bytes of r, for a decoder that reads
// as it goes; past the bound its Read returns a *TooLargeError naming what.
func Reader(r io.Reader, what string, max int64) io.Reader {
	return &reader{r: r, what: what, left: max, max: max}
}

type reader struct {
	r         io.Reader
	what      string
	left, max int64
}

func (l *reader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{What: l.what, Max: l.max}
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1] // one byte more than allowed tells "larger" from "exactly max"
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), &TooLargeError{What: l.what, Max: l.max}
	}
	return n, err
}

// Size formats a byte count as the bounds are written: "4 MiB", "64 KiB", "100 B".
func Size(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
