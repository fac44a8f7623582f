package runner

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestFramesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	fw := newFrameWriter(&buf)
	sent := []*Frame{
		{Type: frameHello, Lib: "gorilla", Version: "v1.5.3", Pid: 42},
		{Type: frameSec, Sec: 7, Stat: &SecStat{Msgs: 10, MsgsTotal: 70, LatP99: 1234}},
		{Type: frameEvent, Ev: &Event{Kind: "reconnect", Slot: 2, Group: "depth", DurMs: 12.5}},
	}
	for _, f := range sent {
		if err := fw.send(f); err != nil {
			t.Fatal(err)
		}
	}
	var got []*Frame
	if err := readFrames(&buf, func(f *Frame) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Pid != 42 || got[1].Stat.MsgsTotal != 70 || got[2].Ev.DurMs != 12.5 {
		t.Fatalf("frames came back as %+v", got)
	}
}

func TestFramesRejectWrongVersionAndGarbage(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"v":99,"t":"sec"}` + "\n", "frame version 99, want 1"},
		{"not json\n", `bad frame "not json"`},
	}
	for _, tc := range tests {
		err := readFrames(strings.NewReader(tc.in), func(*Frame) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readFrames(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestRunWorkerRejectsBadPlans(t *testing.T) {
	tests := []struct{ plan, lib, want string }{
		{`{"v":2}`, "gorilla", "plan version 2, want 1"},
		{`{"v":1}`, "nope", `unknown library "nope"`},
		{`{"v":1`, "gorilla", "decode plan"},
		{``, "gorilla", "read plan"},
	}
	for _, tc := range tests {
		err := RunWorker(context.Background(), tc.lib, strings.NewReader(tc.plan+"\n"), io.Discard, slog.New(slog.DiscardHandler))
		if tc.plan == "" {
			err = RunWorker(context.Background(), tc.lib, strings.NewReader(""), io.Discard, slog.New(slog.DiscardHandler))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan %q lib %s: %v, want an error containing %q", tc.plan, tc.lib, err, tc.want)
		}
	}
}
