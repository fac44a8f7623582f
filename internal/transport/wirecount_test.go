package transport

import "testing"

func TestWireCount(t *testing.T) {
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
	frames := "\x81\x03abc\x89\x00"
	full := resp + frames + "\r\n\r\nmore"
	for _, split := range []int{1, 2, 3, 5, 7, 1000} {
		var w wireCount
		for i := 0; i < len(full); i += split {
			w.add([]byte(full[i:min(i+split, len(full))]))
		}
		if got, want := w.n.Load(), int64(len(full)-len(resp)); got != want {
			t.Errorf("reads of %d bytes: counted %d, want %d", split, got, want)
		}
	}
	var w wireCount
	w.add([]byte("HTTP/1.1 101 OK\r\nX: \r\r\n\r\nab"))
	if w.n.Load() != 2 {
		t.Errorf("\\r\\r\\n\\r\\n: counted %d, want 2", w.n.Load())
	}
}

func BenchmarkWireCount(b *testing.B) {
	var w wireCount
	w.add([]byte("\r\n\r\n"))
	p := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		w.add(p)
	}
}
