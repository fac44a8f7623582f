//go:build soak

package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
)

// unprivileged is the user the static binary runs as in the chroot.
const unprivileged = 65534

// TestStaticBinary builds soak with scripts/build.sh (the Dockerfile's and
// CI's build), checks that it is static (no program interpreter, no shared
// libraries) and runs it as an unprivileged user in an otherwise empty root:
// `soak serve` answers on loopback, and a 3 s `soak run` writes its database.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the static binary")
	}
	for _, tool := range []string{"bash", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("scripts/build.sh needs %s, which is not installed here", tool)
		}
	}
	// The image is built by the same script, runs as a non-root user and
	// writes to the /data volume (the Dockerfile is linted by .ci/run).
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RUN scripts/build.sh /out/soak", "FROM scratch", "USER 10001:10001", `VOLUME ["/data"]`,
		`ENTRYPOINT ["/usr/local/bin/soak"]`, `CMD ["run", "-out", "/data"]`} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	bin := filepath.Join(t.TempDir(), "soak")
	build := exec.Command("bash", "../../scripts/build.sh", bin)
	if out, err := build.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "cannot find -lc") || strings.Contains(string(out), "cannot find -lpthread") {
			t.Skipf("no static C library here (Debian: libc6-dev): %s", out)
		}
		t.Fatalf("scripts/build.sh: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter (PT_INTERP): not static", bin)
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a dynamic section", bin)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("shared libraries needed (DT_NEEDED): %v %v", libs, err)
	}
	f.Close()

	if os.Geteuid() != 0 {
		t.Skip("the chroot part needs root (chroot and a /proc mount)")
	}
	// The root: the binary, /tmp, /data for the run, and /proc (the controller
	// finds its own executable and samples its workers there, as in a container).
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"tmp", "data", "proc"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(root, d), 0o777)
	}
	data, _ := os.ReadFile(bin)
	if err := os.WriteFile(filepath.Join(root, "soak"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("proc", filepath.Join(root, "proc"), "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		t.Skipf("cannot mount /proc in the chroot: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(filepath.Join(root, "proc"), syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount proc: %v", err)
		}
	})
	ents, _ := os.ReadDir(root)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	t.Logf("root %s holds only %v", root, names)
	inRoot := func(args ...string) *exec.Cmd {
		cmd := exec.Command("/soak", args...)
		cmd.Path = "/soak"
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/", "HOME=/tmp"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root,
			Credential: &syscall.Credential{Uid: unprivileged, Gid: unprivileged}, Pdeathsig: syscall.SIGKILL}
		return cmd
	}

	// soak serve: the replay server answers on loopback.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	serve := inRoot("serve", "-addr", addr)
	var serveOut strings.Builder
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		t.Fatalf("start in chroot: %v", err)
	}
	defer func() { serve.Process.Kill(); serve.Wait() }()
	var tickers []map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/api/v3/ticker/24hr")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err := json.Unmarshal(body, &tickers); err != nil {
				t.Fatalf("ticker: %v in %q", err, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("soak serve in the chroot does not answer: %v\n%s", err, serveOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(tickers) < 5 {
		t.Errorf("%d tickers from soak serve in the chroot", len(tickers))
	}
	st, err := os.Stat(fmt.Sprintf("/proc/%d", serve.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid != unprivileged {
		t.Errorf("soak serve runs as uid %d, want %d", uid, unprivileged)
	}

	// soak run: the controller re-executes itself as server and worker, and
	// writes SQLite into /data.
	run := inRoot("run", "-duration", "3s", "-libs", "gorilla", "-out", "/data")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("soak run in the chroot: %v\n%s", err, out)
	}
	dbs, _ := filepath.Glob(filepath.Join(root, "data", "*", "soak.db"))
	if len(dbs) != 1 {
		t.Fatalf("databases %v\n%s", dbs, out)
	}
	db, err := store.OpenReadOnly(dbs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, _ := db.Run()
	samples, _ := db.Samples("gorilla")
	var msgs int64
	for _, s := range samples {
		msgs = max(msgs, s.MsgsTotal)
	}
	if r.Status != "done" || len(samples) < 3 || msgs == 0 {
		t.Errorf("run in the chroot: status %q, %d rows, %d messages\n%s", r.Status, len(samples), msgs, out)
	}
	t.Logf("static run in chroot as uid %d: %d rows, %d messages, status %s", unprivileged, len(samples), msgs, r.Status)
}
