package profile

import (
	"bytes"
	"cmp"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/spelling"
	"github.com/wssoak/wssoak/internal/wire"
)

// decoder walks the YAML node tree by hand, so every problem carries the line
// of the node at fault and unknown keys are caught with a suggestion.
type decoder struct {
	path  string
	lines map[string]int // dotted setting name ("keepalive.timeout", "groups.1.streams.0") → line
	set   map[string]bool
	// alias is the alias (*name) whose anchored value is being decoded, if
	// any: the nodes of that value carry the anchor's lines, and the problem
	// is where the alias uses them.
	alias *yaml.Node
	// stored: the text stored with a run, parsed again to read its settings
	// (thresholds); the files it names are not read, they may be long gone.
	stored bool
	src    []byte      // the profile's text
	item   string      // the list item being decoded, as in lines ("groups.1")
	bench  *BenchNames // a bench profile's: what its lists are checked against
	// flag: the value is a command-line flag's (Bench.Set), not a file's;
	// path is "flag -NAME" and problems carry no line.
	flag bool
}

func (d *decoder) errf(line int, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if d.flag {
		return &Error{Path: d.path, Msg: msg}
	}
	if a := d.alias; a != nil {
		line = a.Line
		msg += fmt.Sprintf(" (in the value of *%s, anchored at line %d)", a.Value, a.Alias.Line)
	}
	if line < 1 {
		line = 1
	}
	return &Error{Path: d.path, Line: line, Msg: msg}
}

// firstAt is " (first at line N)" for an item listed twice in a file, and
// nothing for a flag's value, which has no lines.
func (d *decoder) firstAt(line int) string {
	if d.flag {
		return ""
	}
	return fmt.Sprintf(" (first at line %d)", line)
}

// at is the line to record for a node at line: the alias's while an anchored
// value is decoded.
func (d *decoder) at(line int) int {
	if d.alias != nil {
		return d.alias.Line
	}
	return line
}

// via decodes v with dec; when v is an alias, the lines inside its anchored
// value are reported as the alias's (see decoder.alias).
func (d *decoder) via(v *yaml.Node, dec func(*yaml.Node) error) error {
	if v.Kind != yaml.AliasNode || v.Alias == nil || d.alias != nil {
		return dec(v)
	}
	d.alias = v
	defer func() { d.alias = nil }()
	return dec(v)
}

// field is one key of a mapping and how to decode its value.
type field struct {
	key    string
	decode func(v *yaml.Node) error
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the messages of the YAML parser (not its scanner); the
// parser reports 0-based lines.
var parserProblems = []string{
	"did not find expected node content", "did not find expected '-' indicator",
	"did not find expected key", "did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found undefined tag handle", "did not find expected <document start>",
	"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive",
}

// unknownAnchor is the parser's message for an alias without anchor; it
// carries no line.
var unknownAnchor = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

// syntaxError turns a YAML parser error into one "<path>:<line>: ..." line.
func (d *decoder) syntaxError(err error, data []byte) error {
	lines := bytes.Split(data, []byte("\n"))
	if m := unknownAnchor.FindStringSubmatch(err.Error()); m != nil {
		return d.errf(aliasLine(lines, m[1]), "unknown anchor %q: *%s is used before any &%s", m[1], m[1], m[1])
	}
	// Without "line N:" the parser means the first line.
	line, msg := 1, strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n", " "), "yaml: ")
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if slices.Contains(parserProblems, msg) {
			line++
		}
		last := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			last++
		}
		line = min(line, max(last, 1))
	}
	switch msg {
	case "found a tab character that violates indentation", "found character that cannot start any token":
		// The first message comes with the line where the value before the
		// tab started; the tab is on that line or a later one.
		for i := line - 1; i < len(lines); i++ {
			lead := lines[i][:len(lines[i])-len(bytes.TrimLeft(lines[i], " \t"))]
			if bytes.IndexByte(lead, '\t') >= 0 {
				line, msg = i+1, "a tab in the indentation: YAML indents with spaces only"
				break
			}
			if msg != "found a tab character that violates indentation" {
				break // any other character that cannot start a token: the line is right
			}
		}
	}
	return d.errf(line, "%s", msg)
}

// aliasLine is the line of the first use of alias *name in lines (1 if none is found).
func aliasLine(lines [][]byte, name string) int {
	use := []byte("*" + name)
	for i, l := range lines {
		for j := 0; ; {
			k := bytes.Index(l[j:], use)
			if k < 0 {
				break
			}
			end := j + k + len(use)
			if end == len(l) || bytes.IndexByte([]byte(" \t\r,]}#"), l[end]) >= 0 {
				return i + 1
			}
			j = end
		}
	}
	return 1
}

// document returns the one mapping of settings a profile's text holds.
func (d *decoder) document(data []byte) (*yaml.Node, error) {
	d.lines, d.set, d.src = map[string]int{}, map[string]bool{}, data
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, d.errf(1, "empty profile")
		}
		return nil, d.syntaxError(err, data)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, d.errf(next.Line, "a second YAML document: want one profile per file")
	} else if !errors.Is(err, io.EOF) {
		return nil, d.syntaxError(err, data)
	}
	root := deref(&doc)
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = deref(root.Content[0])
	}
	if isNull(root) {
		return nil, d.errf(1, "empty profile")
	}
	if root.Kind != yaml.MappingNode {
		return nil, d.errf(root.Line, "profile must be a mapping of settings, got %s", kindName(root))
	}
	return root, nil
}

func (d *decoder) parse(data []byte) (*Profile, error) {
	root, err := d.document(data)
	if err != nil {
		return nil, err
	}
	p := Default()
	p.Name = ""
	p.Replay.Symbols = nil
	if err := d.mapping(root, "profile", d.fields(reflect.ValueOf(p), "")); err != nil {
		return nil, err
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(d.path), filepath.Ext(d.path))
	}
	if p.Replay.Symbols == nil {
		p.Replay.Symbols = append([]string(nil), p.Symbols...)
	}
	if err := d.validate(p); err != nil {
		return nil, err
	}
	return p, nil
}

// window reads the run's duration: at least a second.
func (d *decoder) window(v *yaml.Node, name string, dst *Duration) error {
	if err := d.duration(name, dst, positive)(v); err != nil {
		return err
	}
	if *dst < Duration(time.Second) {
		return d.errf(deref(v).Line, "%s %v is shorter than one second: a run is recorded second by second", name, time.Duration(*dst))
	}
	if *dst > Duration(MaxWindow) {
		return d.errf(deref(v).Line, "%s %v is longer than %s: a run records every second (a day is ~120 MB); run several", name, time.Duration(*dst), MaxWindow)
	}
	return nil
}

// MaxWindow is the longest window (duration, warmup) a run takes: 31 days,
// a month of seconds in one database (about 3.7 GB at the default profile's
// rate), far above the day-long runs the tool is for, far below what an
// overflow or a mistyped unit (1000000h) asks for.
const MaxWindow = 31 * 24 * time.Hour

// speed reads replay.speed: above 0, at most MaxSpeed.
func (d *decoder) speed(v *yaml.Node, name string, dst *float64) error {
	if err := d.float(name, dst, positive)(v); err != nil {
		return err
	}
	if *dst > MaxSpeed {
		return d.errf(deref(v).Line, "%s %v is above %d: at that rate the server only overflows its queues", name, *dst, MaxSpeed)
	}
	return nil
}

func (d *decoder) boolean(name string, dst *bool) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		text, err := d.scalar(v, name)
		if err != nil {
			return err
		}
		n := deref(v)
		if n.Tag != "!!bool" || n.Decode(dst) != nil {
			return d.errf(n.Line, "%s must be true or false, got %q", name, text)
		}
		return nil
	}
}

// proxy checks the proxy URL; its error never repeats the password.
func (d *decoder) proxy(v *yaml.Node, dst *string) error {
	s, err := d.scalar(v, "proxy")
	if err != nil {
		return d.errf(deref(v).Line, "proxy must be a single URL such as socks5://user:password@host:1080")
	}
	px, err := endpoint.ParseProxy(s)
	if err != nil {
		return d.errf(deref(v).Line, "%v", err)
	}
	// The run stores the profile's text with every user:password@ masked,
	// which needs the URL written as it is: a YAML escape or a line folded
	// inside it would leave the password, or pieces of it, in the stored text.
	if px.Pass != "" && !bytes.Contains(d.src, []byte(s)) {
		return d.errf(deref(v).Line, "proxy: write the URL as it is, on one line, without YAML escapes or folding (the run stores the profile with the password masked)")
	}
	*dst = s
	return nil
}

// caFile resolves a CA file against the profile's directory and checks that it holds a
// PEM certificate now, rather than at the first dial of every worker.
func (d *decoder) caFile(v *yaml.Node, dst *string) error {
	s, err := d.scalar(v, "tls.ca")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(filepath.Dir(d.path), s)
	}
	if d.stored {
		*dst = s
		return nil
	}
	if err := endpoint.AppendCAFile(x509.NewCertPool(), s); err != nil {
		return d.errf(deref(v).Line, "tls.ca: %v", err)
	}
	*dst = s
	return nil
}

// mapping decodes the keys of n in file order with fs; what names n in messages.
func (d *decoder) mapping(n *yaml.Node, what string, fs []field) error {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return d.errf(n.Line, "%s must be a mapping, got %s", what, kindName(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		line := d.at(n.Content[i].Line) // an alias as a key: its own line
		if k.Kind != yaml.ScalarNode {
			return d.errf(line, "a key in %s is %s: want a plain name", what, kindName(k))
		}
		if first, dup := seen[k.Value]; dup {
			return d.errf(line, "duplicate key %q in %s (first at line %d)", k.Value, what, first)
		}
		seen[k.Value] = line
		i := slices.IndexFunc(fs, func(f field) bool { return f.key == k.Value })
		if i < 0 {
			keys := make([]string, len(fs))
			for j, f := range fs {
				keys[j] = f.key
			}
			return d.errf(line, "unknown key %q in %s%s", k.Value, what, suggest(k.Value, keys))
		}
		name := what + "." + k.Value
		if what == "profile" {
			name = k.Value
		}
		d.lines[name], d.set[name] = line, true
		if isNull(deref(v)) {
			return d.errf(line, "%s has no value", name)
		}
		if err := d.via(v, fs[i].decode); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) sub(what string, fs []field) func(*yaml.Node) error {
	return func(v *yaml.Node) error { return d.mapping(v, what, fs) }
}

// scalar returns the text of a scalar node, or an error naming the setting.
func (d *decoder) scalar(v *yaml.Node, name string) (string, error) {
	v = deref(v)
	if v.Kind != yaml.ScalarNode || isNull(v) {
		return "", d.errf(v.Line, "%s must be a single value, got %s", name, kindName(v))
	}
	return v.Value, nil
}

// list returns the scalar items of a sequence node with their lines; a list
// of more than max items is refused before its items are looked at.
func (d *decoder) list(v *yaml.Node, name string, max int) ([]string, []int, error) {
	v = deref(v)
	if v.Kind != yaml.SequenceNode {
		return nil, nil, d.errf(v.Line, "%s must be a list, got %s", name, kindName(v))
	}
	if len(v.Content) > max {
		return nil, nil, d.errf(v.Line, "%s has %d items: at most %d", name, len(v.Content), max)
	}
	items, lines := make([]string, 0, len(v.Content)), make([]int, 0, len(v.Content))
	for _, it := range v.Content {
		err := d.via(it, func(it *yaml.Node) error {
			s, err := d.scalar(it, name+" item")
			items, lines = append(items, s), append(lines, d.at(it.Line))
			return err
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return items, lines, nil
}

// sign is the range check of a numeric setting.
type sign int

const (
	nonNegative sign = iota
	positive
)

// shown is a value's text as a message shows it: quoted when it holds a
// line break or another unprintable character (a message is one line).
func shown(text string) string {
	if strings.ContainsFunc(text, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(text)
	}
	return text
}

func (d *decoder) checkSign(line int, name string, neg, zero bool, s sign, text string) error {
	switch {
	case neg:
		return d.errf(line, "%s must not be negative, got %s", name, shown(text))
	case zero && s == positive:
		return d.errf(line, "%s must be greater than zero", name)
	}
	return nil
}

func (d *decoder) duration(name string, dst *Duration, s sign) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		text, err := d.scalar(v, name)
		if err != nil {
			return err
		}
		line := deref(v).Line
		x, err := parseDuration(text)
		if err == errDurationRange && strings.HasPrefix(text, "-") {
			return d.checkSign(line, name, true, false, s, text) // no setting takes a negative duration
		}
		if err != nil {
			return d.errf(line, "bad duration %q: %v", text, err)
		}
		if err := d.checkSign(line, name, x < 0, x == 0, s, text); err != nil {
			return err
		}
		*dst = x
		return nil
	}
}

// size reads a size; max bounds it (math.MaxInt64: no bound of its own).
func (d *decoder) size(name string, dst *ByteSize, s sign, max int64) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		text, err := d.scalar(v, name)
		if err != nil {
			return err
		}
		line := deref(v).Line
		x, err := parseByteSize(text)
		if err != nil {
			return d.errf(line, "%s: bad size %q: %v", name, text, err)
		}
		if err := d.checkSign(line, name, x < 0, x == 0, s, text); err != nil {
			return err
		}
		if int64(x) > max {
			return d.errf(line, "%s must be at most %v, got %s", name, ByteSize(max), shown(text))
		}
		*dst = x
		return nil
	}
}

// unsigned reads an integer from 0 to the largest uint64 (a seed).
func (d *decoder) unsigned(name string, dst *uint64) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		text, err := d.scalar(v, name)
		if err != nil {
			return err
		}
		n := deref(v)
		var x uint64
		switch {
		case n.Tag == "!!int" && n.Decode(&x) == nil:
		case !decimal.MatchString(text):
			return d.errf(n.Line, "%s must be an integer, got %q", name, text)
		case text[0] == '-':
			return d.errf(n.Line, "%s must not be negative, got %s", name, text)
		default:
			return d.errf(n.Line, "%s must be at most %d, got %s", name, uint64(math.MaxUint64), text)
		}
		*dst = x
		return nil
	}
}

func (d *decoder) integer(name string, dst *int64, lo, hi int64) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		text, err := d.scalar(v, name)
		if err != nil {
			return err
		}
		n := deref(v)
		var x int64
		fits := n.Tag == "!!int" && n.Decode(&x) == nil
		if !fits && !decimal.MatchString(text) {
			return d.errf(n.Line, "%s must be an integer, got %q", name, text)
		}
		// An integer that does not fit 64 bits is out of range on its side.
		neg := fits && x < 0 || !fits && text[0] == '-'
		switch {
		case neg && lo >= 0:
			return d.errf(n.Line, "%s must not be negative, got %s", name, text)
		case !fits && neg || fits && x < lo:
			return d.errf(n.Line, "%s must be at least %d, got %s", name, lo, text)
		case !fits || x > hi:
			return d.errf(n.Line, "%s must be at most %d, got %s", name, hi, text)
		}
		*dst = x
		return nil
	}
}

// decimal is an integer in decimal digits, however large.
var decimal = regexp.MustCompile(`^[-+]?[0-9][0-9_]*$`)

func (d *decoder) int(name string, dst *int, lo, hi int64) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		var x int64
		if err := d.integer(name, &x, lo, hi)(v); err != nil {
			return err
		}
		*dst = int(x)
		return nil
	}
}

func (d *decoder) float(name string, dst *float64, s sign) func(*yaml.Node) error {
	return func(v *yaml.Node) error {
		text, err := d.scalar(v, name)
		if err != nil {
			return err
		}
		n := deref(v)
		var x float64
		if _, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64); errors.Is(err, strconv.ErrRange) {
			return d.errf(n.Line, "%s %s is out of range: a number is at most about 1.8e308", name, text)
		}
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&x) != nil || math.IsNaN(x) {
			return d.errf(n.Line, "%s must be a number, got %q", name, text)
		}
		if math.IsInf(x, 0) {
			return d.errf(n.Line, "%s must be a finite number, got %q", name, text)
		}
		if err := d.checkSign(n.Line, name, x < 0, x == 0, s, text); err != nil {
			return err
		}
		*dst = x
		return nil
	}
}

// giveUp reads reconnect.give_up_after: a number of failed dials in a row, or
// a duration of failing dials.
func (d *decoder) giveUp(v *yaml.Node, name string, r *Reconnect) error {
	if n := deref(v); n.Tag == "!!int" || n.Kind == yaml.ScalarNode && decimal.MatchString(n.Value) {
		var x int
		if err := d.int(name, &x, 1, 1<<30)(v); err != nil {
			return err
		}
		r.GiveUpDials, r.GiveUpAfter = x, 0
		return nil
	}
	var x Duration
	text, err := d.scalar(v, name)
	if err != nil {
		return err
	}
	if _, err := parseDuration(text); err == errDurationUnit {
		return d.errf(deref(v).Line, "bad %s %q: want a number of failed dials (20) or a duration (10m)", name, text)
	}
	if err := d.duration(name, &x, positive)(v); err != nil {
		return err
	}
	r.GiveUpDials, r.GiveUpAfter = 0, x
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (d *decoder) name(v *yaml.Node, dst *string) error {
	s, err := d.scalar(v, "name")
	if err != nil {
		return err
	}
	if !nameRE.MatchString(s) || len(s) > 64 {
		return d.errf(deref(v).Line, "bad name %q: want up to 64 letters, digits, '.', '-' or '_'", s)
	}
	*dst = s
	return nil
}

func (d *decoder) target(v *yaml.Node, dst *string) error {
	s, err := d.scalar(v, "target")
	if err != nil {
		return err
	}
	if err := checkTarget(s); err != nil {
		return d.errf(deref(v).Line, "bad target %q: %v", endpoint.Mask(s), err) // a target with credentials is refused, never printed
	}
	*dst = s
	return nil
}

// names reads a list of names, each one of known (or accepted by accept,
// when given), none twice; what is the noun of an item in messages. An empty
// list is refused unless mayBeEmpty, and is then nil.
func (d *decoder) names(v *yaml.Node, name, what string, known []string, accept func(string) error, mayBeEmpty bool, dst *[]string) error {
	// Names from known: the checks below stop at the first unknown or
	// repeated one. Names accept takes may be many (sized scenarios): bound.
	bound := math.MaxInt
	if accept != nil {
		bound = maxNames
	}
	items, lines, err := d.list(v, name, bound)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		if !mayBeEmpty {
			return d.errf(deref(v).Line, "%s is empty: list at least one of %s", name, strings.Join(known, ", "))
		}
		*dst = nil
		return nil
	}
	first := map[string]int{}
	for i, s := range items {
		switch {
		case slices.Contains(known, s):
		case accept != nil:
			if err := accept(s); err != nil {
				if msg := err.Error(); !strings.Contains(msg, strconv.Quote(s)) {
					return d.errf(lines[i], "%s %q: %s", what, s, msg) // the reason alone would not name the item
				}
				return d.errf(lines[i], "%v", err)
			}
		default:
			return d.errf(lines[i], "unknown %s %q (known: %s)%s", what, s, strings.Join(known, ", "), suggest(s, known))
		}
		if j, dup := first[s]; dup {
			return d.errf(lines[i], "%s %q listed twice%s", what, s, d.firstAt(lines[j]))
		}
		first[s] = i
	}
	*dst = items
	return nil
}

// maxNames bounds a list of names that accept judges (scenarios): far above
// any real list.
const maxNames = 1000

func (d *decoder) symbols(v *yaml.Node, name string, dst *[]string) error {
	syms, lines, err := d.list(v, name, MaxSymbols)
	if err != nil {
		return err
	}
	if len(syms) == 0 {
		return d.errf(deref(v).Line, "%s is empty", name)
	}
	first := make(map[string]int, len(syms))
	for i, s := range syms {
		if err := checkSymbol(s); err != nil {
			return d.errf(lines[i], "bad symbol %q: %v", s, err)
		}
		if j, dup := first[s]; dup {
			return d.errf(lines[i], "symbol %q listed twice%s", s, d.firstAt(lines[j]))
		}
		first[s] = i
	}
	*dst = syms
	return nil
}

// symbolsOrTop decodes a symbol list, or {top: N, quote: Q}.
func (d *decoder) symbolsOrTop(v *yaml.Node, name string, list *[]string, top **Top) error {
	if deref(v).Kind != yaml.MappingNode {
		return d.symbols(v, name, list)
	}
	t := &Top{Line: d.at(deref(v).Line)}
	if err := d.mapping(v, name, d.fields(reflect.ValueOf(t), name+".")); err != nil {
		return err
	}
	if t.N == 0 || t.Quote == "" {
		return d.errf(t.Line, "%s: want both top and quote, as {top: 50, quote: USDT}", name)
	}
	*list, *top = nil, t
	return nil
}

// quote reads the quote asset of {top: N, quote: Q}.
func (d *decoder) quote(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err != nil {
		return err
	}
	if checkSymbol(strings.ToLower(s)) != nil || strings.ToUpper(s) != s {
		return d.errf(deref(v).Line, "bad %s %q: want an uppercase asset such as USDT", name, s)
	}
	*dst = s
	return nil
}

func (d *decoder) rest(v *yaml.Node, dst *string) error {
	s, err := d.scalar(v, "rest")
	if err != nil {
		return err
	}
	u, perr := url.Parse(s)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return d.errf(deref(v).Line, "bad rest %q: want an http:// or https:// base URL such as %s", s, DefaultREST)
	}
	*dst = strings.TrimRight(s, "/")
	return nil
}

func (d *decoder) groups(v *yaml.Node, dst *[]Group) error {
	v = deref(v)
	if v.Kind != yaml.SequenceNode {
		return d.errf(v.Line, "groups must be a list, got %s", kindName(v))
	}
	if len(v.Content) == 0 {
		return d.errf(v.Line, "groups is empty: define at least one connection group")
	}
	if len(v.Content) > MaxStreams {
		return d.errf(v.Line, "groups has %d items: at most %d", len(v.Content), MaxStreams)
	}
	gs := make([]Group, len(v.Content))
	first := map[string]int{} // group name → index
	for i, gn := range v.Content {
		g := &gs[i]
		if err := d.via(gn, func(gn *yaml.Node) error { return d.group(gn, i, g) }); err != nil {
			return err
		}
		if j, dup := first[g.Name]; dup {
			return d.errf(g.Line, "group %q defined twice (first at line %d)", g.Name, gs[j].Line)
		}
		first[g.Name] = i
	}
	*dst = gs
	return nil
}

// group decodes the i-th item of groups into g.
func (d *decoder) group(gn *yaml.Node, i int, g *Group) error {
	*g = newGroup("")
	g.Line = d.at(deref(gn).Line)
	pre := "groups." + strconv.Itoa(i)
	d.lines[pre] = g.Line
	d.item = pre
	defer func() { d.item = "" }()
	if err := d.mapping(gn, "group", d.fields(reflect.ValueOf(g), "")); err != nil {
		return err
	}
	if g.Name == "" {
		return d.errf(g.Line, "group has no name")
	}
	if g.Streams == nil {
		return d.errf(g.Line, "group %q has no streams", g.Name)
	}
	return nil
}

func (d *decoder) groupName(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err == nil && !nameRE.MatchString(s) {
		err = d.errf(deref(v).Line, "bad %s %q: want letters, digits, '.', '-' or '_'", name, s)
	}
	*dst = s
	return err
}

// streams reads a group's stream templates, recording their lines for validate.
func (d *decoder) streams(v *yaml.Node, name string, dst *[]string) error {
	ss, lines, err := d.list(v, name, MaxStreams)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return d.errf(deref(v).Line, "%s is empty", name)
	}
	for j, l := range lines {
		d.lines[d.item+".streams."+strconv.Itoa(j)] = l
	}
	*dst = ss
	return nil
}

func (d *decoder) perConnection(v *yaml.Node, name string, dst *int) error {
	err := d.int(name, dst, 1, math.MaxInt64)(v)
	n := deref(v)
	_, perr := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
	tooMany := err != nil && errors.Is(perr, strconv.ErrRange) && n.Value[0] != '-' // more than 64 bits hold
	if err != nil && !tooMany {
		return err
	}
	if tooMany || *dst > MaxPerConnection {
		return d.errf(n.Line, "%s %s is over the Binance limit of %d streams per connection",
			name, n.Value, MaxPerConnection)
	}
	return nil
}

func (d *decoder) subscribe(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err == nil && s != SubscribeURL && s != SubscribeMessage {
		err = d.errf(deref(v).Line, "bad %s %q: want %q or %q", name, s, SubscribeURL, SubscribeMessage)
	}
	*dst = s
	return err
}

// encoding reads an events' encoding: one of codec's names.
func (d *decoder) encoding(v *yaml.Node, name string, dst *string) error {
	s, err := d.scalar(v, name)
	if err == nil {
		if _, perr := codec.Parse(s); perr != nil {
			err = d.errf(deref(v).Line, "bad %s %q: want one of %s", name, s, strings.Join(codec.Names(), ", "))
		}
	}
	*dst = s
	return err
}

// compression reads off, on or no_context_takeover.
func (d *decoder) compression(v *yaml.Node, name string, dst *wire.Compression) error {
	s, err := d.scalar(v, name)
	if err != nil {
		return err
	}
	c, perr := wire.ParseCompression(s)
	if perr != nil {
		return d.errf(deref(v).Line, "bad %s %q: want one of %s", name, s, strings.Join(wire.CompressionNames(), ", "))
	}
	*dst = c
	return nil
}

// validate checks what involves several settings and returns the problem on
// the earliest line.
func (d *decoder) validate(p *Profile) error {
	var errs []*Error
	add := func(e *Error) { errs = append(errs, e) }
	line := func(names ...string) int {
		for _, n := range names {
			if l, ok := d.lines[n]; ok {
				return l
			}
		}
		return 1
	}
	if p.Target != TargetLocal && p.Encoding != "" && p.Encoding != codec.JSON.String() {
		// Against a live target only what it serves is asked for.
		add(d.errf(line("encoding"), "encoding %s applies only to target %q (Binance serves json), not %q", p.Encoding, TargetLocal, p.Target))
	}
	if p.Target != TargetLocal && d.set["replay"] {
		add(d.errf(line("replay"), "replay settings apply only to target %q, not %q", TargetLocal, p.Target))
	}
	if k := p.Keepalive; k.Interval > 0 && k.Timeout <= k.Interval {
		add(d.errf(line("keepalive.timeout", "keepalive.interval", "keepalive"),
			"keepalive.timeout (%v) must be longer than keepalive.interval (%v)", k.Timeout, k.Interval))
	}
	if r := p.Reconnect; r.Min > r.Max {
		add(d.errf(line("reconnect.max", "reconnect.min", "reconnect"),
			"reconnect.max (%v) must not be shorter than reconnect.min (%v)", r.Max, r.Min))
	}
	if p.RcvBuf > math.MaxInt32 {
		add(d.errf(line("rcvbuf"), "rcvbuf %v is too large (at most 2GiB-1)", p.RcvBuf))
	}
	if d.set["rest"] && p.Target == TargetLocal && !p.NeedsResolve() {
		add(d.errf(line("rest"), "rest is only used to resolve symbols given as {top: N, quote: Q}; no symbols list here has that form"))
	}
	if err := d.checkSize(p); err != nil {
		// Anything further would expand the groups in full.
		return slices.MinFunc(append(errs, err), func(a, b *Error) int { return a.Line - b.Line })
	}
	for i, g := range p.Groups {
		pre := "groups." + strconv.Itoa(i)
		sym := placeholderSymbol
		switch {
		case len(g.Symbols) > 0:
			sym = g.Symbols[0]
		case g.Top == nil && len(p.Symbols) > 0:
			sym = p.Symbols[0]
		}
		for j, t := range g.Streams {
			l := line(pre+".streams."+strconv.Itoa(j), pre)
			warn, unknown, err := checkTemplate(t, sym)
			switch {
			case err != nil:
				add(d.errf(l, "%v", err))
			case unknown && p.Target == TargetLocal:
				// The replay server serves the kinds it knows and no other:
				// such a stream would only ever stall. Against Binance it is a
				// warning: the exchange accepts it and sends nothing.
				add(d.errf(l, "unknown stream %q: the replay server (target local) serves no such stream%s",
					t, streamSuggestion(t)))
			case warn != "":
				p.Warnings = append(p.Warnings, d.errf(l, "%s%s", warn, streamSuggestion(t)).Error())
			}
		}
	}
	d.validateLink(p, add)
	d.validateSide(p, add)
	d.validateFaults(p, add)
	d.validateVariants(p, add)
	if len(errs) == 0 {
		return nil
	}
	return slices.MinFunc(errs, func(a, b *Error) int { return a.Line - b.Line })
}

// checkSize bounds the streams and connections of one library, summed over
// the groups (MaxStreams, MaxConnections). It counts a group's distinct
// streams as Expand does, stopping past the bound; a symbols list still given
// as {top: N} counts as N symbols.
func (d *decoder) checkSize(p *Profile) *Error {
	streams, conns := 0, 0
	for _, g := range p.Groups {
		var n int
		switch top := cmp.Or(g.Top, p.Top); {
		case g.Symbols == nil && top != nil:
			n = countTop(g.Streams, top.N) // the names are not known yet
		case g.Symbols != nil:
			n = countStreams(g.Streams, g.Symbols, MaxStreams-streams+1)
		default:
			n = countStreams(g.Streams, p.Symbols, MaxStreams-streams+1)
		}
		if streams+n > MaxStreams {
			if streams == 0 {
				return d.errf(g.Line, "group %q subscribes to more than %d streams: a library subscribes to at most %d over all groups",
					g.Name, MaxStreams, MaxStreams)
			}
			return d.errf(g.Line, "group %q brings the streams past %d (%d in the groups before it): a library subscribes to at most %d over all groups",
				g.Name, MaxStreams, streams, MaxStreams)
		}
		streams += n
		per := min(max(g.PerConnection, 1), MaxPerConnection)
		need := (n + per - 1) / per
		if conns+need > MaxConnections {
			before := ""
			if conns > 0 {
				before = fmt.Sprintf(", %d with the groups before it", conns+need)
			}
			return d.errf(g.Line, "group %q needs %d connections (%d streams, %d per connection)%s: a library opens at most %d over all groups",
				g.Name, need, n, per, before, MaxConnections)
		}
		conns += need
	}
	return nil
}

// countTop is the number of streams of templates over the top n symbols.
func countTop(templates []string, n int) int {
	c := 0
	for _, t := range templates {
		if strings.Contains(t, SymbolPlaceholder) {
			c += n
		} else {
			c++
		}
	}
	return c
}

// countStreams counts the distinct names of templates crossed with syms, as
// Expand makes them, but stops at limit.
func countStreams(templates, syms []string, limit int) int {
	seen := map[string]bool{}
	for _, t := range templates {
		if !strings.Contains(t, SymbolPlaceholder) {
			seen[t] = true
		} else {
			for _, s := range syms {
				seen[strings.ReplaceAll(t, SymbolPlaceholder, s)] = true
				if len(seen) >= limit {
					return len(seen)
				}
			}
		}
		if len(seen) >= limit {
			return len(seen)
		}
	}
	return len(seen)
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

// suggest returns `; did you mean "x"?` for the closest key, or "".
func suggest(key string, keys []string) string {
	if best := spelling.Nearest(key, keys); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}
