package wire

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckColumnName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"gorilla", true},
		{"gorilla-gc25", true},
		{"gws_rb4k", true},
		{"a", true},
		{"a1-b_2", true},
		{strings.Repeat("a", MaxColumnName), true},
		{strings.Repeat("a", MaxColumnName+1), false},
		{"", false},
		{"1gorilla", false},  // a digit first
		{"-gorilla", false},  // a flag's look
		{"Gorilla", false},   // uppercase: a second name for one file on some file systems
		{"gorilla/2", false}, // the tag's separator
		{"a,b", false},       // -libs' separator
		{"a.b", false},       // a dotted key path
		{"a:b", false},       // a YAML key's end
		{"a b", false},
		{"a\"b", false}, // CSV quoting
		{"gorillä", false},
		{"..", false},
	}
	for _, tt := range tests {
		err := CheckColumnName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("CheckColumnName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n") {
			t.Errorf("CheckColumnName(%q): %q is not one line", tt.name, err)
		}
	}
	for _, lib := range Libraries {
		if err := CheckColumnName(lib); err != nil {
			t.Errorf("library %s: %v", lib, err)
		}
	}
}

// FuzzCheckColumnName: a name CheckColumnName takes is safe as it is in every
// place a column is named.
func FuzzCheckColumnName(f *testing.F) {
	for _, s := range []string{"gorilla", "gorilla-gc25", "a/b", "a,b", "A", "x.y", "", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckColumnName(s) != nil {
			return
		}
		tag := Tag{Column: s, Slot: 3, Attempt: 1}
		if back, err := ParseTag(tag.String()); err != nil || back != tag || ColumnOf(tag.String()) != s {
			t.Fatalf("%q: tag %q reads back as %+v, %v", s, tag, back, err)
		}
		if f := "worker-" + s + ".log"; filepath.Base(f) != f || filepath.Clean(f) != f {
			t.Fatalf("%q: file name %q is not one plain name", s, f)
		}
		if strings.ContainsAny(s, ",\"\r\n.:/\\ ") || strings.ToLower(s) != s || len(s) > MaxColumnName {
			t.Fatalf("%q: not safe as a list item, CSV cell, key or label", s)
		}
	})
}

func TestColumnCheck(t *testing.T) {
	tests := []struct {
		c    Column
		want string // "" = ok; else part of the error
	}{
		{LibraryColumn("gorilla"), ""},
		{Column{Name: "gws-rb", Lib: "gws", Settings: Settings{ReadBufferSize: 4096}}, ""},
		{Column{Name: "x", Lib: "nope"}, "unknown library"},
		{Column{Name: "X", Lib: "gws"}, "lowercase letter first"},
		{Column{Name: "coder-rb", Lib: "coder", Settings: Settings{ReadBufferSize: 4096}}, "coder has no read buffer"},
		{Column{Name: "c", Lib: "gobwas", Settings: Settings{ReadBufferSize: -1}}, "negative read buffer"},
		{Column{Name: "c", Lib: "gobwas", Settings: Settings{CalibrationCost: -time.Microsecond}}, "negative calibration cost"},
	}
	for _, tt := range tests {
		err := tt.c.Check()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.c, err, tt.want)
		}
	}
}

func TestRuntimeOverAndEnv(t *testing.T) {
	run := Runtime{GOMAXPROCS: 2, GOGC: 100}
	if got := run.Over(Runtime{GOGC: 25}); got != (Runtime{GOMAXPROCS: 2, GOGC: 25}) {
		t.Errorf("Over gogc = %+v", got)
	}
	if got := run.Over(Runtime{GOMEMLIMIT: 1 << 30, GOMAXPROCS: 1}); got != (Runtime{GOMAXPROCS: 1, GOGC: 100, GOMEMLIMIT: 1 << 30}) {
		t.Errorf("Over limit = %+v", got)
	}
	if got := run.Over(Runtime{}); got != run {
		t.Errorf("Over zero = %+v, want the run's", got)
	}
	tests := []struct {
		r    Runtime
		want []string
	}{
		{Runtime{}, nil},
		{Runtime{GOGC: 25}, []string{"GOGC=25"}},
		{Runtime{GOGC: -1, GOMAXPROCS: 3, GOMEMLIMIT: 256 << 20}, []string{"GOMAXPROCS=3", "GOGC=off", "GOMEMLIMIT=268435456"}},
	}
	for _, tt := range tests {
		if got := tt.r.Env(); !slices.Equal(got, tt.want) {
			t.Errorf("%+v.Env() = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestPlanFor(t *testing.T) {
	on := CompressionOn
	cols := []Column{LibraryColumn("gorilla"),
		{Name: "gorilla-gc25", Lib: "gorilla", Settings: Settings{Runtime: Runtime{GOGC: 25}, Compression: &on, Encoding: "msgpack",
			ReadBufferSize: 4096, CalibrationCost: 5 * time.Microsecond}}}
	p := &Plan{Version: PlanVersion, RunID: "r", Columns: cols, Runtime: Runtime{GOMAXPROCS: 2}, Encoding: "json", Compression: CompressionOff}
	plain := p.For(cols[0])
	if plain.Column != cols[0] || plain.Columns != nil || plain.Runtime != p.Runtime || plain.Encoding != "json" || plain.Compression != CompressionOff {
		t.Errorf("plain library's plan %+v: want the run's settings", plain)
	}
	v := p.For(cols[1])
	if v.Runtime != (Runtime{GOMAXPROCS: 2, GOGC: 25}) || v.Encoding != "msgpack" || v.Compression != CompressionOn || v.Column.Settings.ReadBufferSize != 4096 {
		t.Errorf("variant's plan %+v", v)
	}
	if len(p.Columns) != 2 || p.Runtime.GOGC != 0 || p.Column.Name != "" {
		t.Errorf("For changed the run's plan: %+v", p)
	}
	// Stored and read back: the run's plan keeps every column and its settings.
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Plan
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Columns, cols) {
		t.Fatalf("round trip %s: %+v, %v", b, back.Columns, err)
	}
	if strings.Contains(string(b), `"column"`) || !strings.Contains(string(b), `"settings":{"read_buffer_size":4096,"runtime":{"gogc":25},"compression":"on","encoding":"msgpack","calibration_cost":5000}`) {
		t.Errorf("plan JSON %s", b)
	}
	// A plan stored before columns (a resumed old run) reads with none.
	if got := StoredColumns(string(b)); !reflect.DeepEqual(got, cols) {
		t.Errorf("StoredColumns = %+v", got)
	}
	if StoredColumns(`{"v":1}`) != nil || StoredColumns("not json") != nil {
		t.Error("StoredColumns of a plan without columns, or of no plan: want nil")
	}
	var old Plan
	if err := json.Unmarshal([]byte(`{"v":1,"run_id":"r","lib":"","slots":[]}`), &old); err != nil || old.Columns != nil {
		t.Errorf("old plan: %+v, %v", old.Columns, err)
	}
}

func TestSettingsString(t *testing.T) {
	nct := CompressionNoContextTakeover
	s := Settings{ReadBufferSize: 4096, Runtime: Runtime{GOGC: -1, GOMEMLIMIT: 1 << 20, GOMAXPROCS: 1}, Compression: &nct, Encoding: "packed",
		CalibrationCost: 5 * time.Microsecond}
	want := "read_buffer_size=4096 gomaxprocs=1 gogc=-1 gomemlimit=1048576 compression=no_context_takeover encoding=packed calibration_cost=5µs"
	if got := s.String(); got != want {
		t.Errorf("String = %q\nwant %q", got, want)
	}
	if (Settings{}).String() != "" || !(Settings{}).IsZero() || s.IsZero() {
		t.Error("zero settings")
	}
}

func TestWidestCompression(t *testing.T) {
	off, on, nct := CompressionOff, CompressionOn, CompressionNoContextTakeover
	col := func(c *Compression) Column { return Column{Name: "v", Lib: "gws", Settings: Settings{Compression: c}} }
	tests := []struct {
		run  Compression
		cols []Column
		want Compression
	}{
		{off, nil, off},
		{on, []Column{col(&off)}, on},
		{off, []Column{col(nil), col(&nct)}, nct},
		{off, []Column{col(&nct), col(&on)}, on},
		{nct, []Column{col(&on)}, on},
		{nct, []Column{col(&off)}, nct},
	}
	for _, tt := range tests {
		if got := WidestCompression(tt.run, tt.cols); got != tt.want {
			t.Errorf("WidestCompression(%v, …) = %v, want %v", tt.run, got, tt.want)
		}
	}
}
