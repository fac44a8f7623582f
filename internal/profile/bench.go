package profile

import (
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/limit"
	"github.com/wssoak/wssoak/internal/wire"
)

// Bench is a soak bench profile (profiles/bench.yaml documents every key).
// As Profile's, its fields' tags declare the keys and how each is read
// (fields.go); LoadBench and ParseBench read a file, Set lays a command-line
// flag over the key of its name, read the same way.
type Bench struct {
	Path string `yaml:"-"` // source file; "" for the built-in profile

	Scenarios     []string           `yaml:"scenarios" soak:"kind=scenarios"`           // firehose scenarios, one row group each
	Libs          []string           `yaml:"libs" soak:"kind=libraries"`                // libraries, one column each; of wire.Libraries
	Paths         []string           `yaml:"paths" soak:"kind=paths"`                   // client paths, a row each per scenario
	Encodings     []string           `yaml:"encodings" soak:"kind=encodings"`           // codec names, each a row per scenario; nil: json only
	Compression   []wire.Compression `yaml:"compression" soak:"kind=compressions"`      // each scenario runs under each; nil: off only
	Deflate       BenchDeflate       `yaml:"deflate"`                                   // how the firehose compresses
	Runs          int                `yaml:"runs" soak:"min=1,max=1000"`                // counted rounds, after one warm-up round
	N             int                `yaml:"n" soak:"min=0,max=1000000000"`             // messages per run; 0: BytesPerRun of each scenario's payloads
	BytesPerRun   ByteSize           `yaml:"bytes_per_run" soak:"positive,max=1024GiB"` // payload bytes per run when N is 0
	Seed          uint64             `yaml:"seed"`                                      // of the firehose's generated values
	RcvBuf        ByteSize           `yaml:"rcvbuf" soak:"max=1GiB"`                    // SO_RCVBUF of the clients; 0: the kernel's autotuning
	CPUs          CPUs               `yaml:"cpus" soak:"kind=cpus"`                     // pinning; "" in the file: none
	WorkerRuntime Runtime            `yaml:"worker_runtime"`                            // the Go runtime of every client alike

	// Link puts the firehose behind a link, as a soak's link: does the
	// replay server (link.go); a run with a rate carries at most what the
	// link moves in about BenchLinkSeconds. Link.On: the profile has link:.
	Link wire.Link `yaml:"link"`

	names BenchNames // what the lists are checked against, for Set
}

// BenchDeflate is how the firehose compresses (the replay server's
// deflate_window_bits and deflate_level, with the same bounds).
type BenchDeflate struct {
	WindowBits int `yaml:"window_bits" soak:"min=9,max=15"` // server_max_window_bits
	Level      int `yaml:"level" soak:"min=1,max=9"`        // flate level; a window under 15 bits has klauspost's own
}

// Wire is the deflate as the bench's firehose takes it.
func (d BenchDeflate) Wire() wire.Deflate {
	return wire.Deflate{WindowBits: d.WindowBits, Level: d.Level}
}

// BenchNames are the names a bench profile's lists take that live in
// packages the profile must not link (the firehose is a server; the bench's
// client paths sit beside the client libraries): the caller passes them in.
// The libraries are wire.Libraries, as for a soak profile.
type BenchNames struct {
	Scenarios []string // the firehose's scenarios in table order: the default list
	// Scenario judges a name not in Scenarios (a sized scenario such as
	// depth-9000B), its error the one-line reason; nil: none is taken.
	Scenario func(name string) error
	Paths    []string // the bench's client paths in table order: the default list
}

// DefaultBench is the built-in bench profile, the same as profiles/bench.yaml.
func DefaultBench(names BenchNames) *Bench {
	return &Bench{
		Scenarios:   slices.Clone(names.Scenarios),
		Libs:        slices.Clone(wire.Libraries),
		Paths:       slices.Clone(names.Paths),
		Compression: []wire.Compression{wire.CompressionOff},
		Deflate:     BenchDeflate{WindowBits: wire.DefaultDeflateWindowBits, Level: wire.DefaultDeflateLevel},
		Runs:        5,
		BytesPerRun: 24 * 1000 * 1000,
		Seed:        1,
		names:       names,
	}
}

// LoadBench reads and parses a bench profile of at most limit.ProfileFile
// bytes; a read error wraps the file's (fs.ErrNotExist for a missing one).
func LoadBench(path string, names BenchNames) (*Bench, error) {
	data, err := limit.ReadFile("profile", path, limit.ProfileFile)
	if err != nil {
		return nil, err
	}
	return ParseBench(path, data, names)
}

// ParseBench decodes a bench profile over the built-in one and validates it.
// The error, if any, is a *Error: one line naming the file and line of the
// first problem.
func ParseBench(path string, data []byte, names BenchNames) (*Bench, error) {
	d := &decoder{path: path, bench: &names}
	root, err := d.document(data)
	if err != nil {
		return nil, err
	}
	b := DefaultBench(names)
	b.Path = path
	if err := d.mapping(root, "profile", d.fields(reflect.ValueOf(b), "")); err != nil {
		return nil, err
	}
	if b.Link.On = d.set["link"]; b.Link.On {
		if e := d.checkLink(b.Link); e != nil {
			return nil, e
		}
	}
	return b, nil
}

// Set replaces the key with the value of the command-line flag of the same
// name (-libs for libs), read as the file's value is, a list given
// comma-separated. The error is one line naming the flag, "flag -libs:
// library "gorilla" listed twice"; an empty value is one too (leaving the
// flag out keeps the profile's). b is unchanged on an error.
func (b *Bench) Set(key, value string) error {
	d := &decoder{path: "flag -" + key, flag: true, bench: &b.names, lines: map[string]int{}, set: map[string]bool{}}
	v := reflect.ValueOf(b)
	i := slices.IndexFunc(specsOf(v.Elem().Type()), func(s spec) bool { return s.key == key })
	if i < 0 {
		return d.errf(0, "no such key in a bench profile")
	}
	if strings.TrimSpace(value) == "" {
		return d.errf(0, "no value: leave the flag out to keep the profile's %s", key)
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
	n.Tag = n.ShortTag()
	if v.Elem().Field(specsOf(v.Elem().Type())[i].index).Kind() == reflect.Slice {
		n = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for item := range strings.SplitSeq(value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				it := &yaml.Node{Kind: yaml.ScalarNode, Value: item}
				it.Tag = it.ShortTag()
				n.Content = append(n.Content, it)
			}
		}
	}
	return d.fields(v, "")[i].decode(n)
}

// benchList decodes the lists of a bench profile, kinds of fields.go.
func (d *decoder) benchList(kind, name string, fv reflect.Value) func(*yaml.Node) error {
	switch kind {
	case "scenarios":
		return func(v *yaml.Node) error {
			return d.names(v, name, "scenario", d.bench.Scenarios, d.bench.Scenario, false, fv.Addr().Interface().(*[]string))
		}
	case "paths":
		return func(v *yaml.Node) error {
			return d.names(v, name, "path", d.bench.Paths, nil, false, fv.Addr().Interface().(*[]string))
		}
	case "encodings":
		return func(v *yaml.Node) error {
			return d.names(v, name, "encoding", codec.Names(), nil, true, fv.Addr().Interface().(*[]string))
		}
	case "compressions":
		return func(v *yaml.Node) error {
			var ss []string
			if err := d.names(v, name, "compression", wire.CompressionNames(), nil, true, &ss); err != nil {
				return err
			}
			var cs []wire.Compression
			for _, s := range ss {
				c, _ := wire.ParseCompression(s) // one of CompressionNames
				cs = append(cs, c)
			}
			*fv.Addr().Interface().(*[]wire.Compression) = cs
			return nil
		}
	}
	return nil
}

// cpus reads "SERVER:CLIENT" CPU lists; "" in a file is no pinning (a flag's
// empty value is refused before, by Set).
func (d *decoder) cpus(v *yaml.Node, name string, dst *CPUs) error {
	s, err := d.scalar(v, name)
	if err != nil {
		return err
	}
	if s == "" {
		*dst = CPUs{}
		return nil
	}
	c, err := ParseCPUs(s)
	if err != nil {
		return d.errf(deref(v).Line, "%s %v", name, err)
	}
	*dst = c
	return nil
}
