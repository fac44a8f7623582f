package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/transport/proxytest"
	"github.com/wssoak/wssoak/internal/wire"
)

var allLibs = wire.Libraries // the profiles name none: every library runs

// The password of the test proxies: '@' must travel percent-encoded in the profile.
const (
	proxyPass    = "s3cret-p@ss"
	proxyPassEnc = "s3cret-p%40ss"
)

const netProfile = `name: net
duration: 3s
warmup: 2s
symbols: [btcusdt, ethusdt]
keepalive:
  interval: 1s
  timeout: 5s
replay:
  seed: 11
  speed: 10
  ping_interval: 1s
`

// TestRunTLSAndProxies runs real soaks of all the libraries against the local replay
// server over wss:// (a throwaway CA made in the run directory, which the workers trust):
// directly, through an HTTPS proxy (TLS to the proxy, then the target's TLS inside the
// tunnel) and through a SOCKS5 proxy over ws://. Every subscription's count equals the
// server's, nothing errs, every connection went through the proxy, and the proxy's
// password appears nowhere: not in the database, the logs, stdout or stderr.
func TestRunTLSAndProxies(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	t.Parallel()
	proxyCA, err := cert.New(time.Hour, cert.LocalHosts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, kind string
		tls        bool
	}{
		{"wss", "", true},
		{"wss-via-https-proxy", "https", true},
		{"ws-via-socks5-proxy", "socks5", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			text := netProfile
			if tc.tls {
				text += "  tls: true\n"
			}
			var px *proxytest.Server
			if tc.kind != "" {
				px, err = proxytest.Start(tc.kind, "soak", proxyPass, proxyCA.ServerTLS())
				if err != nil {
					t.Fatal(err)
				}
				defer px.Close()
				if err := os.WriteFile(filepath.Join(dir, "proxy-ca.pem"), proxyCA.CAPEM, 0o600); err != nil {
					t.Fatal(err)
				}
				text += "proxy: " + px.URL() + "\ntls:\n  ca: proxy-ca.pem\n"
				if !strings.Contains(text, proxyPassEnc) {
					t.Fatalf("the proxy URL does not percent-encode the password: %s", px.URL())
				}
			}
			prof := writeProfile(t, dir, "net.yaml", text)
			out := filepath.Join(dir, "out")
			stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out, "-v")
			if err != nil {
				t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			db := openRun(t, out)
			checkServerCounts(t, db, allLibs)
			checkNoErrorEvents(t, db)
			run, err := db.Run()
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "wss://", false: "ws://"}[tc.tls]; !strings.HasPrefix(run.Target, want) {
				t.Errorf("target %q, want %s...", run.Target, want)
			}
			if px != nil {
				// One tunnel per slot and library, none refused: every connection went through it.
				slots := countEvents(t, db, "connected")
				if got := px.TunnelsTotal(); got != slots || slots < len(allLibs) {
					t.Errorf("proxy opened %d tunnels for %d connections", got, slots)
				}
				if st := px.Stats(); st.Rejected != 0 {
					t.Errorf("proxy rejected %d handshakes", st.Rejected)
				}
				if !strings.Contains(run.ProfileText, "soak:****@") {
					t.Errorf("stored profile text does not show the masked proxy:\n%s", run.ProfileText)
				}
			}
			checkNoSecret(t, out, stdout, stderr)
		})
	}
}

// TestRunProxyRejected: a proxy that refuses the credentials fails every dial; each slot
// keeps retrying with backoff, every failure is a dial_error event naming the cause, no
// worker dies, and the run ends normally with the password masked everywhere.
func TestRunProxyRejected(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	px, err := proxytest.Start("socks5", "soak", "the-right-one", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "rejected.yaml", `name: rejected
duration: 3s
warmup: 1s
symbols: [btcusdt]
reconnect: {min: 100ms, max: 400ms}
proxy: `+px.URLWith("soak", proxyPass)+"\n")
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	db := openRun(t, out)
	run, err := db.Run()
	if err != nil || run.Status != "done" {
		t.Fatalf("run %+v (%v), want status done", run, err)
	}
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	fails := map[string]map[int]int{} // lib -> slot -> dial errors
	for _, e := range events {
		switch e.Kind {
		case wire.EventDialError:
			if !strings.Contains(e.Detail, "socks5: the proxy rejected the credentials of user \"soak\"") ||
				!strings.Contains(e.Detail, "proxy socks5://soak:****@"+px.Addr()) {
				t.Errorf("%s dial_error detail %q lacks the cause or the masked proxy", e.Lib, e.Detail)
			}
			if fails[e.Lib] == nil {
				fails[e.Lib] = map[int]int{}
			}
			fails[e.Lib][e.Slot]++
		case wire.EventConnected, wire.EventWorkerExit, wire.EventWorkerHung:
			t.Errorf("unexpected %s event: %+v", e.Kind, e)
		}
	}
	slots := 0
	for _, lib := range allLibs {
		if len(fails[lib]) == 0 {
			t.Errorf("%s: no dial_error recorded", lib)
		}
		for slot, n := range fails[lib] {
			slots++
			// 4 s of dials with 100–400 ms backoff: many, but bounded by the backoff.
			if n < 4 || n > 45 {
				t.Errorf("%s slot %d: %d failed dials in 4 s, want a retrying slot with backoff", lib, slot, n)
			}
		}
	}
	if got := px.Stats().Rejected; got < 4*slots {
		t.Errorf("proxy saw %d rejected handshakes for %d slots", got, slots)
	}
	checkNoSecret(t, out, stdout, stderr)
}

// TestRunProxyUnreachable: a proxy nobody listens on stops the run at once with one error
// line naming the proxy, password masked; no run directory is made.
func TestRunProxyUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	for _, target := range []string{"local", "wss://stream.example.invalid:9443"} {
		prof := writeProfile(t, dir, "dead.yaml", "name: dead\nduration: 5s\ntarget: "+target+"\nproxy: socks5://soak:"+proxyPassEnc+"@"+dead+"\n")
		out := filepath.Join(dir, "out")
		_, _, err := runSoak(t, "run", "-profile", prof, "-out", out)
		var stderr bytes.Buffer
		if code := exitCode(err, &stderr); code != 1 {
			t.Errorf("%s: exit code %d, want 1", target, code)
		}
		want := regexp.MustCompile(`^soak: proxy socks5://soak:\*\*\*\*@` + regexp.QuoteMeta(dead) + ` unreachable: .*connection refused\n$`)
		if !want.MatchString(stderr.String()) {
			t.Errorf("%s: error %q, want %s", target, stderr.String(), want)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("%s: an unreachable proxy left run directories: %v", target, entries)
		}
	}
}

// TestRunBadCAFile: an unreadable or invalid CA file is one error line naming the
// profile line.
func TestRunBadCAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junk.pem"), []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"missing.pem": `:4: tls.ca: read ca file: open .*missing.pem: no such file or directory`,
		"junk.pem":    `:4: tls.ca: read ca file .*junk.pem: no PEM certificate in it`,
	} {
		prof := writeProfile(t, dir, "ca.yaml", "name: ca\nduration: 5s\ntls:\n  ca: "+file+"\n")
		_, _, err := runSoak(t, "run", "-profile", prof, "-out", filepath.Join(dir, "out"))
		if err == nil || !regexp.MustCompile(regexp.QuoteMeta(prof)+want).MatchString(err.Error()) {
			t.Errorf("%s: got %v, want %s", file, err, want)
		}
	}
}

func countEvents(t *testing.T, db *store.DB, kind wire.EventKind) int {
	t.Helper()
	n := 0
	for _, e := range mustEvents(t, db) {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// checkNoSecret asserts that the proxy password, plain or percent-encoded, is in no file
// of the run (database, WAL, logs) and not on stdout or stderr.
func checkNoSecret(t *testing.T, out, stdout, stderr string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, secret := range []string{proxyPass, proxyPassEnc} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds the proxy password %q", path, secret)
			}
		}
		return nil
	})
	if err != nil || files < 3 {
		t.Fatalf("walk %s: %v (%d files)", out, err, files)
	}
	for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
		for _, secret := range []string{proxyPass, proxyPassEnc} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the proxy password %q", name, secret)
			}
		}
	}
}

// TestRunRemoteWSS: `soak serve -cert -key` serves wss:// with a certificate for a name
// that resolves nowhere (replay.test); `soak run` reaches it as a remote target by IP with
// the CA in the profile (tls.ca) and tls.server_name naming the certificate. All the
// libraries receive data with no error; without the CA every dial is refused by
// certificate verification, recorded as dial_error, and the run still ends normally.
func TestRunRemoteWSS(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	t.Parallel()
	dir := t.TempDir()
	ca, err := cert.New(time.Hour, "replay.test")
	if err != nil {
		t.Fatal(err)
	}
	files, err := ca.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "serve", "-addr", "127.0.0.1:0", "-speed", "10", "-cert", files.Cert, "-key", files.Key)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(pipe).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(line) // replay server listening on wss://127.0.0.1:PORT (stats: https://...)
	if len(f) < 7 || !strings.HasPrefix(f[4], "wss://127.0.0.1:") || !strings.HasPrefix(f[6], "https://") {
		t.Fatalf("unexpected first line %q", line)
	}
	base := "name: remote\nduration: 3s\nwarmup: 1s\ntarget: " + f[4] + "\nsymbols: [btcusdt]\n"

	prof := writeProfile(t, dir, "remote.yaml", base+"tls:\n  ca: ca.pem\n  server_name: replay.test\n")
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	db := openRun(t, out)
	checkNoErrorEvents(t, db)
	streams, err := db.LatestStreamSamples()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range streams {
		if s.MsgsTotal > 0 {
			got[s.Lib]++
		}
	}
	for _, lib := range allLibs {
		if got[lib] == 0 || got[lib] != got[allLibs[0]] {
			t.Errorf("%s: %d subscriptions with data (gorilla %d)", lib, got[lib], got[allLibs[0]])
		}
	}

	prof = writeProfile(t, dir, "untrusted.yaml", strings.Replace(base, "duration: 3s", "duration: 1s", 1)+
		"libraries: [gorilla, coder]\ntls:\n  server_name: replay.test\n")
	out = filepath.Join(dir, "out-untrusted")
	if _, _, err := runSoak(t, "run", "-profile", prof, "-out", out); err != nil {
		t.Fatalf("run without the CA: %v", err)
	}
	db = openRun(t, out)
	fails := 0
	for _, e := range mustEvents(t, db) {
		switch e.Kind {
		case wire.EventDialError:
			fails++
			if !strings.Contains(e.Detail, "certificate signed by unknown authority") {
				t.Errorf("%s dial_error %q: want the certificate refused", e.Lib, e.Detail)
			}
		case wire.EventConnected:
			t.Errorf("%s connected to a server whose certificate it cannot verify", e.Lib)
		}
	}
	if fails < 2 {
		t.Errorf("%d dial errors, want every dial refused", fails)
	}
}

func mustEvents(t *testing.T, db *store.DB) []store.Event {
	t.Helper()
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	return events
}
