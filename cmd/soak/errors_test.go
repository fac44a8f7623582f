package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestBadInput: each mistake gives one error line that names the problem and
// where it is, a non-zero exit code, no run directory, and no goroutine left
// behind (run is a function the tests call many times).
func TestBadInput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	write := func(name, text string) string { return writeProfile(t, dir, name, text) }
	unknownLib := write("lib.yaml", "name: x\nduration: 5s\nlibraries:\n  - gorilla\n  - gorila\n")
	unknownKey := write("key.yaml", "name: x\ndration: 5s\n")
	badDur := write("dur.yaml", "name: x\nduration: 2 minutes\n")
	unreachable := write("url.yaml", "name: x\nduration: 5s\ntarget: ws://127.0.0.1:1\n")
	out := filepath.Join(dir, "out")
	tests := []struct {
		name string
		args []string
		want string // regexp the single error line must match
		code int
	}{
		{"unknown library", []string{"run", "-profile", unknownLib, "-out", out}, regexp.QuoteMeta(unknownLib) + `:5: unknown library "gorila"`, 1},
		{"unknown key", []string{"run", "-profile", unknownKey, "-out", out}, regexp.QuoteMeta(unknownKey) + `:2: unknown key "dration"`, 1},
		{"bad duration in profile", []string{"run", "-profile", badDur, "-out", out}, regexp.QuoteMeta(badDur) + `:2: bad duration "2 minutes"`, 1},
		{"bad duration flag", []string{"run", "-duration", "ten", "-out", out}, `flag -duration: bad duration "ten"`, 2},
		{"unknown flag", []string{"run", "-bogus"}, `flag provided but not defined: -bogus`, 2},
		{"unreachable url", []string{"run", "-profile", unreachable, "-out", out}, `target ws://127.0.0.1:1 unreachable: .*connection refused`, 1},
		{"missing profile", []string{"run", "-profile", filepath.Join(dir, "none.yaml"), "-out", out}, `read profile: open .*none.yaml`, 1},
		{"endless profile", []string{"run", "-profile", "/dev/zero", "-out", out}, `^soak: profile /dev/zero: larger than 4 MiB\n$`, 1},
		{"unknown library flag", []string{"run", "-libs", "gorilla,nope", "-out", out}, `flag -libs: unknown library "nope"`, 2},
		{"empty libs flag", []string{"run", "-libs", "", "-out", out}, `flag -libs: no library given`, 2},
		{"empty duration flag", []string{"run", "-duration", "", "-out", out}, `flag -duration: bad duration ""`, 2},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`, 2},
		{"sub-second duration flag", []string{"run", "-duration", "500ms", "-out", out}, `flag -duration: 500ms is shorter than one second`, 2},
		{"endless duration flag", []string{"run", "-duration", "1000000h", "-out", out}, `flag -duration: 1000000h0m0s is longer than 744h0m0s`, 2},
		{"negative write backlog", []string{"run", "-write-backlog", "-1", "-out", out}, `flag -write-backlog: -1 is not a number of seconds`, 2},
		{"negative speed", []string{"serve", "-addr", "127.0.0.1:0", "-speed", "-1"}, `flag -speed: -1 is not a rate factor: want a number above 0 and at most 1000`, 2},
		{"zero speed", []string{"serve", "-addr", "127.0.0.1:0", "-speed", "0"}, `flag -speed: 0 is not a rate factor`, 2},
		{"speed NaN", []string{"serve", "-addr", "127.0.0.1:0", "-speed", "NaN"}, `flag -speed: NaN is not a rate factor`, 2},
		{"serve compression", []string{"serve", "-addr", "127.0.0.1:0", "-compression", "gzip"}, `flag -compression: unknown compression "gzip" \(allowed: off, on, no_context_takeover\)`, 2},
		{"firehose compression", []string{"firehose", "-compression", "yes"}, `flag -compression: unknown compression "yes" \(allowed: off, on, no_context_takeover\)`, 2},
		{"unknown baseline", []string{"run", "-libs", "gorilla,gws", "-baseline", "coder", "-out", out}, `flag -baseline: coder is not a column of the run \(gorilla, gws\)`, 2},
		{"compare: no run before --", []string{"compare", "--", dir}, `compare: no run before "--"`, 2},
		{"compare: no run after --", []string{"compare", dir, "--"}, `compare: no run after "--"`, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runSoak(t, tc.args...)
			if err == nil {
				t.Fatal("no error")
			}
			var stderr bytes.Buffer
			code := exitCode(err, &stderr)
			line := stderr.String()
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if strings.Count(line, "\n") != 1 {
				t.Errorf("want one error line, got %q", line)
			}
			if !regexp.MustCompile(tc.want).MatchString(line) {
				t.Errorf("error line %q does not match %q", line, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("bad input left run directories: %v", entries)
	}
}
