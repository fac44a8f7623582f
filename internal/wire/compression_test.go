package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseCompression(t *testing.T) {
	tests := []struct {
		in   string
		want Compression
		err  bool
	}{
		{"off", CompressionOff, false},
		{"on", CompressionOn, false},
		{"no_context_takeover", CompressionNoContextTakeover, false},
		{"", 0, true},
		{"On", 0, true},
		{"deflate", 0, true},
		{"no-context-takeover", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseCompression(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseCompression(%q) = %v, %v", tt.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "off, on, no_context_takeover") {
			t.Errorf("error %q does not list the allowed values", err)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("String() = %q, want %q", got.String(), tt.in)
		}
	}
}

func TestCompressionJSON(t *testing.T) {
	p := Plan{Compression: CompressionNoContextTakeover}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"compression":"no_context_takeover"`) {
		t.Fatalf("plan JSON %s", b)
	}
	var back Plan
	if err := json.Unmarshal(b, &back); err != nil || back.Compression != CompressionNoContextTakeover {
		t.Fatalf("round trip: %v, %v", back.Compression, err)
	}
	if err := json.Unmarshal([]byte(`{"compression":"zstd"}`), &back); err == nil {
		t.Fatal("unknown value accepted")
	}
}

func TestDeflateValidate(t *testing.T) {
	tests := []struct {
		d  Deflate
		ok bool
	}{
		{Deflate{}, true},
		{Deflate{Compression: CompressionOn, WindowBits: 9, Level: 9}, true},
		{Deflate{WindowBits: 8}, false},
		{Deflate{WindowBits: 16}, false},
		{Deflate{Level: 10}, false},
		{Deflate{Compression: 3}, false},
	}
	for _, tt := range tests {
		if err := tt.d.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: %v", tt.d, err)
		}
	}
	if d := (Deflate{}).WithDefaults(); d.WindowBits != 15 || d.Level != 1 {
		t.Errorf("defaults %+v", d)
	}
}

func FuzzParseCompression(f *testing.F) {
	for _, s := range CompressionNames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCompression(s)
		if err != nil {
			return
		}
		if c.String() != s {
			t.Fatalf("%q -> %v", s, c)
		}
	})
}
