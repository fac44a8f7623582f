// Package codec names the wire encodings of market events (JSON text,
// msgpack, packed) and turns a Binance JSON event, as the replay server and
// the firehose generate it, into each of them.
//
//   - json: Binance's JSON, unchanged, sent in text frames.
//   - msgpack: the same event as msgpack maps with Binance's keys, in binary
//     frames. Quoted decimals ("60000.13000000") become float64, integers
//     the smallest msgpack integer, strings and booleans stay what they are.
//   - packed: msgpack as above, except that the price levels of the depth
//     kinds (depthN "bids"/"asks", depth diff "b"/"a") are one msgpack bin
//     each, holding the levels as little-endian float32 pairs (price, size):
//     8 bytes a level instead of two 9-byte doubles. The whole message is
//     still one valid msgpack map, so any msgpack reader can walk it. Kinds
//     without levels come out as msgpack.
//
// The format's version is in the WebSocket subprotocol that chose it
// (soak.msgpack.v1): a later incompatible layout gets a new name, and a
// client that asks for nothing, or for names the server does not know, gets
// JSON, as clients did before encodings existed.
package codec

import (
	"fmt"
	"strings"
)

// Encoding is a wire encoding of market events.
type Encoding uint8

// The encodings. JSON is the zero value and the default.
const (
	JSON Encoding = iota
	Msgpack
	Packed
	numEncodings
)

var names = [numEncodings]string{"json", "msgpack", "packed"}

// String returns the encoding's name as a profile or a flag writes it.
func (e Encoding) String() string {
	if e < numEncodings {
		return names[e]
	}
	return fmt.Sprintf("encoding(%d)", e)
}

// Binary reports whether messages of e travel in binary frames.
func (e Encoding) Binary() bool { return e != JSON }

// Names returns every encoding's name, JSON first.
func Names() []string { return append([]string(nil), names[:]...) }

// Encodings returns every encoding, JSON first.
func Encodings() []Encoding { return []Encoding{JSON, Msgpack, Packed} }

// Parse returns the encoding called s.
func Parse(s string) (Encoding, error) {
	for i, n := range names {
		if n == s {
			return Encoding(i), nil
		}
	}
	return JSON, fmt.Errorf("unknown encoding %q (allowed: %s)", s, strings.Join(names[:], ", "))
}

// Subprotocol returns the Sec-WebSocket-Protocol name that asks for e
// (soak.<name>.v1: the version of the format is in the name).
func (e Encoding) Subprotocol() string { return "soak." + e.String() + ".v1" }

// FromSubprotocol returns the encoding a subprotocol name asks for.
func FromSubprotocol(p string) (Encoding, bool) {
	for i := range numEncodings {
		if e := Encoding(i); e.Subprotocol() == p {
			return e, true
		}
	}
	return JSON, false
}

// Negotiate picks the first of the client's offered subprotocols that names
// an encoding, and returns it with the name to answer. With none known it
// returns JSON and "" (no Sec-WebSocket-Protocol in the response), so an old
// client, or one that asks for something else, gets JSON text.
func Negotiate(offered []string) (Encoding, string) {
	for _, p := range offered {
		if e, ok := FromSubprotocol(strings.TrimSpace(p)); ok {
			return e, p
		}
	}
	return JSON, ""
}

// Subprotocols returns what a client offers to get e: nothing for JSON (so
// the handshake is the one it always was), else e's subprotocol.
func Subprotocols(e Encoding) []string {
	if e == JSON {
		return nil
	}
	return []string{e.Subprotocol()}
}
