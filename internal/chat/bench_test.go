package chat

import (
	"fmt"
	"testing"
	"time"
)

// discard is a sink that writes nowhere.
type discard struct{}

func (discard) write([]byte) error { return nil }
func (discard) flush() error       { return nil }
func (discard) kill(int, string)   {}

// BenchmarkBroadcast is the room's hot path: one message in, 16 deliveries
// out through the members' queues and writer goroutines; no allocation per
// message once the pool is warm.
func BenchmarkBroadcast(b *testing.B) {
	const n = 16
	r := NewRoom(n, DefaultQueue)
	for i := range n {
		if err := r.join(r.newMember(fmt.Sprint("c", i), discard{}, nil)); err != nil {
			b.Fatal(err)
		}
	}
	text := []byte("12345 hello room")
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.Broadcast("c1", text)
		if i%1024 == 1023 {
			settle(b, r)
		}
	}
	settle(b, r)
	b.StopTimer()
	b.ReportMetric(float64(r.deliveries.Load())/float64(b.N), "deliveries/op")
}

// settle waits until the writers have written everything queued (bounded).
func settle(b *testing.B, r *Room) {
	deadline := time.Now().Add(10 * time.Second)
	for r.inflight.Load() != 0 {
		if time.Now().After(deadline) {
			b.Fatalf("%d deliveries still in flight after 10 s", r.inflight.Load())
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// BenchmarkParseDelivery is the load client's per-delivery parse.
func BenchmarkParseDelivery(b *testing.B) {
	p := []byte("c17: 123456xxxxxxxxxx")
	b.ReportAllocs()
	for range b.N {
		if _, _, ok := parseDelivery(p, 64); !ok {
			b.Fatal("no parse")
		}
	}
}
