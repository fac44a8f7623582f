package transport

import (
	"net"
	"sync/atomic"
	"time"
)

// ReadClock is the time at which a connection's latest read returned data,
// read once per read instead of once per message: messages that arrived in one
// read arrived together. The Dialer's connections keep one, where the library
// reads the socket (under TLS, the adapter's or a proxy's, whichever is on top).
//
// For a message handed to Handler.OnMessage the clock holds the end of the read
// that delivered the message's last byte, or of a later read: never earlier.
// It is that read exactly when the library reads no further before handing the
// message over, which the five adapters' libraries do not (they read a frame's
// payload, then return it); TestReadClockStamps checks it for each of them.
type ReadClock struct {
	wall   atomic.Int64 // Unix ns
	mono   atomic.Int64 // ns since clockBase on this process's monotonic clock
	before atomic.Pointer[func()]
}

// clockBase is the origin of ReadClock's monotonic readings.
var clockBase = time.Now()

// Stamp sets the clock to t, which must carry a monotonic reading (time.Now).
func (c *ReadClock) Stamp(t time.Time) {
	c.wall.Store(t.UnixNano())
	c.mono.Store(int64(t.Sub(clockBase)))
}

// Load returns the latest stamp as Unix ns (wall clock) and as ns on the
// monotonic clock since origin (see MonoSince); both are 0 before the first
// stamp. The two are one reading when Load runs in the goroutine that reads
// the connection, as Handler calls do.
func (c *ReadClock) Load() (wall int64, mono int64) {
	return c.wall.Load(), c.mono.Load()
}

// BeforeRead sets f to run before each read of the connection, on the
// goroutine that reads, or clears it (nil). A library reads the socket when
// it has handed over every message whose bytes it holds, so f runs at the end
// of each batch of messages: the handler publishes what it counted in the
// batch there, with a few stores per read instead of per message. It must be
// cleared before a goroutine other than the read loop may read the connection
// (a library's Close can: coder waits for the close handshake itself).
func (c *ReadClock) BeforeRead(f *func()) { c.before.Store(f) }

// MonoOrigin returns the offset to subtract from Load's mono to get ns since
// t on the monotonic clock; t must carry a monotonic reading.
func MonoOrigin(t time.Time) int64 { return int64(t.Sub(clockBase)) }

// ReadClockOf returns the read clock of a connection from Dialer.DialContext,
// or nil for any other net.Conn.
func ReadClockOf(conn net.Conn) *ReadClock {
	if sc, ok := conn.(*stampConn); ok {
		return &sc.clock
	}
	return nil
}

// stampConn is a net.Conn whose reads stamp its ReadClock and count its wire bytes.
type stampConn struct {
	net.Conn
	clock ReadClock
	wire  wireCount
	above atomic.Bool // the wire bytes are counted above TLS (countAbove)
}

func (c *stampConn) Read(p []byte) (int, error) {
	if f := c.clock.before.Load(); f != nil {
		(*f)()
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.clock.Stamp(time.Now())
		if !c.above.Load() {
			c.wire.add(p[:n])
		}
	}
	return n, err
}

// NetConn returns the wrapped connection (ReceiveBuffer looks through it).
func (c *stampConn) NetConn() net.Conn { return c.Conn }
