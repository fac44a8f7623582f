package wire

import (
	"bytes"
	"strings"
	"testing"
)

func TestFramesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	sent := []*Frame{
		{Type: FrameHello, Lib: "gorilla", Version: "v1.5.3", Pid: 42},
		{Type: FrameSec, Sec: 7, Stat: &SecStat{Msgs: 10, MsgsTotal: 70, LatP99: 1234}},
		{Type: FrameEvent, Ev: &Event{Kind: "reconnect", Slot: 2, Group: "depth", DurMs: 12.5}},
		{Type: FrameHist, Sec: 60, Hist: []byte{1, 0, 0xff, 10}},
	}
	for _, f := range sent {
		if err := fw.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	var got []*Frame
	if err := ReadFrames(&buf, func(f *Frame) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].Pid != 42 || got[1].Stat.MsgsTotal != 70 || got[2].Ev.DurMs != 12.5 ||
		got[3].Sec != 60 || !bytes.Equal(got[3].Hist, []byte{1, 0, 0xff, 10}) {
		t.Fatalf("frames came back as %+v", got)
	}
}

func TestFramesRejectWrongVersionAndGarbage(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"v":99,"t":"sec"}` + "\n", "frame version 99, want 1"},
		{"not json\n", `bad frame "not json"`},
	}
	for _, tc := range tests {
		err := ReadFrames(strings.NewReader(tc.in), func(*Frame) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadFrames(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}
