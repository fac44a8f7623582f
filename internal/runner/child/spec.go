package child

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxSpec bounds a child's spec: a plan of thousands of subscriptions is a
// few hundred KiB; what is larger is not a spec.
const MaxSpec = 16 << 20

// ReadSpec is how every child reads its spec: the first line of stdin (at
// most MaxSpec bytes; a last line without its newline is taken too), decoded
// into spec. It returns the rest of stdin: the lines the parent sends later,
// and the EOF that tells the child to end.
func ReadSpec(stdin io.Reader, spec any) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(stdin, 64<<10)
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > MaxSpec {
			return nil, fmt.Errorf("read spec: longer than %d bytes (want one JSON line)", MaxSpec)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			if err == io.EOF {
				return nil, errors.New("read spec: stdin closed before the spec (want one JSON line)")
			}
			return nil, fmt.Errorf("read spec: %w", err)
		}
		break
	}
	if err := json.Unmarshal(line, spec); err != nil {
		return nil, fmt.Errorf("decode spec: %w", err)
	}
	return br, nil
}

// UntilEOF returns a context that ends when rest (a child's stdin after its
// spec) reaches its end: the parent closed it, or died. Lines sent on it are
// read and dropped.
func UntilEOF(ctx context.Context, rest io.Reader) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, rest)
		cancel()
	}()
	return ctx, cancel
}

// Writer is how a child answers: one JSON value a line on stdout, each
// written at once (the parent reads them as they come). Safe for use by
// several goroutines.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	err error // the first write error; later writes are dropped
}

// NewWriter writes JSON lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Err is the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Write writes v as one line. After a failed write, every later one returns
// that first error.
func (w *Writer) Write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_, w.err = w.w.Write(append(b, '\n'))
	}
	return w.err
}
