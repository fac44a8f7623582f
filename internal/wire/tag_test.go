package wire

import "testing"

func TestTagRoundTrip(t *testing.T) {
	for _, tg := range []Tag{{Column: "gorilla", Slot: 0, Attempt: 1}, {Column: "fasthttp", Slot: 12, Attempt: 3}} {
		got, err := ParseTag(tg.String())
		if err != nil || got != tg {
			t.Errorf("ParseTag(%q) = %+v, %v; want %+v", tg.String(), got, err, tg)
		}
	}
	for _, bad := range []string{"", "gorilla", "gorilla/1", "/1/2", "gorilla/x/1", "gorilla/1/-2"} {
		if _, err := ParseTag(bad); err == nil {
			t.Errorf("ParseTag(%q): no error", bad)
		}
	}
	if got := ColumnOf("coder/3/1"); got != "coder" {
		t.Errorf("ColumnOf = %q", got)
	}
}

func FuzzParseTag(f *testing.F) {
	f.Add("gorilla/1/2")
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTag(s)
		if err != nil {
			return
		}
		if back, err := ParseTag(tg.String()); err != nil || back != tg {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, tg, tg.String(), back, err)
		}
	})
}
