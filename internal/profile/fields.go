package profile

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/wire"
)

// A settings struct declares its keys once, in its fields' tags: yaml names
// the key ("-" for a field no key sets), and soak says how the value is read
// where the Go type does not:
//
//	positive     a duration, size or number must be above zero (default: zero or more)
//	min=N,max=N  bounds of an integer (default: those of int64); max also bounds a size
//	keys=LIST    the keys of a map[string]float64, from keyLists
//	kind=KIND    a value with its own checks, read by decoder.custom
//	name=NAME    the key's name in messages, when not its path
//
// By its type a field is a Duration or time.Duration (with a unit), a
// ByteSize, a float64, an int, int64 or uint64, a bool, a string (any single value),
// or a struct: a mapping of its own keys. A key's name in messages is its
// path ("keepalive.timeout"), or the item's prefix and the key in a list's
// items ("fault at").

// spec is one key of a settings struct.
type spec struct {
	key      string
	index    int
	name     string // name= option: the key's name in messages, instead of prefix and key
	kind     string // kind= option, "" for the type's
	keys     string // keys= option
	positive bool
	min, max int64
}

// keyLists are the key lists keys= options name.
var keyLists = map[string][]string{"rates": wire.RateKeys}

var specCache sync.Map // reflect.Type → []spec

// specsOf returns the keys of struct type t, in field order; a field without
// a yaml tag is a mistake caught by the first parse.
func specsOf(t reflect.Type) []spec {
	if s, ok := specCache.Load(t); ok {
		return s.([]spec)
	}
	var out []spec
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch key {
		case "-":
			continue
		case "":
			panic(fmt.Sprintf("profile: field %s.%s has no yaml tag", t, f.Name))
		}
		s := spec{key: key, index: i, min: math.MinInt64, max: math.MaxInt64}
		for _, o := range strings.Split(f.Tag.Get("soak"), ",") {
			k, v, _ := strings.Cut(o, "=")
			var err error
			switch k {
			case "":
			case "positive":
				s.positive = true
			case "min":
				s.min, err = strconv.ParseInt(v, 10, 64)
			case "max": // a number, or a size with its unit (1GiB)
				var b ByteSize
				b, err = parseByteSize(v)
				s.max = int64(b)
			case "kind":
				s.kind = v
			case "name":
				s.name = v
			case "keys":
				s.keys = v
			default:
				err = fmt.Errorf("unknown option %q", k)
			}
			if err != nil {
				panic(fmt.Sprintf("profile: field %s.%s: soak tag: %v", t, f.Name, err))
			}
		}
		out = append(out, s)
	}
	specCache.Store(t, out)
	return out
}

// fields returns the keys of the struct v points at, as mapping decodes
// them; prefix begins each key's name in messages.
func (d *decoder) fields(v reflect.Value, prefix string) []field {
	v = v.Elem()
	specs := specsOf(v.Type())
	fs := make([]field, len(specs))
	for i, s := range specs {
		name := s.name
		if name == "" {
			name = prefix + s.key
		}
		fs[i] = field{s.key, d.value(s, name, v.Field(s.index), v)}
	}
	return fs
}

// listItem decodes n, one mapping item of a list (a fault, a variant), into the
// struct v points at, recording the line of each key it sets in lines: the
// item's own checks name the line of the key at fault. what names the item
// in messages ("fault"), and begins its keys' names ("fault at").
func (d *decoder) listItem(n *yaml.Node, v reflect.Value, what string, lines map[string]int) error {
	fs := d.fields(v, what+" ")
	for i, fd := range fs {
		fs[i].decode = func(x *yaml.Node) error {
			lines[fd.key] = d.at(deref(x).Line)
			return fd.decode(x)
		}
	}
	return d.mapping(n, what, fs)
}

// value decodes into fv, field s of the struct parent, named name in messages.
func (d *decoder) value(s spec, name string, fv, parent reflect.Value) func(*yaml.Node) error {
	if s.kind != "" {
		return d.custom(s, name, fv, parent)
	}
	sg := nonNegative
	if s.positive {
		sg = positive
	}
	switch p := fv.Addr().Interface().(type) {
	case *Duration:
		return d.duration(name, p, sg)
	case *time.Duration:
		return d.duration(name, (*Duration)(p), sg)
	case *ByteSize:
		return d.size(name, p, sg, s.max)
	case *wire.BitRate:
		return d.bitRate(name, p, sg)
	case *float64:
		return d.float(name, p, sg)
	case *int64:
		return d.integer(name, p, s.min, s.max)
	case *int:
		return d.int(name, p, s.min, s.max)
	case *uint64:
		return d.unsigned(name, p)
	case *bool:
		return d.boolean(name, p)
	case *string:
		return func(v *yaml.Node) error {
			text, err := d.scalar(v, name)
			*p = text
			return err
		}
	case *map[string]float64:
		keys, ok := keyLists[s.keys]
		if !ok {
			panic(fmt.Sprintf("profile: %s: no key list %q", name, s.keys))
		}
		return func(v *yaml.Node) error { return d.floats(v, name, keys, *p, sg) }
	}
	if fv.Kind() == reflect.Struct {
		return d.sub(name, d.fields(fv.Addr(), name+"."))
	}
	panic(fmt.Sprintf("profile: %s: no decoder for %s", name, fv.Type()))
}

// floats decodes a mapping of the given keys to numbers into dst.
func (d *decoder) floats(v *yaml.Node, name string, keys []string, dst map[string]float64, s sign) error {
	fs := make([]field, len(keys))
	for i, k := range keys {
		fs[i] = field{k, func(v *yaml.Node) error {
			var x float64
			if err := d.float(name+"."+k, &x, s)(v); err != nil {
				return err
			}
			dst[k] = x
			return nil
		}}
	}
	return d.mapping(v, name, fs)
}

// custom decodes a value of kind s.kind into fv, field of the struct parent.
func (d *decoder) custom(s spec, name string, fv, parent reflect.Value) func(*yaml.Node) error {
	str := func(dec func(*yaml.Node, *string) error) func(*yaml.Node) error {
		return func(v *yaml.Node) error { return dec(v, fv.Addr().Interface().(*string)) }
	}
	list := func() *[]string { return fv.Addr().Interface().(*[]string) }
	switch s.kind {
	case "name":
		return str(d.name)
	case "target":
		return str(d.target)
	case "rest":
		return str(d.rest)
	case "proxy":
		return str(d.proxy)
	case "ca":
		return str(d.caFile)
	case "quote":
		return str(func(v *yaml.Node, dst *string) error { return d.quote(v, name, dst) })
	case "group_name":
		return str(func(v *yaml.Node, dst *string) error { return d.groupName(v, name, dst) })
	case "subscribe":
		return str(func(v *yaml.Node, dst *string) error { return d.subscribe(v, name, dst) })
	case "encoding":
		return str(func(v *yaml.Node, dst *string) error { return d.encoding(v, name, dst) })
	case "side":
		return str(func(v *yaml.Node, dst *string) error { return d.side(v, name, dst) })
	case "fault_kind":
		return str(func(v *yaml.Node, dst *string) error { return d.faultKind(v, name, dst) })
	case "compression":
		return func(v *yaml.Node) error { return d.compression(v, name, fv.Addr().Interface().(*wire.Compression)) }
	case "scenarios", "paths", "encodings", "compressions": // a bench profile's
		return d.benchList(s.kind, name, fv)
	case "cpus":
		return func(v *yaml.Node) error { return d.cpus(v, name, fv.Addr().Interface().(*CPUs)) }
	case "window":
		return func(v *yaml.Node) error { return d.window(v, name, fv.Addr().Interface().(*Duration)) }
	case "speed":
		return func(v *yaml.Node) error { return d.speed(v, name, fv.Addr().Interface().(*float64)) }
	case "per_connection":
		return func(v *yaml.Node) error { return d.perConnection(v, name, fv.Addr().Interface().(*int)) }
	case "libraries":
		return func(v *yaml.Node) error { return d.names(v, name, "library", wire.Libraries, nil, false, list()) }
	case "column_libraries": // a soak's: empty with variants (validateVariants)
		return func(v *yaml.Node) error { return d.names(v, name, "library", wire.Libraries, nil, true, list()) }
	case "library":
		return str(func(v *yaml.Node, dst *string) error { return d.library(v, name, dst) })
	case "column_name":
		return str(func(v *yaml.Node, dst *string) error { return d.columnName(v, name, dst) })
	case "variants":
		return func(v *yaml.Node) error { return d.variants(v, fv.Addr().Interface().(*[]Variant)) }
	case "symbols":
		return func(v *yaml.Node) error { return d.symbols(v, name, list()) }
	case "symbols_or_top": // and its sibling Top
		return func(v *yaml.Node) error {
			return d.symbolsOrTop(v, name, list(), parent.FieldByName("Top").Addr().Interface().(**Top))
		}
	case "streams":
		return func(v *yaml.Node) error { return d.streams(v, name, list()) }
	case "fault_streams":
		return func(v *yaml.Node) error { return d.faultStreams(v, name, list()) }
	case "give_up": // the Reconnect's count or duration
		return func(v *yaml.Node) error { return d.giveUp(v, name, parent.Addr().Interface().(*Reconnect)) }
	case "groups":
		return func(v *yaml.Node) error { return d.groups(v, fv.Addr().Interface().(*[]Group)) }
	case "faults":
		return func(v *yaml.Node) error { return d.faults(v, fv.Addr().Interface().(*[]Fault)) }
	case "thresholds":
		return func(v *yaml.Node) error { return d.thresholds(v, fv.Addr().Interface().(*[]Threshold)) }
	case "labels":
		return func(v *yaml.Node) error { return d.labels(v, name, fv.Addr().Interface().(*Labels)) }
	}
	panic(fmt.Sprintf("profile: %s: unknown kind %q", name, s.kind))
}
