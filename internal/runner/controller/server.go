package controller

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// startServer starts the replay server for the window start–end; the
// faults due before faultsFrom (a resume: they fell in the outage) are not
// given to it.
func (c *controller) startServer(ctx context.Context, start, end, faultsFrom time.Time) error {
	cfg := c.o.Profile.ReplayConfig() // handed to the server on stdin
	cfg.Start, cfg.Stop = start, end
	cfg.Faults = faultsAfter(cfg.Faults, faultsFrom.Sub(start))
	if c.ca != nil {
		cfg.CertFile, cfg.KeyFile = filepath.Join(c.dir, "server.pem"), filepath.Join(c.dir, "server-key.pem")
	}
	o := child.Options{Name: "replay server", Exe: c.o.Exe, Args: []string{"child", "replay"}, Log: filepath.Join(c.dir, "server.log")}
	c.linkServer(&o, &cfg) // behind the run's link, if any
	o.Spec = cfg
	ch, err := child.Start(o)
	if err != nil {
		return err
	}
	c.server = ch
	line, err := ch.ReadLine(ctx, 10*time.Second)
	if err != nil {
		ch.Stop(2 * time.Second)
		return fmt.Errorf("%w (see %s)", err, filepath.Join(c.dir, "server.log"))
	}
	ch.DiscardOut()
	var r wire.ReplayReady
	if err := json.Unmarshal(line, &r); err != nil || r.Addr == "" {
		ch.Stop(2 * time.Second)
		return fmt.Errorf("replay server: bad ready line %q", wire.Truncate(line, 80))
	}
	c.addr = r.Addr
	return nil
}

// localBase is the http(s) base URL of the local replay server.
func (c *controller) localBase() string {
	if c.ca != nil {
		return "https://" + c.addr
	}
	return "http://" + c.addr
}

// httpClient is the controller's client for its own requests: to the local replay server
// directly, trusting its throwaway CA; to a remote REST base (remote true) the way the
// workers connect: through the profile's proxy, with its TLS trust and server name.
func (c *controller) httpClient(remote bool) (*http.Client, error) {
	tr := &http.Transport{Proxy: nil, TLSHandshakeTimeout: 10 * time.Second}
	if !remote {
		if c.ca != nil {
			tr.TLSClientConfig = &tls.Config{RootCAs: c.ca.Pool(), MinVersion: tls.VersionTLS12}
		}
		return &http.Client{Transport: tr, Timeout: 20 * time.Second}, nil
	}
	p := c.o.Profile
	var cas []string
	if p.TLS.CA != "" {
		cas = []string{p.TLS.CA}
	}
	tc, err := transport.TLSConfig(cas, "")
	if err != nil {
		return nil, err
	}
	d := &transport.Dialer{Timeout: 10 * time.Second, ProxyTLS: tc}
	if p.Proxy != "" {
		if d.Proxy, err = endpoint.ParseProxy(p.Proxy); err != nil {
			return nil, err
		}
	}
	tr.DialContext, tr.TLSClientConfig = d.DialContext, tc
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}, nil
}

// makeCA writes a throwaway CA and the replay server's certificate (valid until a day
// after end) into the run directory, and returns the CA file the workers trust.
func (c *controller) makeCA(end time.Time) (string, error) {
	ca, err := cert.New(time.Until(end)+24*time.Hour, c.certHosts()...)
	if err != nil {
		return "", fmt.Errorf("replay tls: %w", err)
	}
	files, err := ca.Write(c.dir)
	if err != nil {
		return "", fmt.Errorf("replay tls: %w", err)
	}
	c.ca = ca
	return files.CA, nil
}

func (c *controller) stopServer() {
	if c.server != nil {
		c.server.Stop(5 * time.Second)
	}
}

func (c *controller) saveServerCounts() error {
	var st replay.Stats
	if err := c.getLocal(wire.PathStats, &st); err != nil {
		return err
	}
	rows, ws := serverRows(st.Conns)
	c.checkWire(ws)
	return c.o.EndRetry.Do("store server counts", func() error {
		return joinErrs(c.db.SaveServerCounts(rows), c.db.SaveServerWire(ws))
	})
}

// serverRows turns the replay server's connections into the stored rows, one
// per tag (and stream). A worker that was restarted numbers its attempts from
// 0 again, so two connections can carry one tag: their counts are added (ids
// from the lower first to the higher last), not the later written over the
// earlier, so the stored totals are what the server sent.
func serverRows(conns []replay.ConnStats) ([]store.ServerCount, []store.ServerWire) {
	type key struct{ tag, stream string }
	counts := map[key]int{}
	wires := map[string]int{}
	var rows []store.ServerCount
	var ws []store.ServerWire
	for _, cn := range conns {
		if i, ok := wires[cn.Tag]; ok {
			ws[i].WireBytes += cn.WireBytes
			ws[i].Readable += cn.WireBytesReadable
			if ws[i].Extensions == "" {
				ws[i].Extensions = cn.Extensions
			}
		} else {
			wires[cn.Tag] = len(ws)
			ws = append(ws, store.ServerWire{Tag: cn.Tag, WireBytes: cn.WireBytes, Readable: cn.WireBytesReadable, Extensions: cn.Extensions})
		}
		names := make([]string, 0, len(cn.Streams))
		for name := range cn.Streams {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			s := cn.Streams[name]
			k := key{cn.Tag, name}
			i, ok := counts[k]
			if !ok {
				counts[k] = len(rows)
				rows = append(rows, store.ServerCount{Tag: cn.Tag, Stream: name, Sent: s.Sent, Bytes: s.Bytes, FirstSeq: s.FirstSeq, LastSeq: s.LastSeq})
				continue
			}
			r := &rows[i]
			switch {
			case r.Sent == 0: // the ids of the one that sent any
				r.FirstSeq, r.LastSeq = s.FirstSeq, s.LastSeq
			case s.Sent > 0:
				r.FirstSeq, r.LastSeq = min(r.FirstSeq, s.FirstSeq), max(r.LastSeq, s.LastSeq)
			}
			r.Sent += s.Sent
			r.Bytes += s.Bytes
		}
	}
	return rows, ws
}

// faultsAfter returns the faults of fs due at or after the offset from
// (from the window's start), each repeated one starting at its first
// repetition due then; all of them when from is not positive.
func faultsAfter(fs []wire.ScheduledFault, from time.Duration) []wire.ScheduledFault {
	if from <= 0 {
		return fs
	}
	var out []wire.ScheduledFault
	for _, f := range fs {
		if f.At < from && f.Every > 0 {
			f.At += (from - f.At + f.Every - 1) / f.Every * f.Every
		}
		if f.At >= from {
			out = append(out, f)
		}
	}
	return out
}
