package firehose

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/gobwas/ws"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/deflate"
)

// MaxBytes bounds the pre-encoded frames of one batch: N is refused beyond it.
const MaxBytes = 1 << 30

// Batch is a scenario's N messages, encoded once as WebSocket text frames
// (server frames: unmasked) and written as they are to every connection.
type Batch struct {
	Scenario     string
	Combined     bool // payloads wrapped as {"stream":…,"data":…}
	Encoding     codec.Encoding
	Messages     int   // N
	PayloadBytes int64 // sum of the N payload sizes
	Compressed   bool  // frames compressed with permessage-deflate (Compress)
	wire         []byte
	ends         []end // ends[i]: where message i's frame ends in wire, and the payload bytes up to it
}

type end struct{ wire, payload int64 }

// Wire returns the encoded frames, back to back. The caller must not modify them.
func (b *Batch) Wire() []byte { return b.wire }

// CloseFrameSize is the size of the close frame the server sends after the batch (code 1000, no reason).
const CloseFrameSize = 4

// Sent returns how many whole messages, and their payload bytes, the first w
// bytes of the wire hold.
func (b *Batch) Sent(w int64) (messages int, payload int64) {
	i := sort.Search(len(b.ends), func(i int) bool { return b.ends[i].wire > w })
	if i == 0 {
		return 0, 0
	}
	return i, b.ends[i-1].payload
}

// Prepare encodes n messages of sc, generated from seed, in the combined-stream
// form (wrapped) or the raw one. Event times start at the current time. Every
// stream's sequence ids strictly increase (trade t, aggTrade a, depth U = prev
// u + 1, kline trade ids, bookTicker u, depth20 lastUpdateId).
func Prepare(sc Scenario, n int, seed uint64, combined bool) (*Batch, error) {
	return PrepareEncoded(sc, n, seed, combined, codec.JSON)
}

// PrepareEncoded is Prepare with the messages in encoding enc: JSON in text
// frames, msgpack and packed in binary frames (the same events, wrapper
// included, transcoded from the JSON Prepare writes).
func PrepareEncoded(sc Scenario, n int, seed uint64, combined bool, enc codec.Encoding) (*Batch, error) {
	if n < 1 {
		return nil, fmt.Errorf("message count %d: want at least 1", n)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	gens := make([]gen, len(sc.Streams))
	var order []int
	for i, name := range sc.Streams {
		g, err := newGen(sc, name, r)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		gens[i] = g
		for range weight(name) {
			order = append(order, i)
		}
	}
	// Interleave the streams rather than sending one stream's round in a row.
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	est := int64(n) * int64(sc.Target+sc.Target/8+16)
	if est > MaxBytes+MaxBytes/4 {
		return nil, fmt.Errorf("scenario %s: %d messages take about %d MiB, more than the %d MiB a batch may hold: ask for fewer", sc.Name, n, est>>20, MaxBytes>>20)
	}
	b := &Batch{Scenario: sc.Name, Combined: combined, Encoding: enc, Messages: n, ends: make([]end, 0, n)}
	op := ws.OpText
	if enc.Binary() {
		op = ws.OpBinary
	}
	var encoded []byte
	out := bytes.NewBuffer(make([]byte, 0, min(est, MaxBytes)))
	wall := time.Now().UnixMilli()
	var payload, scratch []byte
	for i := range n {
		si := order[i%len(order)]
		scratch = gens[si].next(scratch[:0], wall+int64(i/1000))
		p := scratch
		if combined {
			payload = append(payload[:0], `{"stream":"`...)
			payload = append(payload, sc.Streams[si]...)
			payload = append(payload, `","data":`...)
			payload = append(payload, scratch...)
			payload = append(payload, '}')
			p = payload
		}
		if enc != codec.JSON {
			var err error
			if encoded, err = codec.Append(encoded[:0], p, enc); err != nil {
				return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
			p = encoded
		}
		if err := ws.WriteHeader(out, ws.Header{Fin: true, OpCode: op, Length: int64(len(p))}); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		out.Write(p)
		b.PayloadBytes += int64(len(p))
		b.ends = append(b.ends, end{int64(out.Len()), b.PayloadBytes})
		if out.Len() > MaxBytes {
			return nil, fmt.Errorf("scenario %s: %d messages take more than the %d MiB a batch may hold: ask for fewer", sc.Name, n, MaxBytes>>20)
		}
	}
	b.wire = out.Bytes()
	return b, nil
}

// Compress returns b with every message compressed by c (permessage-deflate:
// RSV1 set, the payload deflated with the tail stripped). With context
// takeover a message's bytes depend on those before it; every connection is
// sent the same messages from the first, so one compressed batch serves
// every connection that negotiated the same parameters.
func (b *Batch) Compress(c *deflate.Compressor) (*Batch, error) {
	out := &Batch{Scenario: b.Scenario, Combined: b.Combined, Encoding: b.Encoding, Messages: b.Messages, PayloadBytes: b.PayloadBytes,
		Compressed: true, ends: make([]end, 0, len(b.ends))}
	var buf bytes.Buffer
	r := bytes.NewReader(b.wire)
	for i := range b.ends {
		h, err := ws.ReadHeader(r)
		if err != nil {
			return nil, fmt.Errorf("compress message %d: %w", i, err)
		}
		p := b.wire[int(r.Size())-r.Len():][:h.Length]
		if _, err := r.Seek(h.Length, io.SeekCurrent); err != nil {
			return nil, fmt.Errorf("compress message %d: %w", i, err)
		}
		z, err := c.Compress(p)
		if err != nil {
			return nil, fmt.Errorf("compress message %d: %w", i, err)
		}
		if err := ws.WriteHeader(&buf, ws.Header{Fin: true, Rsv: deflate.RSV1, OpCode: h.OpCode, Length: int64(len(z))}); err != nil {
			return nil, fmt.Errorf("compress message %d: %w", i, err)
		}
		buf.Write(z)
		out.ends = append(out.ends, end{int64(buf.Len()), b.ends[i].payload})
	}
	out.wire = buf.Bytes()
	return out, nil
}
