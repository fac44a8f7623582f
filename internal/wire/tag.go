package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// TagHeader is the handshake header that names a connection for a local
// target, so the server's counts can be matched to a worker's subscriptions.
const TagHeader = "X-Soak-Conn"

// Tag names one connection: the column (a library, or a variant of one:
// Column.Name), the slot it serves and the dial attempt within that slot (1
// for the first).
type Tag struct {
	Column  string
	Slot    int
	Attempt int
}

// String formats t as the header value "column/slot/attempt".
func (t Tag) String() string {
	return t.Column + "/" + strconv.Itoa(t.Slot) + "/" + strconv.Itoa(t.Attempt)
}

// ParseTag reads a header value written by Tag.String.
func ParseTag(s string) (Tag, error) {
	col, rest, ok := strings.Cut(s, "/")
	slot, attempt, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || col == "" {
		return Tag{}, fmt.Errorf("connection tag %q: want column/slot/attempt", s)
	}
	sl, err := strconv.Atoi(slot)
	if err != nil || sl < 0 {
		return Tag{}, fmt.Errorf("connection tag %q: bad slot %q", s, slot)
	}
	at, err := strconv.Atoi(attempt)
	if err != nil || at < 0 {
		return Tag{}, fmt.Errorf("connection tag %q: bad attempt %q", s, attempt)
	}
	return Tag{Column: col, Slot: sl, Attempt: at}, nil
}

// ColumnOf returns the column part of a tag value, "" for an empty one. It
// does not validate the rest: the server uses it on whatever a client sent.
func ColumnOf(tag string) string {
	col, _, _ := strings.Cut(tag, "/")
	return col
}
