package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// TagHeader is the handshake header that names a connection for a local
// target, so the server's counts can be matched to a worker's subscriptions.
const TagHeader = "X-Soak-Conn"

// Tag names one connection: the library, the slot it serves and the dial
// attempt within that slot (1 for the first).
type Tag struct {
	Lib     string
	Slot    int
	Attempt int
}

// String formats t as the header value "lib/slot/attempt".
func (t Tag) String() string {
	return t.Lib + "/" + strconv.Itoa(t.Slot) + "/" + strconv.Itoa(t.Attempt)
}

// ParseTag reads a header value written by Tag.String.
func ParseTag(s string) (Tag, error) {
	lib, rest, ok := strings.Cut(s, "/")
	slot, attempt, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || lib == "" {
		return Tag{}, fmt.Errorf("connection tag %q: want lib/slot/attempt", s)
	}
	sl, err := strconv.Atoi(slot)
	if err != nil || sl < 0 {
		return Tag{}, fmt.Errorf("connection tag %q: bad slot %q", s, slot)
	}
	at, err := strconv.Atoi(attempt)
	if err != nil || at < 0 {
		return Tag{}, fmt.Errorf("connection tag %q: bad attempt %q", s, attempt)
	}
	return Tag{Lib: lib, Slot: sl, Attempt: at}, nil
}

// LibOf returns the library part of a tag value, "" for an empty one. It
// does not validate the rest: the server uses it on whatever a client sent.
func LibOf(tag string) string {
	lib, _, _ := strings.Cut(tag, "/")
	return lib
}
