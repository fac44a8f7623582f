package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults applied when a DialConfig field is zero.
const (
	defaultHandshakeTimeout = 10 * time.Second
	defaultReadBufferSize   = 64 << 10
	// closeTimeout bounds the close frame written by Conn.Close.
	closeTimeout = time.Second
	// maxHandshakeBody is how much of a rejected upgrade's body HandshakeError keeps.
	maxHandshakeBody = 1 << 10
	// initialMessageBuffer is the starting capacity of an adapter's reused message buffer.
	initialMessageBuffer = 4 << 10
)

// Close codes used by the adapters.
const (
	closeNoStatus       = 1005
	closeAbnormal       = 1006
	closeMessageTooBig  = 1009
	maxControlPayload   = 125
	maxCloseReasonBytes = maxControlPayload - 2
)

// writeTimeout bounds every data or control write an adapter makes itself
// (nanoseconds; a variable only so that a test can shorten it).
var writeTimeout atomic.Int64

func init() { writeTimeout.Store(int64(5 * time.Second)) }

// writeDeadline is the deadline of a write starting now.
func writeDeadline() time.Time { return time.Now().Add(time.Duration(writeTimeout.Load())) }

// errRunTwice is returned by a second call of Conn.Run.
var errRunTwice = errors.New("run: read loop already started")

// dialSetup fills the defaults of cfg and returns the context bounding the whole dial
// (TCP connect, TLS, upgrade) by cfg.HandshakeTimeout.
func dialSetup(ctx context.Context, cfg *DialConfig) (context.Context, context.CancelFunc) {
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = defaultHandshakeTimeout
	}
	if cfg.ReadBufferSize <= 0 {
		cfg.ReadBufferSize = defaultReadBufferSize
	}
	if cfg.NetDial == nil {
		cfg.NetDial = (&Dialer{}).DialContext
	}
	return context.WithTimeout(ctx, cfg.HandshakeTimeout)
}

// handshakeError builds a *HandshakeError from a non-101 response, keeping at most
// maxHandshakeBody bytes of its body. resp.Body may be nil.
func handshakeError(resp *http.Response) *HandshakeError {
	he := &HandshakeError{Status: resp.StatusCode, Header: resp.Header}
	if resp.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxHandshakeBody))
		he.Body = body
	}
	return he
}

// closeState makes Close and Abort idempotent and lets Run tell a local close from a
// failure: once closing is set, Run reports net.ErrClosed whatever the library said.
type closeState struct {
	closing atomic.Bool
	once    sync.Once
	err     error
}

// begin marks the connection as closing; it reports false when it already was.
func (s *closeState) begin() bool { return s.closing.CompareAndSwap(false, true) }

// closed reports whether Close or Abort was called.
func (s *closeState) closed() bool { return s.closing.Load() }

// shut runs fn once (the TCP close) and returns its error on the first call, nil after.
func (s *closeState) shut(fn func() error) error {
	var first bool
	s.once.Do(func() {
		first = true
		s.err = fn()
	})
	if !first {
		return nil
	}
	if errors.Is(s.err, net.ErrClosed) {
		return nil
	}
	return s.err
}

// runGuard makes Run return an error when called twice.
type runGuard struct{ started atomic.Bool }

func (g *runGuard) enter() bool { return g.started.CompareAndSwap(false, true) }

// isEOF reports whether err is the TCP connection ending without a close frame.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// closeReason trims a close reason to what fits in a control frame.
func closeReason(reason string) string {
	if len(reason) > maxCloseReasonBytes {
		return reason[:maxCloseReasonBytes]
	}
	return reason
}

// readLimit maps DialConfig.ReadLimit (0 = unlimited) to a positive limit for libraries
// that have no "unlimited" setting.
func readLimit(n int64, unlimited int64) int64 {
	if n <= 0 {
		return unlimited
	}
	return n
}

var (
	buildDepsOnce sync.Once
	buildDeps     map[string]string
)

// moduleVersion returns the version of module path linked into this binary, or "unknown".
func moduleVersion(path string) string {
	buildDepsOnce.Do(func() {
		buildDeps = map[string]string{}
		info, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		for _, d := range info.Deps {
			v := d.Version
			if d.Replace != nil && d.Replace.Version != "" {
				v = d.Replace.Version
			}
			buildDeps[d.Path] = v
		}
	})
	if v := buildDeps[path]; v != "" {
		return v
	}
	return "unknown"
}

// readMessage reads r to EOF into *buf, growing it as needed (the grown buffer is kept
// for the next message), and returns the message length. With limit > 0 it stops
// at limit+1 bytes and returns errInflatedLimit: the adapters bound a compressed
// message by its inflated size (a library's own limit may count wire bytes).
func readMessage(r io.Reader, buf *[]byte, limit int64) (int, error) {
	b := (*buf)[:cap(*buf)]
	n := 0
	for {
		if n == len(b) {
			if limit > 0 && int64(n) > limit {
				return n, errInflatedLimit
			}
			grow := max(len(b), initialMessageBuffer)
			if limit > 0 {
				grow = int(min(int64(grow), limit+1-int64(n)))
			}
			b = slices.Grow(b, grow)
			b = b[:cap(b)]
			*buf = b
		}
		m, err := r.Read(b[n:])
		n += m
		if err == io.EOF {
			if limit > 0 && int64(n) > limit {
				return n, errInflatedLimit
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// dialFunc is the type of DialConfig.NetDial.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// cancelGuard lets ctx cancellation interrupt a library's handshake I/O when the library
// only honours ctx deadlines: it poisons the deadline of every conn the library dialed.
type cancelGuard struct {
	mu    sync.Mutex
	stops []func() bool
}

// wrap returns dial with the guard armed on each new connection.
func (g *cancelGuard) wrap(ctx context.Context, dial dialFunc) dialFunc {
	return func(dctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
		g.mu.Lock()
		g.stops = append(g.stops, stop)
		g.mu.Unlock()
		return conn, nil
	}
}

// release disarms the guard; it reports false when ctx ended first (the deadline of
// the connection may then be poisoned, so a dial that succeeded must be discarded).
func (g *cancelGuard) release() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	ok := true
	for _, stop := range g.stops {
		if !stop() {
			ok = false
		}
	}
	return ok
}
