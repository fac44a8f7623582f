package chat

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A server that closes a connection whose peer is still sending (a message
// over the read limit, text that is not UTF-8, a client dropped as too slow)
// must not close it outright: closing a socket with unread input makes the
// kernel answer with a reset, and a client still writing then fails on the
// reset, before it has read the close frame the server sent (seen: a 20 MB
// message closed with 1006 instead of 1009). So every connection the servers
// accept closes lingering: what was written goes out, then the FIN, and what
// the peer still sends is read and dropped until it closes too or
// lingerTime has passed; only then is the socket closed.

// lingerTime bounds a closed connection's draining.
const lingerTime = 2 * time.Second

// lingerWake bounds the wait for a read of the library's under way when the
// connection is closed (its deadline set in the past wakes it at once).
const lingerWake = time.Second

// lingerListener hands out lingering connections and ends their draining
// when the server closes.
type lingerListener struct {
	net.Listener
	mu       sync.Mutex
	stopped  bool
	draining map[*lingerConn]struct{}
	wg       sync.WaitGroup
}

func newLingerListener(ln net.Listener) *lingerListener {
	return &lingerListener{Listener: ln, draining: map[*lingerConn]struct{}{}}
}

func (l *lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	return &lingerConn{Conn: tc, tcp: tc, l: l}, nil
}

// stop cuts every draining short and waits for them; connections closed
// from now on close at once.
func (l *lingerListener) stop() {
	l.mu.Lock()
	l.stopped = true
	for c := range l.draining {
		_ = c.SetReadDeadline(time.Now())
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// lingerConn is a server's connection that closes lingering. Once closed,
// the library's reads and writes fail with net.ErrClosed, as on a closed
// socket: what is drained never reaches the library.
type lingerConn struct {
	net.Conn // the TCP connection, its other methods (ReadFrom) hidden: every write goes through Write
	tcp      *net.TCPConn
	l        *lingerListener
	closed   atomic.Bool
	reading  atomic.Int32 // reads of the library's under way
}

func (c *lingerConn) Read(p []byte) (int, error) {
	c.reading.Add(1)
	defer c.reading.Add(-1)
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(p)
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return n, err
}

func (c *lingerConn) Write(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return c.Conn.Write(p)
}

// Close sends the FIN after what was written and drains the peer's input
// in the background, then closes the socket.
func (c *lingerConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	c.l.mu.Lock()
	if c.l.stopped {
		c.l.mu.Unlock()
		return c.Conn.Close()
	}
	c.l.draining[c] = struct{}{}
	c.l.wg.Add(1)
	c.l.mu.Unlock()
	_ = c.tcp.CloseWrite()
	_ = c.SetReadDeadline(time.Now()) // a read of the library's returns now
	go c.drain()
	return nil
}

// drain reads and drops the peer's input until it closes, lingerTime has
// passed or the server stops, then closes the socket.
func (c *lingerConn) drain() {
	defer c.l.wg.Done()
	// The library's read, woken by the past deadline, must be out before
	// the deadline is set again (else it would sleep on until the end).
	for wait := time.Now().Add(lingerWake); c.reading.Load() > 0 && time.Now().Before(wait); {
		time.Sleep(100 * time.Microsecond)
	}
	c.l.mu.Lock()
	end := time.Now().Add(lingerTime)
	if c.l.stopped {
		end = time.Now()
	}
	_ = c.SetReadDeadline(end)
	c.l.mu.Unlock()
	var buf [16 << 10]byte
	for {
		if _, err := c.Conn.Read(buf[:]); err != nil {
			break
		}
	}
	c.l.mu.Lock()
	delete(c.l.draining, c)
	c.l.mu.Unlock()
	_ = c.Conn.Close()
}
