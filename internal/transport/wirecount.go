package transport

import (
	"net"
	"sync/atomic"
)

// WireBytesOf returns the count of WebSocket frame bytes read on a connection
// from Dialer.DialContext (headers and payloads, control frames included, as
// they came off the socket: compressed when the extension is on), or nil for
// any other net.Conn. It counts from the end of the upgrade's HTTP response,
// so the handshake is excluded; a proxy's handshake happens before the Dialer
// returns the connection and is not seen. Under TLS (wss) the library reads
// TLS records through this connection, and those are what it counts.
func WireBytesOf(conn net.Conn) *atomic.Int64 {
	if sc, ok := conn.(*stampConn); ok {
		return &sc.wire.n
	}
	return nil
}

// wireCount counts the bytes read after the first "\r\n\r\n" (the end of the
// upgrade response's header). It is used by the one goroutine reading the
// connection at a time (the handshake, then the read loop), never concurrently.
type wireCount struct {
	n     atomic.Int64
	head  bool // the header's end was seen
	match int  // bytes of "\r\n\r\n" matched at the end of the last read
}

var headerEnd = [4]byte{'\r', '\n', '\r', '\n'}

func (w *wireCount) add(p []byte) {
	if w.head {
		w.n.Add(int64(len(p)))
		return
	}
	for i, b := range p {
		switch {
		case b == headerEnd[w.match]:
			w.match++
		case b == '\r':
			w.match = 1
		default:
			w.match = 0
		}
		if w.match == len(headerEnd) {
			w.head = true
			w.n.Add(int64(len(p) - i - 1))
			return
		}
	}
}
