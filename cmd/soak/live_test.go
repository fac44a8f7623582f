package main

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wssoak/wssoak/internal/store"
)

// scrape fetches /metrics and parses it with Prometheus' own text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value returns the value of a family's series for lib ("" = unlabelled), and whether it exists.
func value(fams map[string]*dto.MetricFamily, name, lib string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		got := ""
		for _, l := range m.Label {
			if l.GetName() == "lib" {
				got = l.GetValue()
			}
		}
		if got != lib {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

// lockedBuffer is a bytes.Buffer safe to read while a goroutine writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var liveAddr = regexp.MustCompile(`msg="live view" addr=(127\.0\.0\.1:\d+)`)

// TestLiveMetrics: a real run with -http 127.0.0.1:0. /metrics, scraped
// during the run, parses as Prometheus text; each library's message counter
// equals the database's msgs_total at the second the scrape names
// (soak_run_second), and grows between two scrapes. The progress lines are
// plain lines when stdout is not a terminal.
func TestLiveMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "live.yaml", `name: live
duration: 8s
warmup: 1s
libraries: [gorilla, coder]
symbols: [btcusdt, ethusdt]
replay:
  speed: 5
`)
	out := filepath.Join(dir, "out")
	cmd, addr, stdout, stderr := startLiveRun(t, "-profile", prof, "-out", out, "-http", "127.0.0.1:0", "-linger", "0")
	defer cmd.Process.Kill()
	base := "http://" + addr

	// waitSecond scrapes until the run second reaches at least sec.
	waitSecond := func(sec float64) map[string]*dto.MetricFamily {
		deadline := time.Now().Add(30 * time.Second)
		for {
			fams := scrape(t, base)
			if s, ok := value(fams, "soak_run_second", ""); ok && s >= sec {
				if _, ok := value(fams, "soak_messages_total", "coder"); ok {
					return fams
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("run second %v not reached; stderr:\n%s", sec, stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	first := waitSecond(2)
	// / is the report, rendered from the database during the run.
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	second := waitSecond(value2(first) + 2)

	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	db := openRun(t, out)
	if run, err := db.Run(); err != nil || resp.StatusCode != 200 || !strings.Contains(string(page), run.ID) || !strings.Contains(string(page), "echarts") {
		t.Errorf("/ during the run: %s, %d bytes, run %q (%v); want the report naming the run", resp.Status, len(page), run.ID, err)
	}
	for _, fams := range []map[string]*dto.MetricFamily{first, second} {
		sec := int64(value2(fams))
		for _, lib := range []string{"gorilla", "coder"} {
			got, _ := value(fams, "soak_messages_total", lib)
			want := msgsAt(t, db, lib, sec)
			// Exact: the live view takes a batch only after the database
			// committed it, so at soak_run_second both hold the same rows.
			if got != float64(want) || want == 0 {
				t.Errorf("second %d, %s: soak_messages_total %v, database msgs_total %d", sec, lib, got, want)
			}
			for _, name := range []string{"soak_rss_bytes", "soak_cpu_seconds_total", "soak_bytes_total", "soak_goroutines"} {
				if v, ok := value(fams, name, lib); !ok || v <= 0 {
					t.Errorf("%s{lib=%q} = %v, %v; want > 0", name, lib, v, ok)
				}
			}
			if v, _ := value(fams, "soak_worker_up", lib); v != 1 {
				t.Errorf("soak_worker_up{lib=%q} = %v during the run", lib, v)
			}
			if _, ok := value(fams, "soak_stalls_total", lib); !ok {
				t.Errorf("soak_stalls_total{lib=%q} missing", lib)
			}
		}
	}
	for _, lib := range []string{"gorilla", "coder"} {
		a, _ := value(first, "soak_messages_total", lib)
		b, _ := value(second, "soak_messages_total", lib)
		if b <= a {
			t.Errorf("%s: messages did not grow between scrapes: %v then %v", lib, a, b)
		}
	}
	// Not a terminal: plain progress lines, the last one for the final second.
	o := stdout.String()
	if strings.Contains(o, "\r") || !regexp.MustCompile(`(?m)^\[   8s/8s\] msg/s: gorilla \d+, coder \d+$`).MatchString(o) {
		t.Errorf("progress lines:\n%q", o)
	}
}

func value2(fams map[string]*dto.MetricFamily) float64 {
	v, _ := value(fams, "soak_run_second", "")
	return v
}

// msgsAt is lib's msgs_total in the latest row at or before sec that has the worker half.
func msgsAt(t *testing.T, db *store.DB, lib string, sec int64) int64 {
	t.Helper()
	ss, err := db.Samples(lib)
	if err != nil {
		t.Fatal(err)
	}
	var v int64
	for _, s := range ss {
		if s.Sec <= sec && s.HasWorker {
			v = s.MsgsTotal
		}
	}
	return v
}

func TestLiveRefusesPublicAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "192.0.2.1:80", "example.org:80"} {
		_, _, err := runSoak(t, "run", "-duration", "1s", "-http", addr, "-out", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "-http-public") || exitCode(err, io.Discard) != 2 {
			t.Errorf("-http %s: err %v, want a usage error naming -http-public", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if err := httpFlag.check(addr, false); err != nil {
			t.Errorf("%s refused: %v", addr, err)
		}
	}
	if err := httpFlag.check("0.0.0.0:0", true); err != nil {
		t.Errorf("-http-public did not allow 0.0.0.0: %v", err)
	}
	if err := httpFlag.check("8080", false); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("port alone: %v", err)
	}
}

// TestLiveGuards: the live view as soak run starts it (-http 127.0.0.1:0) answers a
// Host that is not loopback with 421, and the 503 page that reloads itself until the
// run has recorded something.
func TestLiveGuards(t *testing.T) {
	var logs lockedBuffer
	lv, stop, err := startLive(liveSetup{addr: "127.0.0.1:0"}, newLogger(&logs, slog.LevelInfo))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m := liveAddr.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no address logged: %q", logs.String())
	}
	get := func(host string) (int, string) {
		req, err := http.NewRequest("GET", "http://"+m[1]+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Refresh") == "" {
			t.Errorf("503 without Refresh: %q", b)
		}
		return resp.StatusCode, string(b)
	}
	if code, _ := get("rebound.example:" + strings.Split(m[1], ":")[1]); code != http.StatusMisdirectedRequest {
		t.Errorf("Host rebound.example: status %d, want 421", code)
	}
	if code, body := get(m[1]); code != http.StatusServiceUnavailable || !strings.Contains(body, "not started") {
		t.Errorf("before the run: %d %q", code, body)
	}
	dir := t.TempDir()
	lv.RunStarted(dir, filepath.Join(dir, "soak.db"))
	if code, body := get("localhost"); code != http.StatusServiceUnavailable || !strings.Contains(body, "warming up") {
		t.Errorf("warm-up: %d %q", code, body)
	}
}

// startLiveRun starts soak run with args (a -http among them) in a process
// of its own, and returns it once the live view's address is logged, with
// what it printed so far and prints on. The caller waits for it or kills it.
func startLiveRun(t *testing.T, args ...string) (cmd *exec.Cmd, addr string, stdout, stderr *lockedBuffer) {
	t.Helper()
	cmd = exec.Command(os.Args[0], append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout = stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			stderr.Write([]byte(sc.Text() + "\n"))
			if m := liveAddr.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, errPipe)
	}()
	select {
	case addr = <-found:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no live view address logged; stderr:\n%s", stderr.String())
	}
	return cmd, addr, stdout, stderr
}
