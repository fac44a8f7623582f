package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// oldBench copies testdata's soak.db of a bench that the soak of commit
// 86da855 wrote (internal/store/testdata/<name>-86da855.db) into a bench
// directory of its own, and returns the directory and the table that soak
// printed then.
func oldBench(t *testing.T, name, dirName string) (string, string) {
	t.Helper()
	src := filepath.Join("..", "..", "internal", "store", "testdata", name+"-86da855")
	b, err := os.ReadFile(src + ".db")
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(src + ".table.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), dirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "soak.db"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, string(table)
}

// readCSV reads an exported CSV file as rows of column → cell.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	recs := readCSVFile(t, path)
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

// TestOldChatBench: the soak.db of soak bench -side server written by the
// soak of commit 86da855 (its runs squeezed into bench_results) still
// reports, exports and compares, as chat results with their own measures:
// the numbers are those the table of that soak printed.
func TestOldChatBench(t *testing.T) {
	dir, table := oldBench(t, "chat", "bench-chat-20261203-082100")
	// The table then: N, library, deliveries/s median min–max, server CPU µs/delivery, …
	row := regexp.MustCompile(`(?m)^(\d+) +(\w+) +(\S+) (\S+)–(\S+) +([0-9.]+) `)
	rows := row.FindAllStringSubmatch(table, -1)
	if len(rows) != 4 {
		t.Fatalf("the table of 86da855 has %d rows, want 4:\n%s", len(rows), table)
	}
	if _, stderr, err := runSoak(t, "report", dir); err != nil {
		t.Fatalf("soak report: %v\n%s", err, stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`soak.draw("s0-chat_delivery_rate"`, `soak.draw("s1-chat_server_cpu_per_delivery"`,
		"chat N=2: deliveries/s", "chat N=4: server CPU µs/delivery", "<td>chat N=4</td><td>server</td>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, r := range rows {
		if want := "(" + r[6] + " µs)"; !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks N=%s %s's server CPU %s", r[1], r[2], want)
		}
	}
	if out, stderr, err := runSoak(t, "export", dir); err != nil || !strings.Contains(out, "chat_results.csv\t8 rows") {
		t.Fatalf("soak export: %v\n%s%s", err, out, stderr)
	}
	got := readCSV(t, filepath.Join(dir, "chat_results.csv"))
	for _, r := range rows {
		found := false
		for _, g := range got {
			if g["clients"] == r[1] && g["lib"] == r[2] && g["round"] == "1" {
				found = true
				cpu, err := strconv.ParseFloat(g["server_cpu_us_per_delivery"], 64)
				if g["valid"] != "1" || err != nil || fmt.Sprintf("%.3f", cpu) != r[6] || g["sent"] != "" || g["lat_p99_us"] != "" {
					t.Errorf("N=%s %s: exported %v; want valid, server CPU %s µs/delivery, sent and latency not recorded", r[1], r[2], g, r[6])
				}
			}
		}
		if !found {
			t.Errorf("N=%s %s: no counted run exported", r[1], r[2])
		}
	}
	out, stderr, err := runSoak(t, "compare", dir, dir)
	if err != nil {
		t.Fatalf("soak compare: %v\n%s", err, stderr)
	}
	for _, r := range rows {
		if want := regexp.MustCompile(`(?m)^chat N=` + r[1] + ` +` + r[2] + ` .* ` + regexp.QuoteMeta(r[6]) + ` +` + regexp.QuoteMeta(r[6]) + ` +\+0\.0 %$`); !want.MatchString(out) {
			t.Errorf("compare lacks the row of N=%s %s with server CPU %s on both sides:\n%s", r[1], r[2], r[6], out)
		}
	}
	if !strings.Contains(out, "A deliveries/s") {
		t.Errorf("compare does not compare deliveries/s:\n%s", out)
	}
}

// TestOldClientBench: the soak.db of a client bench written by the soak of
// commit 86da855 (before a row's encoding and compression had columns)
// still reports, exports and compares with the numbers of its table.
func TestOldClientBench(t *testing.T) {
	dir, table := oldBench(t, "client", "bench-20261203-082100")
	cell := regexp.MustCompile(`(?m)^aggTrade +bare +(\S+ \S+–\S+ \(([0-9.]+) µs\))`).FindStringSubmatch(table)
	if cell == nil {
		t.Fatalf("no aggTrade bare row in the table of 86da855:\n%s", table)
	}
	if _, stderr, err := runSoak(t, "report", dir); err != nil {
		t.Fatalf("soak report: %v\n%s", err, stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "<td>aggTrade</td><td>bare</td><td>" + cell[1] + "</td>"; !strings.Contains(string(page), want) {
		t.Errorf("report.html lacks %q", want)
	}
	if out, stderr, err := runSoak(t, "export", dir); err != nil || !strings.Contains(out, "bench_results.csv\t6 rows") {
		t.Fatalf("soak export: %v\n%s%s", err, out, stderr)
	}
	for _, g := range readCSV(t, filepath.Join(dir, "bench_results.csv")) {
		if g["scenario"] != "aggTrade" || g["compression"] != "off" || g["encoding"] != "" {
			t.Errorf("exported row %v: want scenario aggTrade, compression off, no encoding", g)
		}
		if g["lib"] == "raw" && g["wire_bytes_per_msg"] != "" {
			t.Errorf("raw row %v: frame bytes per message not counted, want empty", g)
		}
	}
	out, stderr, err := runSoak(t, "compare", dir, dir)
	if err != nil {
		t.Fatalf("soak compare: %v\n%s", err, stderr)
	}
	if !regexp.MustCompile(`(?m)^aggTrade +bare +gorilla .* ` + regexp.QuoteMeta(cell[2]) + ` +` + regexp.QuoteMeta(cell[2]) + ` +\+0\.0 %$`).MatchString(out) {
		t.Errorf("compare lacks gorilla's row with CPU %s µs/msg on both sides:\n%s", cell[2], out)
	}
}
