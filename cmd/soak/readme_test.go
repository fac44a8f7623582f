package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README is what a newcomer reads first. These tests keep it short, keep
// the quick start (the two commands and one command per main job) on its first
// screen, and keep every link of it and of docs/ pointing at a file that exists
// and, with a #anchor, at a heading of that file.

const (
	repoRoot        = "../.."
	readmeMaxLines  = 400
	quickStartLines = 60
)

// readmeCommands are the two commands a new user copies, verbatim.
var readmeCommands = []string{"go run ./cmd/soak run", "go test ./..."}

// readmeJobs are the main jobs; the quick start shows a command for each.
var readmeJobs = []string{"run", "report", "export", "compare", "bench"}

func TestReadmeQuickStart(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to docs/", len(lines), readmeMaxLines)
	}
	head := codeLines(lines[:min(quickStartLines, len(lines))])
	for _, want := range readmeCommands {
		if !slices.ContainsFunc(head, func(l string) bool { return commandOf(l) == want }) {
			t.Errorf("the first %d lines of README.md have no code line %q", quickStartLines, want)
		}
	}
	for _, job := range readmeJobs {
		if !slices.ContainsFunc(head, func(l string) bool { return jobOf(commandOf(l)) == job }) {
			t.Errorf("the first %d lines of README.md show no command for soak %s", quickStartLines, job)
		}
	}
}

func TestReadmeLinks(t *testing.T) {
	files := map[string]string{}
	names, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("docs/ has no Markdown page")
	}
	for _, name := range append(names, filepath.Join(repoRoot, "README.md")) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(repoRoot, name)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.ToSlash(rel)] = string(data)
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(p)))
		return err == nil
	}
	for _, b := range brokenLinks(files, exists) {
		t.Error(b)
	}
	// Every docs page is reachable from the README, directly or through another page.
	seen := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, l := range mdLinks(files[f]) {
			target, _, _ := strings.Cut(l, "#")
			if target == "" || strings.Contains(target, "://") {
				continue
			}
			p := path.Join(path.Dir(f), target)
			if _, ok := files[p]; ok && !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	for f := range files {
		if !seen[f] {
			t.Errorf("%s is linked from neither the README nor a page it links to", f)
		}
	}
}

func TestCommandOf(t *testing.T) {
	for _, tc := range []struct{ line, cmd, job string }{
		{"go run ./cmd/soak run          # a 2-minute soak", "go run ./cmd/soak run", "run"},
		{"go test ./...                  # the tests", "go test ./...", ""},
		{"  soak export -format csv out/x  # CSV", "soak export -format csv out/x", "export"},
		{"go run ./cmd/soak compare out/a out/b", "go run ./cmd/soak compare out/a out/b", "compare"},
		{"go run ./cmd/soak -h", "go run ./cmd/soak -h", ""},
		{"# soak bench", "", ""},
		{"soak", "soak", ""},
		{"go build ./cmd/soak", "go build ./cmd/soak", ""},
	} {
		if got := commandOf(tc.line); got != tc.cmd {
			t.Errorf("commandOf(%q) = %q, want %q", tc.line, got, tc.cmd)
		}
		if got := jobOf(commandOf(tc.line)); got != tc.job {
			t.Errorf("jobOf(%q) = %q, want %q", tc.line, got, tc.job)
		}
	}
}

func TestSlug(t *testing.T) {
	// The anchors GitHub gives these headings.
	for _, tc := range []struct{ heading, want string }{
		{"Quick start", "quick-start"},
		{"Compare and thresholds", "compare-and-thresholds"},
		{"24 hours on a VPS", "24-hours-on-a-vps"},
		{"Server-side soak", "server-side-soak"},
		{"Design notes (where the code moved away from the first design)", "design-notes-where-the-code-moved-away-from-the-first-design"},
		{"`soak run`: the end table", "soak-run-the-end-table"},
		{"Sizing (measured)", "sizing-measured"},
		{"Reads, µs and *bytes*", "reads-µs-and-bytes"},
		{"max_lost → limit", "max_lost--limit"},
		{"See [Bench](bench.md)", "see-bench"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestBrokenLinks(t *testing.T) {
	files := map[string]string{
		"README.md": "# Title\n\n## Quick start\n\nSee [the bench](docs/bench.md#results), [start](#quick-start), " +
			"![shot](docs/report.png), [gone](docs/gone.md), [no heading](docs/bench.md#nowhere), " +
			"[bad self](#contents), [web](https://example.com/x.md), `[code](docs/code.md)`.\n\n" +
			"```\n[fenced](docs/fenced.md)\n```\n",
		"docs/bench.md": "# Bench\n\n## Results\n\n## Results\n\nBack to [the README](../README.md#quick-start), " +
			"[the second](#results-1), [a third](#results-2), [profiles](../profiles/).\n",
	}
	present := map[string]bool{"README.md": true, "docs/bench.md": true, "docs/report.png": true, "profiles": true}
	got := brokenLinks(files, func(p string) bool { return present[p] })
	want := []string{
		`README.md: link "docs/gone.md": no such file`,
		`README.md: link "docs/bench.md#nowhere": no heading "nowhere" in docs/bench.md`,
		`README.md: link "#contents": no heading "contents" in README.md`,
		`docs/bench.md: link "#results-2": no heading "results-2" in docs/bench.md`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("brokenLinks:\n got %q\nwant %q", got, want)
	}
}

// commandOf returns a code line's command without its trailing # comment.
func commandOf(line string) string {
	cmd, _, _ := strings.Cut(line, " #")
	if strings.HasPrefix(strings.TrimSpace(cmd), "#") {
		return ""
	}
	return strings.TrimSpace(cmd)
}

// jobOf returns the soak subcommand a command runs, or "" when it runs none.
func jobOf(cmd string) string {
	f := strings.Fields(cmd)
	switch {
	case len(f) >= 2 && f[0] == "soak":
		return subcommand(f[1])
	case len(f) >= 4 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/soak":
		return subcommand(f[3])
	}
	return ""
}

// subcommand returns word when it names a subcommand rather than a flag.
func subcommand(word string) string {
	if strings.HasPrefix(word, "-") {
		return ""
	}
	return word
}

// codeLines returns the lines inside fenced code blocks.
func codeLines(lines []string) []string {
	var code []string
	in := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if in {
			code = append(code, l)
		}
	}
	return code
}

var (
	linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	spanRE = regexp.MustCompile("`[^`]*`")
)

// prose returns the text of a Markdown page that is rendered as Markdown:
// fenced code blocks and inline code spans are left out, since a link written
// there is shown as text.
func prose(text string) string {
	var b strings.Builder
	in := false
	for l := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(spanRE.ReplaceAllString(l, ""))
		}
	}
	return b.String()
}

// mdLinks returns the targets of a page's links and images, in order.
func mdLinks(text string) []string {
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(prose(text), -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors returns the anchors of a page's headings, numbered as GitHub numbers
// repeated ones (name, name-1, name-2 …).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	in := false
	for l := range strings.Lines(text) {
		l = strings.TrimRight(l, "\n")
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if in || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		s := slug(h)
		if n := count[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

var headingLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slug makes a heading's anchor as GitHub does: the text of its links, lower
// case, without punctuation or symbols, spaces turned into hyphens.
func slug(heading string) string {
	heading = headingLinkRE.ReplaceAllString(strings.TrimSpace(heading), "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// brokenLinks checks every relative link of files (paths from the repository
// root, slash-separated, to their text): its file must exist, and its #anchor
// must be a heading of the page it names (a page among files).
func brokenLinks(files map[string]string, exists func(string) bool) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		// The README first, then the pages by name: the order a reader meets them.
		if (a == "README.md") != (b == "README.md") {
			if a == "README.md" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var broken []string
	for _, name := range names {
		for _, l := range mdLinks(files[name]) {
			if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			target, anchor, hasAnchor := strings.Cut(l, "#")
			p := name
			if target != "" {
				p = path.Join(path.Dir(name), target)
				if !exists(p) {
					broken = append(broken, name+": link "+strconv.Quote(l)+": no such file")
					continue
				}
			}
			if !hasAnchor {
				continue
			}
			page, ok := files[p]
			if !ok {
				broken = append(broken, name+": link "+strconv.Quote(l)+": an anchor into "+p+", which is not a checked page")
				continue
			}
			if !anchors(page)[anchor] {
				broken = append(broken, name+": link "+strconv.Quote(l)+": no heading "+strconv.Quote(anchor)+" in "+p)
			}
		}
	}
	return broken
}
