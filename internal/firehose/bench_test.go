package firehose

import (
	"context"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/firehose/rawws"
)

// benchN is how many messages one op of BenchmarkCeiling reads: about 40 MB
// of payload whatever the scenario.
var benchN = map[string]int{
	"aggTrade": 200_000, "kline": 120_000, "depth20": 35_000, "depth": 4_500, "tickerArr": 90, "mix": 200_000,
}

// BenchmarkCeiling measures the firehose into the raw reader (payloads only
// counted) on loopback, per scenario: the ceiling no library can pass on this
// machine. One op is one connection of benchN messages, dial included.
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
