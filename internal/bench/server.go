package bench

import (
	"cmp"
	"fmt"
	"io"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/wire"
)

// ServerSpec is what a firehose process is asked to serve (a JSON line on its stdin).
type ServerSpec struct {
	Scenario string `json:"scenario"`
	N        int    `json:"n"`
	Seed     uint64 `json:"seed"`
	// Encodings are served besides JSON (codec names); their batches are
	// encoded before the info line, which gives their sizes.
	Encodings []string `json:"encodings,omitempty"`
	// Deflate is the permessage-deflate the firehose accepts.
	Deflate wire.Deflate `json:"deflate"`
	// Listen is the address to listen on: "" a free loopback port; behind
	// a link, the firehose's address there.
	Listen string `json:"listen,omitempty"`
}

// ServerInfo is the firehose process's first line on stdout.
type ServerInfo struct {
	Addr         string   `json:"addr"`
	URL          string   `json:"url"` // combined-stream URL
	StatsURL     string   `json:"stats_url"`
	Streams      []string `json:"streams"`
	N            int      `json:"n"`
	PayloadBytes int64    `json:"payload_bytes"`
	WireBytes    int64    `json:"wire_bytes"`
	// EncodedWireBytes is WireBytes of each of ServerSpec.Encodings.
	EncodedWireBytes map[string]int64 `json:"encoded_wire_bytes,omitempty"`
}

// Serve is the firehose process (soak child firehose): it serves spec on
// every connection until stdin (the rest after the spec) reaches its end,
// and prints its ServerInfo first.
func Serve(spec ServerSpec, stdin io.Reader, out io.Writer) error {
	sc, err := firehose.Lookup(spec.Scenario)
	if err != nil {
		return err
	}
	srv, err := firehose.New(firehose.Config{Scenario: sc, N: spec.N, Seed: spec.Seed, Deflate: spec.Deflate})
	if err != nil {
		return fmt.Errorf("firehose: %w", err)
	}
	if err := srv.Listen(cmp.Or(spec.Listen, "127.0.0.1:0")); err != nil {
		return fmt.Errorf("firehose: %w", err)
	}
	defer srv.Close()
	st := srv.Stats()
	info := ServerInfo{Addr: srv.Addr(), URL: srv.URL(), StatsURL: "http://" + srv.Addr() + firehose.StatsPath,
		Streams: sc.Streams, N: spec.N, PayloadBytes: st.PayloadBytes, WireBytes: st.WireBytes}
	for _, name := range spec.Encodings {
		e, err := codec.Parse(name)
		if err != nil {
			return err
		}
		n, err := srv.WireBytes(e)
		if err != nil {
			return fmt.Errorf("firehose: %w", err)
		}
		if info.EncodedWireBytes == nil {
			info.EncodedWireBytes = map[string]int64{}
		}
		info.EncodedWireBytes[name] = n
	}
	if err := child.NewWriter(out).Write(info); err != nil {
		return fmt.Errorf("write info: %w", err)
	}
	_, _ = io.Copy(io.Discard, stdin) // until the parent closes stdin (or dies)
	return nil
}
