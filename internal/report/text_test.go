package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/report/synth"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/verdict"
	"github.com/wssoak/wssoak/internal/wire"
)

// localFindings are the findings of a synthetic 3-minute run of libs, its
// check rows with the cells a local run has (the wire and the server's
// counts compared, as soak run printed them on 2026-12-03): the widest
// cells of a real table.
func localFindings(t *testing.T, libs []string) Findings {
	t.Helper()
	p := filepath.Join(t.TempDir(), "soak.db")
	if err := synth.Write(p, synth.Config{Duration: 3 * time.Minute, Libs: libs, Symbols: 5, Reconnects: 4, Faults: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenReadOnly(p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := measure.Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := db.Workers()
	if err != nil {
		t.Fatal(err)
	}
	tbl := res.EndTable()
	for i := range tbl.Rows {
		r := &tbl.Rows[i]
		for j := range r.Cells {
			switch r.ID {
			case "wire_truth":
				r.Cells[j], r.Nums[j] = "✓ 35.0 MB on 3 slots; close echo unread ×3 (39 B)", 0
				if tbl.Libs[j] == "coder" {
					r.Cells[j] = "✓ 35.0 MB on 3 slots; close echo read ×3"
				}
			case "server_truth":
				r.Cells[j], r.Nums[j] = "✓ 31 subscriptions", 0
			case "wire_bytes":
				r.Cells[j], r.Nums[j] = "35.0 MB / 1.02", 35e6
			case "dials":
				r.Cells[j], r.Nums[j] = "3 / 0", 0
			}
		}
	}
	return Findings{Table: tbl, Ranking: ranking.Compute(res), Checks: verdict.Checks(tbl, ws, nil)}
}

// checkWidth fails for every line of out wider than TextWidth (in runes:
// what a terminal shows, not bytes) and for a carriage return or an escape
// code.
func checkWidth(t *testing.T, name, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > TextWidth {
			t.Errorf("%s: line %d is %d columns wide: %q", name, i+1, n, line)
		}
	}
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("%s: a carriage return or an escape code in %q", name, out)
	}
}

// TestFittedTable: the end table of five libraries, and of seven columns
// (five and two variants), fits 120 columns — every line, the notes, the
// checks and the summary too — against testdata/fitted-5.golden and
// fitted-7.golden: short row names, the rows whose full cells do not fit
// printed short and numbered, each with its full cells in a note, a
// column's name over two lines where it is wider than its column. -wide
// prints every full cell in the table.
func TestFittedTable(t *testing.T) {
	// The five libraries the goldens were made with (wire.Libraries has a
	// sixth since, nbio: seven columns cover six's width).
	five := []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"}
	seven := append(slices.Clone(five), "gorilla-gc25", "gorilla-gc400")
	for _, tc := range []struct {
		golden string
		libs   []string
	}{{"fitted-5.golden", five}, {"fitted-7.golden", seven}} {
		f := localFindings(t, tc.libs)
		var buf bytes.Buffer
		WriteFindings(&buf, f, TextOptions{})
		out := buf.String()
		checkWidth(t, tc.golden, out)
		checkGolden(t, tc.golden, buf.Bytes())
		// Every cell printed short is in a note, in full.
		for _, want := range []string{"✓ 35.0 MB on 3 slots; close echo unread ×3 (39 B)", "coder: ✓ 35.0 MB on 3 slots; close echo read ×3"} {
			if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
				t.Errorf("%s: no note holds %q", tc.golden, want)
			}
		}
		var wide bytes.Buffer
		WriteFindings(&wide, f, TextOptions{Wide: true})
		if !strings.Contains(wide.String(), "Wire bytes: client = server  ") || strings.Contains(wide.String(), "Notes:") {
			t.Errorf("%s: -wide is not the full table:\n%s", tc.golden, wide.String())
		}
	}
	// The default soak's libraries (wire.Libraries) fit too.
	var buf bytes.Buffer
	WriteFindings(&buf, localFindings(t, nil), TextOptions{})
	checkWidth(t, "wire.Libraries", buf.String())
	if !strings.Contains(buf.String(), "nbio") {
		t.Errorf("the default libraries' table names no nbio:\n%s", buf.String())
	}
	if lines := strings.Split(readGolden(t, "fitted-7.golden"), "\n"); !strings.Contains(lines[0], "gorilla-") || !strings.Contains(lines[1], "gc25") {
		t.Errorf("fitted-7.golden: the variants' names are not over two lines:\n%s\n%s", lines[0], lines[1])
	}
}

// TestFittedTableInParts: twelve columns leave each too little room: the
// table is printed in parts of as many columns as fit, every column once,
// every line within 120 columns.
func TestFittedTableInParts(t *testing.T) {
	libs := slices.Clone(wire.Libraries)
	for i := range 7 {
		libs = append(libs, fmt.Sprintf("gorilla-gc%d", 100+i*50))
	}
	f := localFindings(t, libs)
	var buf bytes.Buffer
	WriteFindings(&buf, f, TextOptions{})
	out := buf.String()
	checkWidth(t, "twelve columns", out)
	heads := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Messages / data") {
			heads++
		}
	}
	if heads < 2 {
		t.Errorf("twelve columns in %d part(s), want 2 or more:\n%s", heads, out)
	}
	var head []string // the names over the columns: the lines that begin blank
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, strings.Repeat(" ", 20)) {
			head = append(head, strings.Fields(l)...)
		}
	}
	for _, lib := range libs {
		_, last, _ := strings.Cut(lib, "-")
		if !slices.Contains(head, lib) && !slices.Contains(head, last) {
			t.Errorf("column %s not named in %v", lib, head)
		}
	}
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
