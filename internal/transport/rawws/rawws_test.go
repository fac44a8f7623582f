package rawws

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// chunkReader returns its data in reads of the given sizes, in turn.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(c.sizes) > 0 {
		n = min(n, max(1, c.sizes[c.i%len(c.sizes)]))
		c.i++
	}
	n = copy(p, c.data[:min(n, len(c.data))])
	c.data = c.data[n:]
	return n, nil
}

func closeFrame(code int) []byte {
	return AppendFrame(nil, OpClose, true, []byte{byte(code >> 8), byte(code)}, false)
}

// TestReader: frames of every length form, fragments with a ping between
// them, read kept and only counted, through reads of odd sizes and a buffer
// smaller than a message.
func TestReader(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 70000) // 64-bit length
	mid := bytes.Repeat([]byte("y"), 300)   // 16-bit length
	var wire []byte
	wire = AppendFrame(wire, OpText, true, []byte("small"), false)
	wire = AppendFrame(wire, OpText, true, mid, false)
	wire = AppendFrame(wire, OpBinary, true, big, false)
	wire = AppendFrame(wire, OpText, false, []byte("frag-"), false)
	wire = AppendFrame(wire, OpPing, true, []byte("p"), false)
	wire = AppendFrame(wire, OpContinuation, false, []byte("ment"), false)
	wire = AppendFrame(wire, OpContinuation, true, []byte("ed"), false)
	wire = AppendFrame(wire, OpText, true, nil, false)
	wire = append(wire, closeFrame(1000)...)
	want := []string{"small", string(mid), string(big), "frag-mented", ""}
	wantBytes := int64(0)
	for _, w := range want {
		wantBytes += int64(len(w))
	}
	for _, tc := range []struct {
		name  string
		buf   int
		sizes []int
		keep  bool
	}{
		{"one read", 1 << 20, nil, true},
		{"byte by byte", 16, []int{1}, true},
		{"odd reads, small buffer", 100, []int{7, 3, 250, 1}, true},
		{"counted only", 100, []int{7, 3, 250, 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			r := NewReader(&chunkReader{data: wire, sizes: tc.sizes}, &out, tc.buf, nil)
			var got []string
			for {
				m, err := r.Next(tc.keep)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if tc.keep {
					got = append(got, string(m.Payload))
				} else {
					got = append(got, strings.Repeat("?", int(m.Len)))
				}
			}
			if len(got) != len(want) {
				t.Fatalf("got %d messages; want %d", len(got), len(want))
			}
			for i := range want {
				if tc.keep && got[i] != want[i] || len(got[i]) != len(want[i]) {
					t.Errorf("message %d: %d bytes %.20q; want %d bytes %.20q", i, len(got[i]), got[i], len(want[i]), want[i])
				}
			}
			c := r.Counts()
			if c.Messages != 5 || c.PayloadBytes != wantBytes || c.CloseCode != 1000 || c.Pings != 1 || c.Frames != 9 || c.WireBytes != int64(len(wire)) {
				t.Errorf("counts %+v; want 5 messages, %d bytes, close 1000, 1 ping, 9 frames, %d wire bytes", c, wantBytes, len(wire))
			}
			// The pong echoes the ping, then the close is echoed; both masked.
			h, n, err := ParseHeader(out.Bytes())
			if err != nil || n == 0 || h.Op != OpPong || !h.Masked || h.Length != 1 {
				t.Errorf("first frame written: %+v %v; want a masked pong of 1 byte", h, err)
			}
		})
	}
}

// TestReaderErrors: what a client must fail on.
func TestReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		wire []byte
		want string
	}{
		{"masked", AppendFrame(nil, OpText, true, []byte("a"), true), "masked frame"},
		{"reserved bit", append([]byte{0x80 | 0x40 | OpText, 1}, 'a'), "reserved bits"},
		{"reserved opcode", []byte{0x80 | 0x3, 0}, "reserved opcode"},
		{"continuation first", AppendFrame(nil, OpContinuation, true, []byte("a"), false), "continuation frame outside"},
		{"message in message", append(AppendFrame(nil, OpText, false, []byte("a"), false), AppendFrame(nil, OpText, true, []byte("b"), false)...), "new message inside"},
		{"fragmented ping", AppendFrame(nil, OpPing, false, nil, false), "control frame"},
		{"long ping", AppendFrame(nil, OpPing, true, make([]byte, 126), false), "control frame"},
		{"top length bit", []byte{0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 0}, "top bit"},
		{"truncated", AppendFrame(nil, OpText, true, []byte("abcdef"), false)[:5], "without a close frame"},
		{"1-byte close", []byte{0x88, 1, 3}, "1-byte body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tc.wire), nil, 64, nil)
			var err error
			for range 10 {
				if _, err = r.Next(true); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzReader: messages cut into fragments and sent through reads of sizes
// the input chooses come out whole and counted; any other input ends in a
// message, an error or EOF, never a panic or a loop.
func FuzzReader(f *testing.F) {
	f.Add([]byte("hello world"), []byte{3, 1, 200}, uint16(64))
	f.Add(bytes.Repeat([]byte{0xff}, 300), []byte{0, 0, 1}, uint16(16))
	f.Add([]byte{0x81, 0x7e, 0x00}, []byte{}, uint16(20))
	f.Fuzz(func(t *testing.T, data, cuts []byte, bufSize uint16) {
		buf := int(bufSize%4096) + 16
		sizes := make([]int, len(cuts))
		for i, c := range cuts {
			sizes[i] = int(c)
		}
		// Arbitrary bytes as frames: must terminate.
		r := NewReader(&chunkReader{data: data, sizes: sizes}, io.Discard, buf, nil)
		for range len(data) + 2 {
			if _, err := r.Next(len(data)%2 == 0); err != nil {
				break
			}
		}
		// data as messages: each cut byte ends a message, and splits it in
		// fragments of c%5+1 parts.
		var want [][]byte
		var wire []byte
		rest := data
		for i := 0; len(rest) > 0 || i == 0; i++ {
			n := len(rest)
			parts := 1
			if i < len(cuts) {
				n = min(n, int(cuts[i]))
				parts = int(cuts[i])%5 + 1
			}
			msg := rest[:n]
			rest = rest[n:]
			want = append(want, msg)
			step := max(1, len(msg)/parts)
			op := byte(OpText)
			for off := 0; ; off += step {
				end := min(off+step, len(msg))
				last := end >= len(msg)
				wire = AppendFrame(wire, op, last, msg[off:end], false)
				op = OpContinuation
				if last {
					break
				}
				if off%2 == 0 {
					wire = AppendFrame(wire, OpPing, true, []byte("x"), false)
				}
			}
			if len(rest) == 0 {
				break
			}
		}
		wire = append(wire, closeFrame(1000)...)
		r = NewReader(&chunkReader{data: wire, sizes: sizes}, io.Discard, buf, nil)
		var total int64
		for i := 0; ; i++ {
			m, err := r.Next(true)
			if errors.Is(err, io.EOF) {
				if i != len(want) {
					t.Fatalf("%d messages; want %d", i, len(want))
				}
				break
			}
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if i >= len(want) || !bytes.Equal(m.Payload, want[i]) {
				t.Fatalf("message %d: %q; want %q", i, m.Payload, want[min(i, len(want)-1)])
			}
			total += int64(len(want[i]))
		}
		if c := r.Counts(); c.PayloadBytes != total || c.Messages != int64(len(want)) || c.CloseCode != 1000 || c.WireBytes != int64(len(wire)) {
			t.Fatalf("counts %+v; want %d messages, %d bytes, %d wire bytes", c, len(want), total, len(wire))
		}
	})
}
