package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// flagCase is a command line around fuzzed input that can only end in a flag or argument
// error: whatever the input, nothing runs, listens or writes.
type flagCase struct {
	args  func(in string) []string
	names []string // what the error must name (one of them); nil: any one line
}

var (
	// The input is one flag's value; the flag after it is refused when the value is good.
	valueCases = []flagCase{
		{func(v string) []string { return []string{"run", "-duration", v, "-worker-timeout", "1s"} }, []string{"-duration", "-worker-timeout"}},
		{func(v string) []string { return []string{"run", "-libs", v, "-worker-timeout", "1s"} }, []string{"-libs", "-worker-timeout"}},
		{func(v string) []string { return []string{"run", "-http", v, "-worker-timeout", "1s"} }, []string{"-http", "-worker-timeout"}},
		{func(v string) []string { return []string{"run", "-write-backlog", v, "-worker-timeout", "1s"} }, []string{"-write-backlog", "-worker-timeout"}},
		{func(v string) []string { return []string{"serve", "-addr", v, "-cert", "c"} }, []string{"-addr", "-cert"}},
		{func(v string) []string { return []string{"report", "-o", v} }, []string{"no run found"}},
		{func(v string) []string { return []string{"export", "-format", v} }, []string{"-format", "no run found"}},
		{func(v string) []string { return []string{"export", "-dir", v} }, []string{"no run found"}},
	}
	// The input is arguments separated by NUL, none with a path separator (the test runs in
	// an empty directory). run ends with -worker-timeout 1s (refused before anything
	// starts, or left as an argument when the input's last flag takes it as its value);
	// serve with -cert c, a file that does not exist (needed by -key, read before the
	// server is made); report, export and compare find no run in the empty directory.
	argCases = []flagCase{
		{func(in string) []string {
			return append(append([]string{"run"}, split(in)...), "-worker-timeout", "1s")
		}, nil},
		{func(in string) []string { return append(append([]string{"serve"}, split(in)...), "-cert", "c") }, nil},
		{func(in string) []string { return append([]string{"report"}, split(in)...) }, nil},
		{func(in string) []string { return append([]string{"export"}, split(in)...) }, nil},
		{func(in string) []string { return append([]string{"compare"}, split(in)...) }, nil},
	}
)

func split(in string) []string {
	if in == "" {
		return nil
	}
	return strings.Split(in, "\x00")
}

// FuzzFlags runs the command (the testable run) on fuzzed flags and arguments of run,
// serve, report, export and compare, in command lines that can only fail on flags or
// arguments (see valueCases and argCases). Property: no panic; -h is help (no error);
// anything else is an error with a non-zero exit code, printed as one line "soak: …" that
// names the flag when the input is one flag's value, and nothing on stdout.
func FuzzFlags(f *testing.F) {
	for _, v := range []string{"", "30s", "-1s", "0", "ten", "1e9h", "-h", "--", "127.0.0.1:0", "0.0.0.0:9443", ":9443",
		"localhost:0", "[::1]:0", "8080", "gorilla,nope", "gorilla,,gws", "csv", "json", "xml", "a\nb", "\x1b[31m", "\u2028"} {
		for i := range valueCases {
			f.Add(uint8(i), v)
		}
	}
	for _, in := range []string{"", "-bogus", "-a\nb", "-duration", "-profile\x00x.yaml", "-resume\x00x", "-resume\x00x\x00-libs\x00gws",
		"-http\x00:80", "-http-public\x00-http\x000.0.0.0:0", "-addr\x000.0.0.0:0", "-addr-public\x00-addr\x00:0", "-addr-public\x00-key\x00k",
		"-child", "-h", "-help", "--", "-v=maybe", "x\x00y", ".", "..", "-format\x00json\x00.", "-o\x00r.html", "-dir\x00d", "a\x00b\x00c"} {
		for i := range argCases {
			f.Add(uint8(len(valueCases)+i), in)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, in string) {
		all := append(valueCases[:len(valueCases):len(valueCases)], argCases...)
		k := int(kind) % len(all)
		if k >= len(valueCases) && strings.ContainsAny(in, `/\`) {
			t.Skip("paths stay in the test's directory")
		}
		t.Chdir(t.TempDir())
		args := all[k].args(in)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var stdout, stderr bytes.Buffer
		err := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		var line bytes.Buffer
		code := exitCode(err, &line)
		msg := line.String()
		if err == nil || code == 0 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "soak: ") || len(msg) < len("soak: x\n") {
			t.Fatalf("%q: exit code %d, error line %q; want a non-zero code and one line", args, code, msg)
		}
		if names := all[k].names; names != nil {
			named := false
			for _, n := range names {
				named = named || strings.Contains(msg, n)
			}
			if !named {
				t.Fatalf("%q: error line %q names none of %q", args, msg, names)
			}
		}
		if stdout.Len() > 0 {
			t.Fatalf("%q: printed %q on stdout", args, stdout.String())
		}
	})
}
