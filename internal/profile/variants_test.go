package profile

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

const variantsYAML = `name: v
libraries: [gorilla, gws]
worker_runtime: {gomaxprocs: 2, gogc: 100}
variants:
  - name: gorilla-gc25
    lib: gorilla
    worker_runtime: {gogc: 25}
  - name: gws-rb4k
    lib: gws
    read_buffer_size: 4KiB
    compression: no_context_takeover
  - name: gobwas-cost
    lib: gobwas
    calibration_cost: 5us
    encoding: msgpack
    compression: "off"
`

func TestParseVariants(t *testing.T) {
	p, err := Parse("profiles/x.yaml", []byte(variantsYAML))
	if err != nil {
		t.Fatal(err)
	}
	off, nct := wire.CompressionOff, wire.CompressionNoContextTakeover
	want := []wire.Column{
		{Name: "gorilla", Lib: "gorilla"},
		{Name: "gws", Lib: "gws"},
		{Name: "gorilla-gc25", Lib: "gorilla", Settings: wire.Settings{Runtime: wire.Runtime{GOGC: 25}}},
		{Name: "gws-rb4k", Lib: "gws", Settings: wire.Settings{ReadBufferSize: 4096, Compression: &nct}},
		{Name: "gobwas-cost", Lib: "gobwas", Settings: wire.Settings{CalibrationCost: 5 * time.Microsecond, Encoding: "msgpack", Compression: &off}},
	}
	if got := p.Columns(); !reflect.DeepEqual(got, want) {
		t.Errorf("Columns:\n got %+v\nwant %+v", got, want)
	}
	for _, c := range p.Columns() {
		if err := c.Check(); err != nil {
			t.Errorf("column %s: %v", c.Name, err)
		}
	}
	if got := p.ColumnNames(); !slices.Equal(got, []string{"gorilla", "gws", "gorilla-gc25", "gws-rb4k", "gobwas-cost"}) {
		t.Errorf("ColumnNames = %q", got)
	}
	if got := p.Variants[0].Line; got != 5 {
		t.Errorf("first variant's line %d, want 5", got)
	}
	// The replay server allows what any column asks for: the run is off,
	// one variant asks for no_context_takeover.
	if got := p.ReplayConfig().Compression; got != nct {
		t.Errorf("replay compression %v, want %v", got, nct)
	}
	// The variant's worker runtime is laid over the run's.
	plan := (&wire.Plan{Runtime: p.WorkerRuntime.Wire()}).For(p.Columns()[2])
	if plan.Runtime != (wire.Runtime{GOMAXPROCS: 2, GOGC: 25}) {
		t.Errorf("variant's runtime %+v", plan.Runtime)
	}
}

// TestVariantsOnly: a profile may run variants alone, without a plain library.
func TestVariantsOnly(t *testing.T) {
	p, err := Parse("profiles/x.yaml", []byte("libraries: []\nvariants:\n  - {name: a1, lib: gorilla}\n  - {name: a2, lib: gorilla}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.ColumnNames(); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Errorf("columns %q", got)
	}
	// Without the key the libraries are the five, and the variants come after them.
	p, err = Parse("profiles/x.yaml", []byte("variants:\n  - {name: a1, lib: gorilla}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.ColumnNames(); !slices.Equal(got, append(slices.Clone(wire.Libraries), "a1")) {
		t.Errorf("columns %q", got)
	}
}

func TestSelectColumns(t *testing.T) {
	tests := []struct {
		flag      string
		libs      []string
		variants  []string
		wantError string
	}{
		{"gws", []string{"gws"}, nil, ""},
		{"gorilla-gc25", nil, []string{"gorilla-gc25"}, ""},
		{"gobwas-cost, coder,gorilla-gc25", []string{"coder"}, []string{"gorilla-gc25", "gobwas-cost"}, ""}, // a library not in the profile; variants in the file's order
		{"", nil, nil, "no library given"},
		{"gorilla,gorilla", nil, nil, `library "gorilla" listed twice`},
		{"gws-rb4k,gws-rb4k", nil, nil, `library "gws-rb4k" listed twice`},
		{"gorilla-gc52", nil, nil, `unknown library "gorilla-gc52" (known: gorilla, gobwas, coder, gws, fasthttp, gorilla-gc25, gws-rb4k, gobwas-cost); did you mean "gorilla-gc25"?`},
		{"nope", nil, nil, `unknown library "nope" (known: gorilla, gobwas, coder, gws, fasthttp, gorilla-gc25, gws-rb4k, gobwas-cost)`},
		{"gws,", nil, nil, `unknown library ""`},
	}
	for _, tt := range tests {
		p, err := Parse("profiles/x.yaml", []byte(variantsYAML))
		if err != nil {
			t.Fatal(err)
		}
		err = p.SelectColumns(strings.Split(tt.flag, ","))
		if tt.wantError != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantError) {
				t.Errorf("%q: %v, want %s", tt.flag, err, tt.wantError)
			}
			continue
		}
		var vs []string
		for _, v := range p.Variants {
			vs = append(vs, v.Name)
		}
		if err != nil || !slices.Equal(p.Libraries, tt.libs) || !slices.Equal(vs, tt.variants) {
			t.Errorf("%q: libraries %q variants %q, %v; want %q %q", tt.flag, p.Libraries, vs, err, tt.libs, tt.variants)
		}
	}
}
