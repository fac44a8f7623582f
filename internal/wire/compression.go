package wire

import (
	"fmt"
	"strings"
)

// Compression is the permessage-deflate (RFC 7692) setting of a run or a
// bench, the same for every library: what each client asks for and what the
// replay server and the firehose allow.
type Compression uint8

const (
	// CompressionOff asks for no extension; a server with it declines every offer.
	CompressionOff Compression = iota
	// CompressionOn asks for permessage-deflate with context takeover (the
	// server keeps its LZ77 window across messages); a library that can only
	// do no-context-takeover asks for that instead.
	CompressionOn
	// CompressionNoContextTakeover asks for permessage-deflate with
	// server_no_context_takeover and client_no_context_takeover: every
	// message is compressed on its own.
	CompressionNoContextTakeover
)

// compressionNames are the values a profile or a flag takes, by Compression.
var compressionNames = [...]string{"off", "on", "no_context_takeover"}

// CompressionNames lists the allowed values, for error messages and help.
func CompressionNames() []string { return compressionNames[:] }

// ParseCompression reads "off", "on" or "no_context_takeover".
func ParseCompression(s string) (Compression, error) {
	for i, n := range compressionNames {
		if s == n {
			return Compression(i), nil
		}
	}
	return 0, fmt.Errorf("unknown compression %q (allowed: %s)", s, strings.Join(compressionNames[:], ", "))
}

func (c Compression) String() string {
	if int(c) < len(compressionNames) {
		return compressionNames[c]
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// Enabled reports whether the extension is asked for at all.
func (c Compression) Enabled() bool { return c != CompressionOff }

// MarshalText writes the name, so plans and configs carry "on", not 1.
func (c Compression) MarshalText() ([]byte, error) {
	if int(c) >= len(compressionNames) {
		return nil, fmt.Errorf("marshal: %s", c)
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a name (ParseCompression).
func (c *Compression) UnmarshalText(b []byte) error {
	v, err := ParseCompression(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Deflate settings of a server (the replay server and the firehose).
const (
	DefaultDeflateWindowBits = 15 // server_max_window_bits: a 32 KiB window
	MinDeflateWindowBits     = 9  // 8 is refused: zlib turns it into 9
	MaxDeflateWindowBits     = 15
	DefaultDeflateLevel      = 1 // flate.BestSpeed: cheap, most of the gain on JSON
	MinDeflateLevel          = 1
	MaxDeflateLevel          = 9
)

// Deflate is how a server compresses: whether it accepts the extension, its
// LZ77 window and its compression level. Zero fields take the defaults.
type Deflate struct {
	Compression Compression `json:"compression"`
	WindowBits  int         `json:"window_bits,omitempty"` // server_max_window_bits it uses (9..15); a client may ask for fewer
	Level       int         `json:"level,omitempty"`       // 1..9 (flate levels); a window under 15 bits ignores it
}

// WithDefaults fills the zero fields.
func (d Deflate) WithDefaults() Deflate {
	if d.WindowBits == 0 {
		d.WindowBits = DefaultDeflateWindowBits
	}
	if d.Level == 0 {
		d.Level = DefaultDeflateLevel
	}
	return d
}

// Validate checks the ranges.
func (d Deflate) Validate() error {
	d = d.WithDefaults()
	if int(d.Compression) >= len(compressionNames) {
		return fmt.Errorf("deflate: %s", d.Compression)
	}
	if d.WindowBits < MinDeflateWindowBits || d.WindowBits > MaxDeflateWindowBits {
		return fmt.Errorf("deflate window bits %d: want %d..%d", d.WindowBits, MinDeflateWindowBits, MaxDeflateWindowBits)
	}
	if d.Level < MinDeflateLevel || d.Level > MaxDeflateLevel {
		return fmt.Errorf("deflate level %d: want %d..%d", d.Level, MinDeflateLevel, MaxDeflateLevel)
	}
	return nil
}
