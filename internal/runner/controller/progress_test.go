package controller

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/wire"
)

// The progress report piped: plain lines, each ended by a newline, no
// carriage return or escape code, none wider than ProgressWidth; five
// libraries on one line (the counts of 0 left out but the rate), seven
// columns (five and two variants, every count not 0) on as many as fit.
func TestProgressPiped(t *testing.T) {
	worker := func(lib string, msgs, rec int64, stalls int) *workerProc {
		return &workerProc{lib: lib, last: &wire.SecStat{Msgs: msgs, Reconnects: rec}, stalls: stalls}
	}
	five := []*workerProc{worker("gorilla", 1380, 2, 1), worker("gobwas", 1379, 0, 0), worker("coder", 1381, 0, 0),
		worker("gws", 1380, 0, 0), worker("fasthttp", 1380, 0, 0), {lib: "late"}} // no complete second yet: left out
	var buf bytes.Buffer
	c := &controller{Lifecycle: &Lifecycle{o: Options{Progress: &buf}}, workers: five}
	c.progress(10, 120)
	const want = "[  10s/120s] msg/s: gorilla 1380 (2 reconnects, 1 stalls), gobwas 1379, coder 1381, gws 1380, fasthttp 1380\n"
	if buf.String() != want {
		t.Errorf("five libraries:\n got %q\nwant %q", buf.String(), want)
	}

	seven := []*workerProc{worker("gorilla", 12380, 12, 3), worker("gobwas", 12379, 11, 3), worker("coder", 12381, 10, 3),
		worker("gws", 12380, 12, 3), worker("fasthttp", 12380, 12, 3), worker("gorilla-gc25", 12380, 12, 3), worker("gorilla-gc400", 12380, 12, 3)}
	buf.Reset()
	c = &controller{Lifecycle: &Lifecycle{o: Options{Progress: &buf}}, workers: seven}
	c.progress(100, 86400)
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 || strings.ContainsAny(out, "\r\x1b") || !strings.HasSuffix(out, "\n") {
		t.Errorf("seven columns: want several plain lines, got %q", out)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > ProgressWidth {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	for _, w := range seven {
		if !strings.Contains(out, w.lib+" 12") {
			t.Errorf("seven columns: %s missing from %q", w.lib, out)
		}
	}
}

// On a terminal: a block of a line per column, each ended by a newline;
// the next block goes back up over every line of the last and clears them,
// unless something was written since (a log line beside it on stderr, the
// table on stdout): then it is drawn below, and the log line stays.
func TestProgressTerminal(t *testing.T) {
	var tty bytes.Buffer
	term := NewTerminal(&tty)
	c := &controller{Lifecycle: &Lifecycle{o: Options{Progress: term, ProgressInPlace: true}}, workers: []*workerProc{
		{lib: "gorilla", last: &wire.SecStat{Msgs: 1380, Reconnects: 2}, stalls: 1},
		{lib: "gws", last: &wire.SecStat{Msgs: 1379}},
	}}
	block := "[  10s/120s]\n  gorilla 1380 msg/s, 2 reconnects, 1 stalls\n  gws     1379 msg/s, 0 reconnects, 0 stalls\n"
	c.progress(10, 120)
	c.progress(10, 120)
	if want := block + "\x1b[3F\x1b[J" + block; tty.String() != want {
		t.Errorf("redrawn:\n got %q\nwant %q", tty.String(), want)
	}
	tty.Reset()
	var stderr bytes.Buffer
	log := term.Beside(&stderr)
	_, _ = log.Write([]byte("level=WARN msg=x\n"))
	c.progress(20, 120)
	if strings.Contains(tty.String(), "\x1b") {
		t.Errorf("a block drawn over a log line: %q", tty.String())
	}
	_, _ = term.Write([]byte("table\n"))
	tty.Reset()
	c.progress(30, 120)
	if strings.Contains(tty.String(), "\x1b") {
		t.Errorf("a block drawn over the table: %q", tty.String())
	}

	// A writer that is not a Terminal is made one.
	var plain bytes.Buffer
	c = &controller{Lifecycle: &Lifecycle{o: Options{Progress: &plain, ProgressInPlace: true}}, workers: c.workers}
	c.progress(10, 120)
	c.progress(20, 120)
	if !strings.Contains(plain.String(), "\x1b[3F\x1b[J[  20s/120s]\n") || !c.progressed {
		t.Errorf("in place on a plain writer: %q", plain.String())
	}
}
