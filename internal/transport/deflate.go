package transport

import (
	"compress/flate"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/wssoak/wssoak/internal/wire"
)

// permessage-deflate in the adapters: what each library can ask for, the
// server's answer, and the bound on a message's inflated size.

// extensionsHeader is the response header that carries the negotiated extensions.
const extensionsHeader = "Sec-WebSocket-Extensions"

// errInflatedLimit is readMessage's error for a message over its limit once inflated.
var errInflatedLimit = errors.New("inflated message over the read limit")

// Capability is the compression a library asks for when c is wanted: a
// library that can only do no-context-takeover asks for that for on, and the
// run records what the server answered (Conn.Extensions).
func Capability(lib string, c wire.Compression) wire.Compression {
	switch {
	case c == wire.CompressionOn && (lib == "gorilla" || lib == "fasthttp" || lib == "gobwas" || lib == "nbio"):
		return wire.CompressionNoContextTakeover
	}
	return c
}

// deflateNegotiated reports whether a Sec-WebSocket-Extensions answer accepted permessage-deflate.
func deflateNegotiated(ext string) bool { return strings.Contains(ext, "permessage-deflate") }

// responseExtensions is the answer in a handshake response (nil resp: "").
func responseExtensions(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	return strings.Join(resp.Header.Values(extensionsHeader), ", ")
}

// compressedLimit is a wire-size limit that lets through every message whose
// inflated size is within limit (deflate's stored blocks add 5 bytes per 64 KiB
// to incompressible data): the adapter checks the inflated size itself.
func compressedLimit(limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	return limit + limit/1024 + 1024
}

// closeInvalidPayload is the close code for a message that does not inflate.
const closeInvalidPayload = 1007

// isCorruptDeflate reports whether err is a compressed message that did not inflate.
func isCorruptDeflate(err error) bool {
	var ce flate.CorruptInputError
	return errors.As(err, &ce)
}

// inflater is a flate reader reset for each compressed message (no context
// takeover: each message starts with an empty window).
type inflater struct{ r io.ReadCloser }

// Reset implements wsflate.ReadResetter.
func (f *inflater) Reset(src io.Reader) {
	if f.r == nil {
		f.r = flate.NewReader(src)
		return
	}
	_ = f.r.(flate.Resetter).Reset(src, nil)
}

func (f *inflater) Read(p []byte) (int, error) { return f.r.Read(p) }
