package profile

import (
	"github.com/wssoak/wssoak/internal/endpoint"

	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FuzzTarget: checkTarget, which judges a profile's target, never panics, and its error is
// one line saying what is wanted. Through the profile parser, a target written as a YAML
// string is taken as it is when checkTarget accepts it, and is otherwise the one-line
// error `FILE:LINE: bad target "…": <checkTarget's reason>` naming the target's line.
func FuzzTarget(f *testing.F) {
	for _, s := range []string{
		TargetLocal, "wss://stream.binance.com:9443", "ws://127.0.0.1:9000", "wss://[::1]:9443/ws",
		"", " ", "local ", "LOCAL", "ws://", "wss:", "ws:/h", "ws//h", "h:9443", "://h",
		"http://h", "WS://H:1", "ws://u:p@h", "ws://u@h", "ws://h?streams=btcusdt@trade", "ws://h#f", "ws://h/%zz",
		"ws://[::1", "ws://h:99999", "ws://h:port", "ws://:9443", "ws://h:", "ws://h\n", "ws://h\x7f", "ws://h/a b",
		"wss://stream.binance.com:9443\n  x", "ws://%41:1", "ws://h/\u2028", "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cerr := checkTarget(s)
		if cerr != nil && (strings.ContainsAny(cerr.Error(), "\r\n") || !strings.Contains(cerr.Error(), "want ")) {
			t.Fatalf("checkTarget(%q) = %q: want one line saying what is wanted", s, cerr)
		}
		if !utf8.ValidString(s) {
			return // YAML would carry it as !!binary
		}
		data, err := yaml.Marshal(map[string]string{"target": s})
		if err != nil {
			return
		}
		var doc yaml.Node // the scalar the decoder will see
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) != 1 || len(doc.Content[0].Content) != 2 ||
			doc.Content[0].Content[1].Value != s || doc.Content[0].Content[1].Tag != "!!str" {
			return
		}
		p, err := Parse("f.yaml", data)
		if cerr == nil {
			if err != nil || p.Target != s {
				t.Fatalf("target %q is accepted by checkTarget, but the profile %q gives %v", s, data, err)
			}
			return
		}
		var pe *Error
		want := fmt.Sprintf("f.yaml:1: bad target %q: %v", endpoint.Mask(s), cerr)
		if !errors.As(err, &pe) || pe.Line != 1 || err.Error() != want || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("target %q: profile %q gives %v, want %s", s, data, err, want)
		}
	})
}
