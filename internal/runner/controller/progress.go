package controller

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/wssoak/wssoak/internal/terminal"
)

// ProgressWidth is the most columns a progress line takes: it fits a
// terminal of 120 columns, as the end table does.
const ProgressWidth = terminal.Width

// ProgressItem is one column's part of a progress report: its name and its
// counts, the first always shown ("1380 msg/s"), the others ("2
// reconnects") on one line only when not 0.
type ProgressItem struct {
	Name   string
	Counts []ProgressCount
}

// ProgressCount is a count and what it counts.
type ProgressCount struct {
	N    int64
	Unit string
}

func (c ProgressCount) String() string { return fmt.Sprintf("%d %s", c.N, c.Unit) }

// progress prints the progress of second k of total: each worker's last
// written second.
func (c *controller) progress(k, total int64) {
	if c.o.Progress == nil {
		return
	}
	var items []ProgressItem
	for _, w := range c.workers {
		if st := w.last; st != nil {
			items = append(items, ProgressItem{Name: w.lib, Counts: []ProgressCount{
				{st.Msgs, "msg/s"}, {st.Reconnects, "reconnects"}, {int64(w.stalls), "stalls"}}})
		}
	}
	c.Progress(fmt.Sprintf("[%4ds/%ds]", k, total), items)
}

// Progress prints a progress report headed head (the second): piped, on as
// few lines as fit ProgressWidth (one for five libraries), each ended by a
// newline; on a terminal (Options.ProgressInPlace), a block of a line per
// column drawn over the block before it, unless something else was written
// to the terminal since (then below it).
func (l *Lifecycle) Progress(head string, items []ProgressItem) {
	if l.o.Progress == nil {
		return
	}
	if l.o.ProgressInPlace {
		t, ok := l.o.Progress.(*Terminal)
		if !ok {
			t = NewTerminal(l.o.Progress)
			l.o.Progress = t
		}
		t.Draw(blockLines(head, items))
	} else {
		for _, line := range packedLines(head, items) {
			fmt.Fprintln(l.o.Progress, line)
		}
	}
	l.progressed = true
}

// packedLines are a report on as few lines as fit ProgressWidth: the head
// and the first count's unit, then each column's name and first count,
// with the others that are not 0 in parentheses, separated by ", "; a line
// that would be too wide is continued on the next, indented.
func packedLines(head string, items []ProgressItem) []string {
	if len(items) > 0 {
		head += " " + items[0].Counts[0].Unit + ":"
	}
	indent := strings.Repeat(" ", terminal.Columns(head)+1)
	var lines []string
	line := head
	for i, it := range items {
		part := fmt.Sprintf("%s %d", it.Name, it.Counts[0].N)
		var more []string
		for _, c := range it.Counts[1:] {
			if c.N != 0 {
				more = append(more, c.String())
			}
		}
		if len(more) > 0 {
			part += " (" + strings.Join(more, ", ") + ")"
		}
		sep := " "
		if i > 0 {
			sep = ", "
		}
		if i > 0 && terminal.Columns(line)+terminal.Columns(sep)+terminal.Columns(part) > ProgressWidth {
			lines = append(lines, line+",")
			line, sep = indent, ""
		}
		line += sep + part
	}
	return append(lines, line)
}

// blockLines are a report as a block: the head, then a line per column with
// every count, aligned.
func blockLines(head string, items []ProgressItem) []string {
	name := 0
	for _, it := range items {
		name = max(name, terminal.Columns(it.Name))
	}
	lines := []string{head}
	for _, it := range items {
		var b strings.Builder
		fmt.Fprintf(&b, "  %-*s", name, it.Name)
		for i, c := range it.Counts {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s", c)
		}
		lines = append(lines, terminal.Cut(b.String(), ProgressWidth))
	}
	return lines
}

// Terminal is a terminal that a progress block is drawn on, shared with
// what else is written to it (the log, the table): a block is drawn over
// the one before only when nothing was written since, so a log line is
// never overwritten, and every line, the block's too, ends with a newline.
type Terminal struct {
	mu    sync.Mutex
	w     io.Writer
	drawn int // lines of the last block, when it is still the last thing written
}

// NewTerminal returns the Terminal writing to w.
func NewTerminal(w io.Writer) *Terminal { return &Terminal{w: w} }

// Draw draws lines as the block, over the last one when it is still the
// last thing written: the cursor up to its first line ("\x1b[nF"), every
// line below cleared ("\x1b[J"), then the lines, each cut to ProgressWidth
// so that none wraps and the count of lines to go back up stays right.
func (t *Terminal) Draw(lines []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	if t.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dF\x1b[J", t.drawn)
	}
	for _, l := range lines {
		b.WriteString(terminal.Cut(l, ProgressWidth))
		b.WriteByte('\n')
	}
	_, _ = io.WriteString(t.w, b.String())
	t.drawn = len(lines)
}

// Write writes other output below the block, which is then left as it is.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drawn = 0
	return t.w.Write(p)
}

// Beside returns a writer for another stream that shows on the same
// terminal (stderr beside stdout): what it writes leaves the block as it
// is, like Write.
func (t *Terminal) Beside(w io.Writer) io.Writer { return beside{t, w} }

type beside struct {
	t *Terminal
	w io.Writer
}

func (b beside) Write(p []byte) (int, error) {
	b.t.mu.Lock()
	defer b.t.mu.Unlock()
	b.t.drawn = 0
	return b.w.Write(p)
}
