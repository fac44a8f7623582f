package profile

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written with a unit in YAML: "500ms", "90s", "2m", "24h".
// A bare number is rejected (is 30 seconds or minutes?), except 0.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalYAML writes d in the form Parse reads.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

var (
	errDurationUnit  = errors.New("want a number with a unit such as 90s, 2m, 24h")
	errDurationRange = fmt.Errorf("out of range: a duration is at most %dh (about 292 years)", math.MaxInt64/time.Hour)
)

// durationSyntax is what time.ParseDuration reads, however large.
var durationSyntax = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

// parseDuration reads a duration with a unit; "0" is the only unitless value.
func parseDuration(s string) (Duration, error) {
	if s == "0" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil && durationSyntax.MatchString(s):
		return 0, errDurationRange
	case err != nil:
		return 0, errDurationUnit
	}
	return Duration(v), nil
}

// ByteSize is a size in bytes, written as a plain integer or with a unit:
// B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024).
type ByteSize int64

var sizeUnits = []struct {
	name string
	mult int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

func (b ByteSize) String() string {
	for _, u := range sizeUnits {
		if b != 0 && u.mult > 1 && int64(b)%u.mult == 0 {
			return strconv.FormatInt(int64(b)/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// MarshalYAML writes b in the form Parse reads.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

var (
	errSizeUnit  = errors.New("want bytes or a number with a unit such as 512KiB, 16MiB, 1MB")
	errSizeRange = fmt.Errorf("too large: a size is at most %d bytes (8 EiB)", math.MaxInt64)
)

// parseByteSize reads "1048576", "16MiB", "512 KB", "-1KiB" (negative sizes are
// returned as such, for the caller to reject with its own message).
func parseByteSize(s string) (ByteSize, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.name); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if errors.Is(err, strconv.ErrRange) && num[0] != '+' || err == nil && (n > math.MaxInt64/mult || n < math.MinInt64/mult) {
		return 0, errSizeRange
	}
	if err != nil || num == "" || num[0] == '+' {
		return 0, errSizeUnit
	}
	return ByteSize(n * mult), nil
}
