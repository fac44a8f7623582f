package worker

import (
	"compress/flate"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		dialed bool
		why    *abortReason
		code   int
		cause  string
	}{
		{"server close 1001", &transport.CloseError{Code: 1001, Reason: "going away"}, true, nil, 1001, causeServerClose},
		{"server close 1008 wrapped", fmt.Errorf("read: %w", &transport.CloseError{Code: 1008}), true, nil, 1008, causeServerClose},
		{"no close frame", &transport.CloseError{Code: 1006}, true, nil, 1006, causeAbnormal},
		{"eof", io.ErrUnexpectedEOF, true, nil, 1006, causeAbnormal},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true, nil, 1006, causeAbnormal},
		{"read limit", fmt.Errorf("gorilla: %w", transport.ErrReadLimit), true, nil, 1009, causeReadLimit},
		{"corrupt deflate", fmt.Errorf("gorilla read: %w", flate.CorruptInputError(3)), true, nil, 1007, causeBadDeflate},
		{"pong timeout wins over the read error", net.ErrClosed, true, &abortReason{causePongTimeout, "x"}, 1006, causePongTimeout},
		{"stall abort", net.ErrClosed, true, &abortReason{causeStallAbort, "x"}, 1006, causeStallAbort},
		{"local close", fmt.Errorf("x: %w", net.ErrClosed), true, nil, 1000, causeLocal},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false, nil, 0, causeDialError},
		{"timeout", fmt.Errorf("dial: %w", errors.New("i/o timeout")), false, nil, 0, causeDialError},
		{"handshake 429", &transport.HandshakeError{Status: 429}, false, nil, 429, causeHandshake},
		{"handshake 404", fmt.Errorf("x: %w", &transport.HandshakeError{Status: 404}), false, nil, 404, causeHandshake},
		{"tls unknown authority", fmt.Errorf("x: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), false, nil, 1015, causeTLS},
		{"tls record header", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, false, nil, 1015, causeTLS},
		{"tls alert text", errors.New("remote error: tls: handshake failure"), false, nil, 1015, causeTLS},
	}
	for _, tt := range tests {
		code, cause, detail := classify(tt.err, tt.dialed, tt.why)
		if code != tt.code || cause != tt.cause || detail == "" {
			t.Errorf("%s: got %d %s %q, want %d %s", tt.name, code, cause, detail, tt.code, tt.cause)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	he := func(status int, ra string) error {
		h := http.Header{}
		if ra != "" {
			h.Set("Retry-After", ra)
		}
		return fmt.Errorf("dial: %w", &transport.HandshakeError{Status: status, Header: h})
	}
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		err     error
		lo, hi  time.Duration
		comment string
	}{
		{he(429, "7"), 7 * time.Second, 7 * time.Second, "seconds"},
		{he(429, date), 85 * time.Second, 90 * time.Second, "HTTP date"},
		{he(503, "2"), 2 * time.Second, 2 * time.Second, "503 with Retry-After"},
		{he(418, ""), time.Minute, time.Minute, "418 without Retry-After: long"},
		{he(418, "120"), 2 * time.Minute, 2 * time.Minute, "418 with Retry-After"},
		{he(429, "soon"), 0, 0, "unreadable"},
		{he(404, ""), 0, 0, "404"},
		{errors.New("refused"), 0, 0, "not a handshake"},
	}
	for _, tt := range tests {
		if d := retryAfter(tt.err, time.Minute); d < tt.lo || d > tt.hi {
			t.Errorf("%s: %s, want %s..%s", tt.comment, d, tt.lo, tt.hi)
		}
	}
}

func TestGapSet(t *testing.T) {
	var g gapSet
	g.add(5, 7, false)
	g.add(8, 9, false) // adjacent: coalesced
	g.add(20, 20, false)
	g.remove(6) // split
	g.remove(20)
	g.remove(100) // not in a range, no overflow: nothing
	if want := [][2]int64{{5, 5}, {7, 9}}; !reflect.DeepEqual(first(g.ranges()), want) || g.overflow != 0 {
		t.Fatalf("ranges %v overflow %d, want %v 0", first(g.ranges()), g.overflow, want)
	}
	var f gapSet
	for i := range int64(maxGaps + 3) {
		f.add(10*i, 10*i+1, false)
	}
	if f.n != maxGaps || f.overflow != 6 {
		t.Fatalf("full set: %d ranges, overflow %d; want %d, 6", f.n, f.overflow, maxGaps)
	}
	f.remove(0) // shrink at the edge
	f.add(10*maxGaps+5, 10*maxGaps+5, false)
	if f.overflow != 7 || f.r[0] != [2]int64{1, 1} {
		t.Fatalf("overflow %d first %v", f.overflow, f.r[0])
	}
	f.r[1] = [2]int64{10, 20}
	f.remove(15) // no room to split: the upper part is counted
	if f.r[1] != [2]int64{10, 14} || f.overflow != 12 {
		t.Fatalf("split without room: %v overflow %d", f.r[1], f.overflow)
	}
}

func first[A, B any](a A, _ B) A { return a }

// TestGapSetAcross: ranges lost across a reconnect and while connected are
// kept apart (never merged), a late id says which it was, and the overflow
// keeps the split.
func TestGapSetAcross(t *testing.T) {
	var g gapSet
	if r, across := g.ranges(); r != nil || across != nil {
		t.Fatalf("empty set: %v %v", r, across)
	}
	g.add(1, 3, false)
	g.add(4, 6, true) // adjacent, but lost across a reconnect: its own range
	g.add(7, 7, true) // coalesced with the previous one
	if r, across := g.ranges(); !reflect.DeepEqual(r, [][2]int64{{1, 3}, {4, 7}}) || !reflect.DeepEqual(across, []bool{false, true}) {
		t.Fatalf("ranges %v across %v", r, across)
	}
	if !g.remove(5) || g.remove(2) { // splits keep their kind
		t.Fatal("remove: wrong kind")
	}
	if _, across := g.ranges(); !reflect.DeepEqual(across, []bool{false, false, true, true}) {
		t.Fatalf("after splits: %v", across)
	}
	if r, across := (&gapSet{}).ranges(); r != nil || across != nil {
		t.Fatal("ranges of an empty set")
	}
	var c gapSet
	c.add(1, 1, false)
	if _, across := c.ranges(); across != nil {
		t.Fatalf("no range across: %v, want nil", across)
	}
	var f gapSet
	for i := range int64(maxGaps) {
		f.add(10*i, 10*i, false)
	}
	f.add(1000, 1001, true)
	f.add(2000, 2000, false)
	if f.overflow != 3 || f.overflowAcross != 2 {
		t.Fatalf("overflow %d across %d, want 3, 2", f.overflow, f.overflowAcross)
	}
	// A late id in no range: the connected part of the overflow goes first.
	if f.remove(5000) || !f.remove(5001) || !f.remove(5002) || f.remove(5003) || f.overflow != 0 || f.overflowAcross != 0 {
		t.Fatalf("overflow %d across %d after removals", f.overflow, f.overflowAcross)
	}
}
