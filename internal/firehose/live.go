package firehose

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/gobwas/ws"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/deflate"
	"github.com/wssoak/wssoak/internal/sampler"
)

// events returns the messages of the form as values (Config.Live), decoded
// once from the JSON batch.
func (s *Server) events(combined bool) ([]codec.Event, error) {
	i := 0
	if combined {
		i = 1
	}
	e := &s.liveEvs[i]
	e.once.Do(func() {
		b, err := s.batch(combined, codec.JSON)
		if err != nil {
			e.err = err
			return
		}
		e.evs, e.err = b.Events()
	})
	return e.evs, e.err
}

// Events decodes the batch's messages (JSON) as values, in order.
func (b *Batch) Events() ([]codec.Event, error) {
	out := make([]codec.Event, 0, b.Messages)
	err := b.payloads(func(i int, p []byte) error {
		ev, err := codec.DecodeEvent(p)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		out = append(out, ev)
		return nil
	})
	return out, err
}

// payloads calls fn with each message's payload (uncompressed batches).
func (b *Batch) payloads(fn func(i int, p []byte) error) error {
	from := int64(0)
	for i, e := range b.ends {
		h, err := ws.ReadHeader(bytes.NewReader(b.wire[from:e.wire]))
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		if err := fn(i, b.wire[e.wire-h.Length:e.wire]); err != nil {
			return err
		}
		from = e.wire
	}
	return nil
}

// sendLive encodes each message in enc as it goes (and compresses it with
// comp, the connection's own, when deflate was negotiated), frames it, and
// writes the frames in writes of about WriteSize, then the close frame 1000.
// Only the building of the frames is timed (EncodeNS), not the writes.
func (s *Server) sendLive(conn net.Conn, combined bool, enc codec.Encoding, comp *deflate.Compressor, cs *ConnStats) error {
	evs, err := s.events(combined)
	if err != nil {
		return err
	}
	cpu := startCPU()
	defer cpu.end(s, cs)
	op := ws.OpText
	if enc.Binary() {
		op = ws.OpBinary
	}
	first := byte(0x80) | byte(op) // FIN, the opcode
	if comp != nil {
		first |= deflate.RSV1 << 4
	}
	out := make([]byte, 0, s.cfg.WriteSize+64<<10)
	var payload []byte
	var msgs, chunkMsgs int
	var payloadBytes, chunkPayload, wireBytes, writes int64
	var encodeNS time.Duration
	for i := 0; i < len(evs) && err == nil; {
		t0 := time.Now()
		for ; i < len(evs) && len(out) < s.cfg.WriteSize; i++ {
			if payload, err = codec.AppendEvent(payload[:0], evs[i], enc); err != nil {
				return err
			}
			p := payload
			if comp != nil {
				if p, err = comp.Compress(payload); err != nil {
					return err
				}
			}
			out = append(appendHeader(out, first, len(p)), p...)
			chunkMsgs++
			chunkPayload += int64(len(payload))
		}
		encodeNS += time.Since(t0)
		var n int
		n, err = conn.Write(out)
		writes++
		wireBytes += int64(n)
		if err == nil {
			msgs, payloadBytes = msgs+chunkMsgs, payloadBytes+chunkPayload
		}
		out, chunkMsgs, chunkPayload = out[:0], 0, 0
	}
	s.mu.Lock()
	cs.Messages, cs.PayloadBytes, cs.WireBytes, cs.Writes, cs.End, cs.EncodeNS = msgs, payloadBytes, wireBytes, writes, time.Now(), int64(encodeNS)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return s.sendClose(conn, cs)
}

// appendHeader appends a server frame's header (unmasked): its first byte
// and the payload length n.
func appendHeader(dst []byte, first byte, n int) []byte {
	switch {
	case n < 126:
		return append(dst, first, byte(n))
	case n < 1<<16:
		return binary.BigEndian.AppendUint16(append(dst, first, 126), uint16(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, first, 127), uint64(n))
}

// cpuMark is the process's CPU at the start of a connection's sending.
type cpuMark struct{ user, sys float64 }

func startCPU() cpuMark {
	u, s, _ := sampler.Rusage()
	return cpuMark{u, s}
}

// end records the CPU since m in cs.
func (m cpuMark) end(s *Server, cs *ConnStats) {
	u, sy, _ := sampler.Rusage()
	s.mu.Lock()
	cs.UserNS, cs.SysNS = int64(math.Round((u-m.user)*1e9)), int64(math.Round((sy-m.sys)*1e9))
	s.mu.Unlock()
}
