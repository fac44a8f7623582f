package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestPrometheusScrape: a real Prometheus (Debian's; .ci/run installs it) on
// loopback scrapes a short soak run with -http every second. Once the run
// has ended, its HTTP API gives, for each library, a last scraped
// soak_messages_total equal to the database's count; soak_run_info with the
// run's -label; the final state done; the injected faults in
// soak_faults_total and the ids they dropped as lost while connected. Skips,
// saying so, where no prometheus binary is installed.
func TestPrometheusScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run and a Prometheus")
	}
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not installed (apt-get install prometheus): the scrape by a real Prometheus is not tested")
	}
	t.Parallel()
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.json")
	if err := os.WriteFile(targets, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeProfile(t, dir, "prometheus.yml", `global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: soak
    file_sd_configs:
      - files: [`+targets+`]
        refresh_interval: 1s
`)
	promURL := startPrometheus(t, bin, cfg, filepath.Join(dir, "tsdb"))

	prof := writeProfile(t, dir, "scrape.yaml", `name: scrape
duration: 6s
warmup: 1s
libraries: [gorilla, coder]
symbols: [btcusdt, ethusdt]
replay:
  speed: 5
faults:
  - at: 2s
    kind: drop
    n: 3
    streams: [btcusdt@trade]
`)
	out := filepath.Join(dir, "out")
	cmd, addr, _, stderr := startLiveRun(t, "-profile", prof, "-out", out, "-http", "127.0.0.1:0", "-linger", "4s", "-label", "region=test")
	defer cmd.Process.Kill()
	if err := os.WriteFile(targets, fmt.Appendf(nil, `[{"targets": [%q]}]`, addr), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("soak run: %v\n%s", err, stderr.String())
	}

	db := openRun(t, out)
	run, err := db.Run()
	if err != nil {
		t.Fatal(err)
	}
	q := func(expr string) map[string]float64 { return promQuery(t, promURL, expr) }
	for _, lib := range []string{"gorilla", "coder"} {
		want := msgsAt(t, db, lib, 1<<40)
		got := q(fmt.Sprintf(`last_over_time(soak_messages_total{run_id=%q,lib=%q}[1m])`, run.ID, lib))
		if len(got) != 1 || got[lib] != float64(want) {
			t.Errorf("%s: last scraped soak_messages_total %v, the database's count %d", lib, got, want)
		}
		lost := q(fmt.Sprintf(`last_over_time(soak_lost_messages_total{run_id=%q,lib=%q,when="connected"}[1m])`, run.ID, lib))
		if len(lost) != 1 || lost[lib] != 3 {
			t.Errorf("%s: lost while connected %v, want the 3 ids the drop fault skipped", lib, lost)
		}
	}
	// The latency histogram: as many values as the minute digests stored.
	digests := map[string]int64{}
	err = db.EachLatencyDigest(func(x *store.LatencyDigest) error {
		d, err := sampler.DecodeDigest(x.Digest)
		if err == nil {
			digests[x.Lib] += d.Count()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for lib, n := range digests {
		got := q(fmt.Sprintf(`last_over_time(soak_latency_seconds_count{run_id=%q,lib=%q}[1m])`, run.ID, lib))
		if n == 0 || got[lib] != float64(n) {
			t.Errorf("%s: latency histogram count %v, the stored digests' %d", lib, got, n)
		}
	}
	if len(digests) != 2 {
		t.Errorf("digests stored for %v, want both libraries", digests)
	}
	if got := q(fmt.Sprintf(`last_over_time(soak_run_info{run_id=%q,region="test",profile="scrape"}[1m])`, run.ID)); got[""] != 1 {
		t.Errorf("soak_run_info with the run's label: %v", got)
	}
	if got := q(fmt.Sprintf(`last_over_time(soak_run_state{run_id=%q,state=%q}[1m])`, run.ID, wire.StateDone)); got[""] != 1 {
		t.Errorf("final state: soak_run_state{state=done} last scraped %v, want 1", got)
	}
	faults := 0
	evs, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == wire.EventFault && e.Fault == wire.FaultDrop {
			faults++
		}
	}
	got := q(fmt.Sprintf(`sum(last_over_time(soak_faults_total{run_id=%q,kind="drop"}[1m]))`, run.ID))
	if faults == 0 || got[""] != float64(faults) {
		t.Errorf("drop faults: scraped %v, the database's %d", got, faults)
	}
}

// startPrometheus starts Prometheus on a free loopback port with its
// storage in tsdb, and stops it when the test ends, however it ends.
func startPrometheus(t *testing.T, bin, cfg, tsdb string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // free again for Prometheus: a race another listener rarely wins
	var logs lockedBuffer
	p := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+tsdb, "--web.listen-address="+addr,
		"--log.level=warn", "--storage.tsdb.retention.time=1h")
	p.Stdout, p.Stderr = &logs, &logs
	p.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // gone with the test process too
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = p.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = p.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-exited
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		select {
		case <-exited:
			t.Fatalf("prometheus exited:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready in 20 s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// promQuery runs an instant query and returns its values by lib ("" when
// the series has none).
func promQuery(t *testing.T, base, expr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "success" {
		t.Fatalf("query %s: %s", expr, r.Error)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("query %s: value %v", expr, s.Value[1])
		}
		out[s.Metric["lib"]] = v
	}
	return out
}
