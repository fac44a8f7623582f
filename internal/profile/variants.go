package profile

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/wire"
)

// Bounds of a profile's variants.
const (
	// MaxVariants bounds variants: each is a worker process of its own.
	MaxVariants = 32
	// MinReadBufferSize and MaxReadBufferSize bound read_buffer_size: a
	// smaller buffer is a read call per frame header, a larger one more
	// than any message of the replay server.
	MinReadBufferSize = 256
	MaxReadBufferSize = 16 << 20
	// MaxCalibrationCost bounds calibration_cost: a millisecond a message
	// is already more CPU than one core has at a thousand messages a second.
	MaxCalibrationCost = time.Millisecond
)

// Variant is one item of "variants:": a library under settings of its own,
// run as a column of its own beside the profile's libraries (wire.Column).
// A key left out takes the run's setting.
type Variant struct {
	Name           string   `yaml:"name" soak:"kind=column_name"`
	Lib            string   `yaml:"lib" soak:"kind=library"`
	ReadBufferSize ByteSize `yaml:"read_buffer_size" soak:"positive"` // the library's read buffer (wire.Settings)
	// WorkerRuntime's keys set replace the run's worker_runtime for this
	// column (a key left out, or 0, takes the run's).
	WorkerRuntime Runtime          `yaml:"worker_runtime"`
	Compression   wire.Compression `yaml:"compression" soak:"kind=compression"`
	Encoding      string           `yaml:"encoding" soak:"kind=encoding"`
	// CalibrationCost is CPU time burnt per message in the worker's
	// handler by a calibrated busy loop (not a sleep): a known cost, to
	// check that the tool calls a difference it was given.
	CalibrationCost Duration       `yaml:"calibration_cost" soak:"positive"`
	Line            int            `yaml:"-"` // line of the item in the file
	lines           map[string]int // key → line, for validation messages and the keys set
}

// Column is the variant as a run's column.
func (v *Variant) Column() wire.Column {
	s := wire.Settings{ReadBufferSize: int(v.ReadBufferSize), Runtime: v.WorkerRuntime.Wire(),
		Encoding: v.Encoding, CalibrationCost: v.CalibrationCost.Std()}
	if v.lines["compression"] > 0 {
		c := v.Compression
		s.Compression = &c
	}
	return wire.Column{Name: v.Name, Lib: v.Lib, Settings: s}
}

// Columns are the run's columns: its libraries, then its variants, in the
// profile's order.
func (p *Profile) Columns() []wire.Column {
	out := make([]wire.Column, 0, len(p.Libraries)+len(p.Variants))
	for _, l := range p.Libraries {
		out = append(out, wire.LibraryColumn(l))
	}
	for i := range p.Variants {
		out = append(out, p.Variants[i].Column())
	}
	return out
}

// ColumnNames are the names of Columns.
func (p *Profile) ColumnNames() []string { return wire.Names(p.Columns()) }

// SelectColumns keeps the columns named (from a command-line flag): a
// library, which need not be among the profile's, or one of its variants;
// each once. The libraries keep the order given, the variants the file's.
func (p *Profile) SelectColumns(names []string) error {
	if len(names) == 0 || len(names) == 1 && strings.TrimSpace(names[0]) == "" {
		return fmt.Errorf("no library given: want names such as gorilla,gobwas, or leave the flag out for the profile's")
	}
	var libs, seen []string
	keep := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if slices.Contains(seen, n) {
			return fmt.Errorf("library %q listed twice", n)
		}
		seen = append(seen, n)
		switch {
		case slices.Contains(wire.Libraries, n):
			libs = append(libs, n)
		case slices.ContainsFunc(p.Variants, func(v Variant) bool { return v.Name == n }):
			keep[n] = true
		default:
			return fmt.Errorf("unknown library %q (known: %s)%s", n, strings.Join(p.knownColumns(), ", "), suggest(n, p.knownColumns()))
		}
	}
	p.Libraries = libs
	p.Variants = slices.DeleteFunc(p.Variants, func(v Variant) bool { return !keep[v.Name] })
	return nil
}

// knownColumns are the names SelectColumns takes: every library, then the
// profile's variants.
func (p *Profile) knownColumns() []string {
	out := slices.Clone(wire.Libraries)
	for _, v := range p.Variants {
		out = append(out, v.Name)
	}
	return out
}

func (d *decoder) variants(v *yaml.Node, dst *[]Variant) error {
	v = deref(v)
	if v.Kind != yaml.SequenceNode {
		return d.errf(v.Line, "variants must be a list, got %s", kindName(v))
	}
	if len(v.Content) > MaxVariants {
		return d.errf(v.Line, "variants has %d items: at most %d (each is a worker process)", len(v.Content), MaxVariants)
	}
	out := make([]Variant, len(v.Content))
	first := map[string]int{}
	for i, vn := range v.Content {
		x := &out[i]
		if err := d.via(vn, func(vn *yaml.Node) error { return d.variant(vn, x) }); err != nil {
			return err
		}
		if j, dup := first[x.Name]; dup {
			return d.errf(x.lines["name"], "variant %q defined twice%s", x.Name, d.firstAt(out[j].lines["name"]))
		}
		first[x.Name] = i
	}
	*dst = out
	return nil
}

// variant decodes one item of variants into x.
func (d *decoder) variant(vn *yaml.Node, x *Variant) error {
	x.Line, x.lines = d.at(deref(vn).Line), map[string]int{}
	if err := d.listItem(vn, reflect.ValueOf(x), "variant", x.lines); err != nil {
		return err
	}
	switch {
	case x.Name == "":
		return d.errf(x.Line, "variant has no name")
	case x.Lib == "":
		return d.errf(x.Line, "variant %q has no lib (one of %s)", x.Name, strings.Join(wire.Libraries, ", "))
	}
	return nil
}

// columnName reads a variant's name: a column name (wire.CheckColumnName)
// that is no library's, so that every column has a name of its own.
func (d *decoder) columnName(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err != nil {
		return err
	}
	if err := wire.CheckColumnName(s); err != nil {
		return d.errf(deref(v).Line, "bad %s %q: want up to %d lowercase letters, digits, '-' or '_', a letter first", name, s, wire.MaxColumnName)
	}
	if slices.Contains(wire.Libraries, s) {
		return d.errf(deref(v).Line, "%s %q is a library's: a variant needs a name of its own, such as %s-gc25", name, s, s)
	}
	*dst = s
	return nil
}

// library reads one library name, suggesting the closest for a typo.
func (d *decoder) library(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err != nil {
		return err
	}
	if !slices.Contains(wire.Libraries, s) {
		hint := suggest(s, wire.Libraries)
		if hint == "" {
			hint = " (known: " + strings.Join(wire.Libraries, ", ") + ")"
		}
		return d.errf(deref(v).Line, "unknown library %q%s", s, hint)
	}
	*dst = s
	return nil
}

// validateVariants checks what the variants need from the rest of the
// profile and what a key's bounds depend on: a client run, a read buffer
// only where the library has one, an encoding the target serves.
func (d *decoder) validateVariants(p *Profile, add func(*Error)) {
	if len(p.Libraries) == 0 && len(p.Variants) == 0 {
		add(d.errf(d.lines["libraries"], "libraries is empty: list at least one of %s, or a variant", strings.Join(wire.Libraries, ", ")))
	}
	if len(p.Variants) == 0 {
		return
	}
	if p.Side == SideServer {
		add(d.errf(d.lines["variants"], "variants apply only to side %q (the libraries as clients), not %q", SideClient, p.Side))
		return
	}
	for i := range p.Variants {
		x := &p.Variants[i]
		at := func(k string) int { return x.lines[k] }
		if rb := x.ReadBufferSize; x.lines["read_buffer_size"] > 0 {
			switch {
			case !wire.HasReadBuffer(x.Lib):
				add(d.errf(at("read_buffer_size"), "variant %q: %s has no read buffer size to set (it reads through a fixed 4KiB reader of its own)", x.Name, x.Lib))
			case rb < MinReadBufferSize || rb > MaxReadBufferSize:
				add(d.errf(at("read_buffer_size"), "variant %q: read_buffer_size %v: want at least %d bytes and at most %v", x.Name, rb, MinReadBufferSize, ByteSize(MaxReadBufferSize)))
			}
		}
		if x.CalibrationCost.Std() > MaxCalibrationCost {
			add(d.errf(at("calibration_cost"), "variant %q: calibration_cost %v is above %v a message", x.Name, x.CalibrationCost, MaxCalibrationCost))
		}
		if p.Target != TargetLocal && x.Encoding != "" && x.Encoding != codec.JSON.String() {
			add(d.errf(at("encoding"), "variant %q: encoding %s applies only to target %q (Binance serves json), not %q", x.Name, x.Encoding, TargetLocal, p.Target))
		}
	}
}
