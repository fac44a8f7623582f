package bench

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/terminal"
)

// grid is a table written as a tabwriter's (cells ended by tabs, rows by
// newlines) and laid out on Flush: wide, as a tabwriter lays it out,
// however wide; else within 120 columns (terminal.Table: in parts of as
// many columns as fit, each with the keys columns that name its rows).
type grid struct {
	w    io.Writer
	wide bool
	keys int
	buf  bytes.Buffer
}

func newGrid(w io.Writer, wide bool, keys int) *grid { return &grid{w: w, wide: wide, keys: keys} }

func (g *grid) Write(p []byte) (int, error) { return g.buf.Write(p) }

// Flush writes the table.
func (g *grid) Flush() error {
	if g.wide {
		tw := tabwriter.NewWriter(g.w, 0, 0, 2, ' ', 0)
		if _, err := tw.Write(g.buf.Bytes()); err != nil {
			return err
		}
		return tw.Flush()
	}
	var rows [][]string
	for line := range strings.Lines(g.buf.String()) {
		rows = append(rows, strings.Split(strings.TrimSuffix(line, "\n"), "\t"))
	}
	terminal.Table(g.w, rows, g.keys)
	return nil
}

// folded writes what print writes, its every line within 120 columns
// (folded on spaces) unless wide.
func folded(w io.Writer, wide bool, print func(w io.Writer)) {
	if wide {
		print(w)
		return
	}
	var b bytes.Buffer
	print(&b)
	for line := range strings.Lines(b.String()) {
		line = strings.TrimSuffix(line, "\n")
		for _, l := range terminal.Fold(line, indentOf(line)+"  ") {
			fmt.Fprintln(w, l)
		}
	}
}

// indentOf is the spaces line begins with.
func indentOf(line string) string { return line[:len(line)-len(strings.TrimLeft(line, " "))] }
