package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// maxURLLen keeps combined-stream URLs under the ~8,000 characters Binance accepts.
const maxURLLen = 7000

// BuildPlan splits the profile's groups into connection slots.
func BuildPlan(p *profile.Profile, runID, target string, local bool) (*wire.Plan, error) {
	groups, err := p.Expand()
	if err != nil {
		return nil, err
	}
	plan := &wire.Plan{
		Version:          wire.PlanVersion,
		RunID:            runID,
		Columns:          p.Columns(),
		Target:           target,
		Local:            local,
		TimeUnit:         "MICROSECOND",
		PingInterval:     time.Duration(p.Keepalive.Interval),
		PongTimeout:      time.Duration(p.Keepalive.Timeout),
		BackoffMin:       time.Duration(p.Reconnect.Min),
		BackoffMax:       time.Duration(p.Reconnect.Max),
		HandshakeTimeout: time.Duration(p.HandshakeTimeout),
		ReadLimit:        int64(p.ReadLimit),
		Runtime:          p.WorkerRuntime.Wire(),
		Encoding:         p.Encoding,
		Compression:      p.Compression,
		RcvBuf:           int(p.RcvBuf),
		StallFactor:      p.Silence.Factor,
		StallMin:         time.Duration(p.Silence.Min),
		StallRealTime:    time.Duration(p.Silence.RealTime),
		UnrepairableDial: p.Reconnect.GiveUpDials,
		UnrepairableFor:  time.Duration(p.Reconnect.GiveUpAfter),
		SubsEvery:        10,
		Proxy:            p.Proxy,
		ServerName:       p.TLS.ServerName,
	}
	if p.TLS.CA != "" {
		plan.CAFiles = []string{p.TLS.CA}
	}
	if time.Duration(p.Duration) > 2*time.Hour {
		// A day of 5 libraries × 300 subscriptions every 10 s would be ~500 MB
		// of stream samples; every 60 s keeps it near 85 MB.
		plan.SubsEvery = 60
	}
	for _, g := range groups {
		per := g.PerConnection
		if per <= 0 || per > 1024 {
			per = 1024
		}
		var cur []string
		curLen := 0
		flush := func() {
			if len(cur) == 0 {
				return
			}
			plan.Slots = append(plan.Slots, wire.Slot{ID: len(plan.Slots), Group: g.Name, Subscribe: g.Subscribe, Streams: cur})
			cur, curLen = nil, 0
		}
		for _, st := range g.Streams {
			if len(cur) == per || (g.Subscribe == "url" && curLen+len(st.Name)+1 > maxURLLen) {
				flush()
			}
			cur = append(cur, st.Name)
			curLen += len(st.Name) + 1
		}
		flush()
	}
	if len(plan.Slots) == 0 {
		return nil, errors.New("plan: the profile subscribes to no streams")
	}
	if _, err := url.Parse(plan.Slots[0].URL(target, plan.TimeUnit)); err != nil {
		return nil, fmt.Errorf("plan: target %q: %w", target, err)
	}
	return plan, nil
}

// create resolves the symbols, builds the plan and records the new run.
func (c *controller) create(ctx context.Context, runID, target string, local bool, start, end time.Time, hostInfo map[string]string, caFile string) error {
	p := c.o.Profile
	symbols, err := c.resolveSymbols(ctx)
	if err != nil {
		return err
	}
	plan, err := BuildPlan(p, runID, target, local)
	if err != nil {
		return err
	}
	if caFile != "" {
		plan.CAFiles = append(plan.CAFiles, caFile)
	}
	plan.Start, plan.End = start, end
	c.plan = plan
	planJSON, _ := json.Marshal(plan)
	// Proxy credentials are in the plan the workers get, never in what is stored.
	return c.Record(store.Run{
		ID: runID, Name: p.Name, Target: endpoint.Mask(target), ProfileText: endpoint.Mask(p.Text), Status: "running",
		GoVersion: runtime.Version(), Started: start, Planned: time.Duration(p.Duration), Host: hostInfo,
		Settings: map[string]string{"plan": endpoint.Mask(string(planJSON)), "profile_path": p.Path,
			"keepalive":  fmt.Sprintf("%s/%s", plan.PingInterval, plan.PongTimeout),
			"read_limit": fmt.Sprint(plan.ReadLimit), "rcvbuf": fmt.Sprint(plan.RcvBuf), "compression": plan.Compression.String(), "symbols": symbols, "encoding": p.Encoding,
			"proxy": endpoint.Mask(plan.Proxy), "tls_ca": strings.Join(plan.CAFiles, ","), "tls_server_name": plan.ServerName,
			"libraries": strings.Join(p.Libraries, ",")}, // -libs may have changed the profile's: a resume runs these
	})
}

// resolveSymbols turns every {top: N, quote: Q} of the profile into a symbol
// list, from one GET /api/v3/ticker/24hr (so a top 20 is the head of the top
// 50), and returns the lists as JSON for the run's settings ("" when the
// profile lists its symbols). It runs once per run: every worker gets the plan
// built from these lists.
func (c *controller) resolveSymbols(ctx context.Context) (string, error) {
	p := c.o.Profile
	if !p.NeedsResolve() {
		return "", nil
	}
	base := p.RESTBase(c.localBase())
	var tickers []binance.Ticker24h
	client, err := c.httpClient(base != c.localBase())
	if err != nil {
		return "", err
	}
	got, err := p.ResolveSymbols(func(t profile.Top) ([]string, error) {
		if tickers == nil {
			var err error
			if tickers, err = binance.FetchTickers24h(ctx, client, base); err != nil {
				return nil, err
			}
		}
		return binance.TopSymbols(tickers, t.N, t.Quote)
	})
	if err != nil {
		return "", err
	}
	lists := map[string][]string{}
	for t, l := range got {
		lists[t.String()] = l
		c.o.Log.Info("symbols resolved", "rule", t.String(), "from", base+"/api/v3/ticker/24hr", "symbols", strings.Join(l, ","))
	}
	b, _ := json.Marshal(lists)
	return string(b), nil
}
