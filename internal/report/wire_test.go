package report

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

// TestWireChart: a run that recorded wire bytes has the wire chart, drawn
// from every second and from buckets alike; one that did not has none.
func TestWireChart(t *testing.T) {
	for _, tt := range []struct {
		name string
		wire int64
		want bool
	}{{"recorded", 3_000, true}, {"none", 0, false}} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var b store.Batch
			for sec := int64(1); sec <= 6; sec++ {
				b.Samples = append(b.Samples, store.Sample{Lib: "gws", Sec: sec, TS: time.Unix(1_800_000_000+sec, 0), HasWorker: true,
					Msgs: 10, MsgsTotal: 10 * sec, Bytes: 9_000, BytesTotal: 9_000 * sec, WireBytes: tt.wire * sec, WireBytesTotal: tt.wire * sec * (sec + 1) / 2})
			}
			if err := db.Write(&b); err != nil {
				t.Fatal(err)
			}
			rows, err := readSeries(db, 6)
			if err != nil {
				t.Fatal(err)
			}
			charts := buildCharts(rows, 6, measure.SideClient, []string{"gws"}, map[string]int{"gws": 0}, nil)
			i := slices.IndexFunc(charts, func(c chart) bool { return c.ID == "wire" })
			if (i >= 0) != tt.want {
				t.Fatalf("wire chart present %v, want %v", i >= 0, tt.want)
			}
			if !tt.want {
				return
			}
			if got := slices.Max(charts[i].Cols[0]); got != 18 { // 6 × 3,000 bytes in second 6, in kB
				t.Errorf("wire chart's highest value %v kB/s, want 18", got)
			}
			buckets, err := db.SampleBuckets(3)
			if err != nil {
				t.Fatal(err)
			}
			if len(buckets) != 3 || buckets[1].Wire != [2]int64{9_000, 15_000} {
				t.Errorf("buckets of 3 s: %+v, want the second with wire bytes 9,000–15,000", buckets)
			}
		})
	}
}
