package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"runtime"
	"time"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/runner/worker"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// dialTimeout bounds a client's handshake.
const dialTimeout = 10 * time.Second

// counter is the bare path's handler: it only counts.
type counter struct{ msgs, bytes int64 }

func (c *counter) OnMessage(_ bool, p []byte) { c.msgs++; c.bytes += int64(len(p)) }
func (c *counter) OnPing([]byte)              {}
func (c *counter) OnPong([]byte)              {}

// mark is the process's counters at one instant.
type mark struct {
	at             time.Time
	user, sys, rss int64
	syscr, rchar   int64
	mallocs        uint64
}

func takeMark() (mark, error) {
	var m mark
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms) // stops the world: before the clock is read
	m.mallocs = ms.Mallocs
	var err error
	if m.syscr, m.rchar, err = procIO(); err != nil {
		return m, err
	}
	user, sys, rss := sampler.Rusage() // µs resolution, as getrusage gives it
	m.user, m.sys, m.rss = int64(math.Round(user*1e9)), int64(math.Round(sys*1e9)), rss/1024
	m.at = time.Now()
	return m, nil
}

// RunClient is a client process: it dials spec.URL, reads until the close
// 1000 the way spec.Path asks, and returns what it measured.
func RunClient(ctx context.Context, spec ClientSpec) Result {
	res := Result{Lib: spec.Lib, Path: spec.Path, Runtime: spec.Runtime.Apply()}
	if err := runClient(ctx, spec, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

func runClient(ctx context.Context, spec ClientSpec, res *Result) error {
	d := &transport.Dialer{RcvBuf: spec.RcvBuf, Timeout: dialTimeout}
	if spec.LocalAddr != "" {
		ip, err := netip.ParseAddr(spec.LocalAddr)
		if err != nil {
			return fmt.Errorf("local address: %w", err)
		}
		d.LocalAddr = &net.TCPAddr{IP: ip.AsSlice()}
	}
	var nc net.Conn
	netDial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		nc = c
		return c, err
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if spec.Lib == RawLib {
		return runRaw(dctx, spec, res, netDial, &nc)
	}
	tr, err := transport.Lookup(spec.Lib)
	if err != nil {
		return err
	}
	res.Version = tr.Version()
	var h transport.Handler
	var rp *worker.ReadPath
	bare := &counter{}
	var dec *decoder
	switch spec.Path {
	case PathBare:
		h = bare
	case PathFull, PathDecode:
		if rp, err = worker.NewReadPath(tr, spec.Streams); err != nil {
			return err
		}
		h = rp.Handler()
		if spec.Path == PathDecode {
			dec = &decoder{next: h}
			h = dec
		}
	default:
		return fmt.Errorf("unknown path %q", spec.Path)
	}
	enc, err := clientEncoding(spec)
	if err != nil {
		return err
	}
	conn, err := tr.Dial(dctx, transport.DialConfig{URL: spec.URL, NetDial: netDial, HandshakeTimeout: dialTimeout,
		Subprotocols: codec.Subprotocols(enc), Compression: spec.Compression})
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.Abort()
	if got, want := transport.SubprotocolOf(conn), subprotocolAnswer(enc); got != want {
		return fmt.Errorf("dial: subprotocol %q negotiated, want %q", got, want)
	}
	res.Extensions = conn.Extensions()
	wireN := transport.WireBytesOf(nc)
	if rp != nil {
		rp.SetClock(transport.ReadClockOf(nc))
	}
	if nc != nil {
		res.RcvBuf, _ = transport.ReceiveBuffer(nc)
	}
	m0, err := takeMark()
	if err != nil {
		return err
	}
	runErr := conn.Run(h)
	m1, err := takeMark()
	if err != nil {
		return err
	}
	res.record(m0, m1)
	if wireN != nil {
		res.WireBytes = wireN.Load()
	}
	switch {
	case rp != nil:
		c := rp.Counts()
		res.Messages, res.PayloadBytes, res.Lost, res.Dup = c.Messages, c.Bytes, c.Lost, c.Dup
	default:
		res.Messages, res.PayloadBytes = bare.msgs, bare.bytes
	}
	if dec != nil && dec.errs > 0 {
		return fmt.Errorf("decode: %d messages did not decode", dec.errs)
	}
	var ce *transport.CloseError
	if !errors.As(runErr, &ce) || ce.Code != 1000 {
		return fmt.Errorf("read: %v, want close 1000", runErr)
	}
	return nil
}

// runRaw reads with rawws: every message counted (PathRaw), or the known
// byte count skipped (PathCeiling).
func runRaw(ctx context.Context, spec ClientSpec, res *Result, netDial func(context.Context, string, string) (net.Conn, error), nc *net.Conn) error {
	enc, err := clientEncoding(spec)
	if err != nil {
		return err
	}
	c, err := rawws.Dial(ctx, spec.URL, rawws.Options{NetDial: netDial, Subprotocols: codec.Subprotocols(enc)})
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	if *nc != nil {
		res.RcvBuf, _ = transport.ReceiveBuffer(*nc)
	}
	m0, err := takeMark()
	if err != nil {
		return err
	}
	var counts rawws.Counts
	var runErr error
	switch spec.Path {
	case PathRaw:
		counts, runErr = c.Drain()
	case PathCeiling:
		counts, runErr = c.Skip(spec.SkipBytes)
	default:
		return fmt.Errorf("unknown path %q for %s", spec.Path, RawLib)
	}
	m1, err := takeMark()
	if err != nil {
		return err
	}
	res.record(m0, m1)
	res.Messages, res.PayloadBytes = counts.Messages, counts.PayloadBytes
	if spec.Path == PathCeiling {
		res.PayloadBytes = counts.WireBytes // the parent checks it against the wire bytes sent
	}
	if runErr != nil {
		return fmt.Errorf("read: %w", runErr)
	}
	if spec.Path == PathRaw && counts.CloseCode != 1000 {
		return fmt.Errorf("read: close %d, want 1000", counts.CloseCode)
	}
	return nil
}

// clientEncoding is the spec's encoding (json when not given).
func clientEncoding(spec ClientSpec) (codec.Encoding, error) {
	if spec.Encoding == "" {
		return codec.JSON, nil
	}
	return codec.Parse(spec.Encoding)
}

// subprotocolAnswer is what the firehose answers a client asking for enc.
func subprotocolAnswer(enc codec.Encoding) string {
	if enc == codec.JSON {
		return "" // json asks for nothing
	}
	return enc.Subprotocol()
}

func (r *Result) record(m0, m1 mark) {
	r.WallNS = int64(m1.at.Sub(m0.at))
	r.UserNS, r.SysNS = m1.user-m0.user, m1.sys-m0.sys
	r.Syscr, r.Rchar = m1.syscr-m0.syscr, m1.rchar-m0.rchar
	r.MaxRSSKiB = m1.rss
	r.Mallocs = m1.mallocs - m0.mallocs
}
