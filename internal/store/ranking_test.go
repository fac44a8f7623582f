package store

import (
	"bytes"
	"math"
	"testing"
)

// TestLatencyDigests: digests written with the batches come back by
// second and library; the same library and second again replaces the row.
func TestLatencyDigests(t *testing.T) {
	db, path := open(t)
	b := &Batch{Digests: []LatencyDigest{{Lib: "gws", Sec: 120, Digest: []byte{1, 2}}, {Lib: "coder", Sec: 60, Digest: []byte{3}},
		{Lib: "gws", Sec: 60, Digest: []byte{4}}}}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(&Batch{Digests: []LatencyDigest{{Lib: "gws", Sec: 120, Digest: []byte{5, 6, 7}}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var got []LatencyDigest
	if err := ro.EachLatencyDigest(func(d *LatencyDigest) error {
		got = append(got, LatencyDigest{d.Lib, d.Sec, bytes.Clone(d.Digest)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []LatencyDigest{{"coder", 60, []byte{3}}, {"gws", 60, []byte{4}}, {"gws", 120, []byte{5, 6, 7}}} // by second, then library
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Lib != want[i].Lib || got[i].Sec != want[i].Sec || !bytes.Equal(got[i].Digest, want[i].Digest) {
			t.Errorf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestRankingRows: the ranking is replaced as a whole, and a figure not
// measured (NaN) is stored as NULL and read back as NaN.
func TestRankingRows(t *testing.T) {
	db, _ := open(t)
	nan := math.NaN()
	first := []RankRow{{Stat: "cpu_avg", A: "gws", N: 20, Est: 9.5, Lo: nan, Hi: nan, P: nan, SD: nan, Span: nan}}
	if err := db.SaveRanking(first); err != nil {
		t.Fatal(err)
	}
	rows := []RankRow{
		{Stat: "cpu_avg", A: "coder", B: "gws", N: 20, Est: -1.25, Lo: -1.5, Hi: -1, P: 0.001, SD: 0.5, Span: 6},
		{Stat: "reconnect_duration", A: "coder", B: "gws", N: 2, Est: 12, Lo: nan, Hi: nan, P: nan, SD: nan, Span: 0, Note: "too few faults to call"},
	}
	if err := db.SaveRanking(rows); err != nil {
		t.Fatal(err)
	}
	got, err := db.Ranking()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows, want the 2 saved last", len(got))
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	for i, w := range rows {
		g := got[i]
		if g.Stat != w.Stat || g.A != w.A || g.B != w.B || g.N != w.N || g.Note != w.Note || !same(g.Est, w.Est) || !same(g.Lo, w.Lo) ||
			!same(g.Hi, w.Hi) || !same(g.P, w.P) || !same(g.SD, w.SD) || !same(g.Span, w.Span) {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
}
