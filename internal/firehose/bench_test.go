package firehose

import (
	"context"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// benchN is how many messages one op of BenchmarkCeiling reads: about 40 MB
// of payload whatever the scenario.
var benchN = map[string]int{
	"aggTrade": 200_000, "kline": 120_000, "depth20": 35_000, "depth": 4_500, "tickerArr": 90, "mix": 200_000,
}

// BenchmarkCeiling measures the firehose into the raw reader (payloads only
// counted) on loopback, per scenario: the ceiling no library can pass on this
// machine. One op is one connection of benchN messages, dial included.
// BenchmarkServer is the firehose's own ceiling.
func BenchmarkCeiling(b *testing.B) {
	for _, sc := range Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			n := benchN[sc.Name]
			s := start(b, sc, n, 0)
			var msgs, bytes, reads int64
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				c, err := rawws.Dial(ctx, s.URL(), rawws.Options{})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				counts, err := c.Drain()
				c.Close()
				if err != nil || counts.Messages != int64(n) {
					b.Fatalf("drain: %+v, %v; want %d messages", counts, err, n)
				}
				msgs += counts.Messages
				bytes += counts.PayloadBytes
				reads += counts.Reads
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(msgs)/secs, "msgs/s")
			b.ReportMetric(float64(bytes)/secs/1e6, "MB/s")
			b.ReportMetric(float64(bytes)/float64(reads), "B/read")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// counter is a handler that only counts.
type counter struct{ msgs, bytes int64 }

func (c *counter) OnMessage(_ bool, p []byte) { c.msgs++; c.bytes += int64(len(p)) }
func (c *counter) OnPing([]byte)              {}
func (c *counter) OnPong([]byte)              {}

// BenchmarkLibraries measures each library's adapter reading the aggTrade
// firehose with a handler that only counts, in the same process as the
// firehose: a first look at the bare path beside BenchmarkCeiling.
func BenchmarkLibraries(b *testing.B) {
	sc, _ := Lookup("aggTrade")
	n := benchN[sc.Name]
	for _, tr := range transport.All() {
		b.Run(tr.Name(), func(b *testing.B) {
			s := start(b, sc, n, 0)
			var msgs int64
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				c, err := tr.Dial(ctx, transport.DialConfig{URL: s.URL()})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				h := &counter{}
				_ = c.Run(h)
				if h.msgs != int64(n) {
					b.Fatalf("%d messages; want %d", h.msgs, n)
				}
				msgs += h.msgs
			}
			b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkServer measures the firehose into a reader that only counts bytes
// (rawws Skip: no frame is parsed): how fast the server can send, which the
// client paths must stay well below for their figures to be theirs.
func BenchmarkServer(b *testing.B) {
	for _, sc := range Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			n := benchN[sc.Name]
			s := start(b, sc, n, 0)
			st := s.Stats()
			var bytes int64
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				c, err := rawws.Dial(ctx, s.URL(), rawws.Options{})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Skip(st.WireBytes + CloseFrameSize); err != nil {
					b.Fatal(err)
				}
				c.Close()
				bytes += st.PayloadBytes
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(n)*float64(b.N)/secs, "msgs/s")
			b.ReportMetric(float64(bytes)/secs/1e6, "MB/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
