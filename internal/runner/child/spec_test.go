package child

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

// TestReadSpec: the first line is the spec, the rest is left for the
// child; a missing, oversized or malformed spec is a clear error.
func TestReadSpec(t *testing.T) {
	long := `{"word":"` + strings.Repeat("a", MaxSpec) + `"}`
	tests := []struct {
		in, rest string
		want     spec
		err      string
	}{
		{in: `{"word":"w","n":2}` + "\nstop\n", want: spec{"w", 2}, rest: "stop\n"},
		{in: `{"word":"last"}`, want: spec{Word: "last"}}, // a last line without its newline
		{in: `{"n":1}` + "\n", want: spec{N: 1}},
		{in: "", err: "read spec: stdin closed before the spec (want one JSON line)"},
		{in: "{\"n\":\n1}\n", err: "decode spec: "},
		{in: "not json\n", err: "decode spec: "},
		{in: long + "\n", err: "read spec: longer than 16777216 bytes"},
	}
	for _, tc := range tests {
		var got spec
		rest, err := ReadSpec(strings.NewReader(tc.in), &got)
		name := tc.in[:min(len(tc.in), 30)]
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error starting %q", name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", name, got, err, tc.want)
			continue
		}
		if b, _ := io.ReadAll(rest); string(b) != tc.rest {
			t.Errorf("%q: rest %q, want %q", name, b, tc.rest)
		}
	}
	var got spec
	if _, err := ReadSpec(errReader{}, &got); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a failing stdin: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

// FuzzReadSpec: whatever stdin holds, ReadSpec does not panic, and a spec it
// accepts is what its first line decodes to, the rest being what follows.
func FuzzReadSpec(f *testing.F) {
	for _, s := range []string{`{"word":"w","n":2}` + "\nstop\n", `{}`, "", "\n", `{"n":"x"}`, "{\"word\":\"a\\nb\"}\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var got spec
		rest, err := ReadSpec(bytes.NewReader(in), &got)
		if err != nil {
			return
		}
		first, after, _ := bytes.Cut(in, []byte("\n"))
		var want spec
		if jerr := json.Unmarshal(first, &want); jerr != nil || want != got {
			t.Fatalf("ReadSpec(%q) = %+v; the first line decodes to %+v, %v", in, got, want, jerr)
		}
		if b, _ := io.ReadAll(rest); !bytes.Equal(b, after) {
			t.Fatalf("ReadSpec(%q): rest %q, want %q", in, b, after)
		}
	})
}

// TestWriter: one value a line, whole lines from concurrent writers, and
// the first write error kept.
func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { _ = w.Write(spec{Word: strings.Repeat("x", i), N: i}) })
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	seen := map[int]bool{}
	for _, l := range lines {
		var s spec
		if err := json.Unmarshal([]byte(l), &s); err != nil || len(s.Word) != s.N {
			t.Fatalf("line %q: %+v, %v", l, s, err)
		}
		seen[s.N] = true
	}
	if len(lines) != 50 || len(seen) != 50 {
		t.Errorf("%d lines, %d distinct; want 50", len(lines), len(seen))
	}
	fw := NewWriter(failWriter{})
	if err := fw.Write(1); err == nil {
		t.Error("a failed write returned nil")
	}
	if err := fw.Write(2); err == nil || err.Error() != "full" {
		t.Errorf("after a failed write: %v, want the first error", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("full") }
