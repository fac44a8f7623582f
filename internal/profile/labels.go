package profile

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Labels are the user's names for a run (region: fra, instance: c6i.large):
// the live view puts them on soak_run_info, and the report over several runs
// labels each run's columns with them. Set in a profile's labels: mapping and
// by soak run -label KEY=VALUE, which overrides the profile's value of KEY.
type Labels map[string]string

// MaxLabels bounds a run's labels: a handful name a host; hundreds are a
// mistake that would make every scrape of soak_run_info heavy.
const MaxLabels = 32

// maxLabelValue bounds a label's value, in characters.
const maxLabelValue = 128

// labelKeyRE is a Prometheus label name; one beginning with "__" is
// Prometheus' own.
var labelKeyRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// ReservedLabels are the label names the live view gives its own series
// (soak_run_info's identity labels among them) and those Prometheus adds at
// a scrape: a user label of one of these names would hide or replace them.
var ReservedLabels = []string{"run_id", "lib", "profile", "target", "version", "go_version", "kernel", "cpu_model",
	"cpu_logical", "arch", "os", "virtualization", "state", "when", "kind", "result", "mode", "le", "quantile",
	"job", "instance"}

// CheckLabel says what is wrong with a label, or nil: its key is a
// Prometheus label name, not reserved, and its value is UTF-8 text without
// control characters, at most 128 characters.
func CheckLabel(key, value string) error {
	switch {
	case !labelKeyRE.MatchString(key):
		return fmt.Errorf("label name %q: want a letter or '_' then letters, digits or '_' (a Prometheus label name)", key)
	case strings.HasPrefix(key, "__"):
		return fmt.Errorf("label name %q: names beginning with __ are Prometheus' own", key)
	case slices.Contains(ReservedLabels, key):
		return fmt.Errorf("label name %q is the live view's own (reserved: %s)", key, strings.Join(ReservedLabels, ", "))
	case !utf8.ValidString(value):
		return fmt.Errorf("label %s: the value is not UTF-8 text", key)
	case utf8.RuneCountInString(value) > maxLabelValue:
		return fmt.Errorf("label %s: the value has %d characters: at most %d", key, utf8.RuneCountInString(value), maxLabelValue)
	case strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("label %s: the value has a control character", key)
	}
	return nil
}

// Set sets key to value (a -label flag), checked; it keeps at most
// MaxLabels labels.
func (l *Labels) Set(key, value string) error {
	if err := CheckLabel(key, value); err != nil {
		return err
	}
	if *l == nil {
		*l = Labels{}
	}
	if _, ok := (*l)[key]; !ok && len(*l) >= MaxLabels {
		return fmt.Errorf("label %s: a run has at most %d labels", key, MaxLabels)
	}
	(*l)[key] = value
	return nil
}

// Keys are the label names, sorted.
func (l Labels) Keys() []string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String is the labels as k=v pairs, sorted by key, comma-separated.
func (l Labels) String() string {
	parts := make([]string, 0, len(l))
	for _, k := range l.Keys() {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ",")
}

// labels reads a profile's labels: mapping of names to single values.
func (d *decoder) labels(v *yaml.Node, name string, dst *Labels) error {
	n := deref(v)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return d.errf(n.Line, "%s must be a mapping of names to values (region: fra), got %s", name, kindName(n))
	}
	if len(n.Content)/2 > MaxLabels {
		return d.errf(n.Line, "%s has %d labels: at most %d", name, len(n.Content)/2, MaxLabels)
	}
	out := Labels{}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, line := deref(n.Content[i]), d.at(n.Content[i].Line)
		if k.Kind != yaml.ScalarNode {
			return d.errf(line, "a key in %s is %s: want a plain name", name, kindName(k))
		}
		if first, dup := seen[k.Value]; dup {
			return d.errf(line, "duplicate key %q in %s%s", k.Value, name, d.firstAt(first))
		}
		seen[k.Value] = line
		val, err := d.scalar(n.Content[i+1], name+"."+k.Value)
		if err != nil {
			return err
		}
		if err := CheckLabel(k.Value, val); err != nil {
			return d.errf(line, "%s: %v", name, err)
		}
		out[k.Value] = val
	}
	*dst = out
	return nil
}
