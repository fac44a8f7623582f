package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// TestFirehoseCmd: soak firehose prints its address first, serves -conns
// connections of -n messages, then exits 0 with what it sent.
func TestFirehoseCmd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"firehose", "-scenario", "depth20", "-n", "300", "-conns", "2"}, strings.NewReader(""), pw, io.Discard)
		pw.CloseWithError(err)
		done <- err
	}()
	br := bufio.NewReader(pr)
	addr, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	for range 2 {
		c, err := rawws.Dial(ctx, "ws://"+addr+"/stream", rawws.Options{})
		if err != nil {
			t.Fatal(err)
		}
		counts, err := c.Drain()
		c.Close()
		if err != nil || counts.Messages != 300 || counts.CloseCode != 1000 {
			t.Fatalf("drain: %+v, %v; want 300 messages and close 1000", counts, err)
		}
	}
	rest, _ := io.ReadAll(br)
	if err := <-done; err != nil {
		t.Fatalf("soak firehose: %v", err)
	}
	if n := bytes.Count(rest, []byte(": 300 messages,")); n != 2 {
		t.Errorf("output %q: want two connections of 300 messages", rest)
	}
}

// TestFirehoseBadFlags: bad input is one error line naming the flag, exit code 2.
func TestFirehoseBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-scenario", "depth5"}, "flag -scenario: unknown scenario"},
		{[]string{"-n", "0"}, "flag -n: 0 is not a message count"},
		{[]string{"-n", "2000000000", "-scenario", "tickerArr"}, "flag -n:"},
		{[]string{"-conns", "0"}, "flag -conns:"},
		{[]string{"-addr", "banana"}, "flag -addr: bad address"},
		{[]string{"-addr", "0.0.0.0:0"}, "flag -addr: \"0.0.0.0:0\" is every interface"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"firehose"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
		var line bytes.Buffer
		code := exitCode(err, &line)
		if code != 2 || !strings.Contains(line.String(), tc.want) || strings.Count(line.String(), "\n") != 1 {
			t.Errorf("%q: exit code %d, error line %q; want 2 and one line containing %q", tc.args, code, line.String(), tc.want)
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: stdout %q; want nothing", tc.args, stdout.String())
		}
	}
}
