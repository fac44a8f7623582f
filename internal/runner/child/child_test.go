package child

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// roleEnv makes the test binary a child of the tests: the role it plays.
const roleEnv = "CHILD_TEST_ROLE"

type spec struct {
	Word string `json:"word"`
	N    int    `json:"n"`
}

// TestMain plays a child's role when roleEnv is set.
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(playRole(role))
	}
	os.Exit(m.Run())
}

// playRole is a child of the tests; its exit code is what the test expects.
func playRole(role string) int {
	signal.Ignore(syscall.SIGINT)
	switch role {
	case "echo": // the spec back, then a line per command, until stdin ends: exit 3
		var s spec
		rest, err := ReadSpec(os.Stdin, &s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		w := NewWriter(os.Stdout)
		_ = w.Write(s)
		for {
			line, err := rest.ReadString('\n')
			if err != nil {
				return 3
			}
			_ = w.Write(spec{Word: strings.TrimSpace(line)})
		}
	case "deaf": // ignores stdin's end and SIGTERM: only a kill ends it
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("up")
		time.Sleep(time.Hour)
	case "term": // ends on SIGTERM alone
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		fmt.Println("up")
		<-sigs
		return 0
	case "spin": // burns CPU, then answers once
		var s spec
		if _, err := ReadSpec(os.Stdin, &s); err != nil {
			return 1
		}
		end := time.Now().Add(time.Duration(s.N) * time.Millisecond)
		x := 0
		for time.Now().Before(end) {
			x++
		}
		_ = NewWriter(os.Stdout).Write(spec{Word: "spun", N: x % 2})
		return 0
	case "flood": // much on stderr, nothing on stdout
		line := strings.Repeat("x", 1023) + "\n"
		for range 200 {
			os.Stderr.WriteString(line)
		}
		os.Stderr.WriteString("the last words\n")
		return 1
	case "group": // a grandchild in its group, whose pid it prints
		gc := exec.Command("sleep", "3600")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(gc.Process.Pid)
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "netns": // its network namespace, its interfaces, and whether the spec's file was there when the spec came
		var s spec
		if _, err := ReadSpec(os.Stdin, &s); err != nil {
			return 1
		}
		ns, _ := os.Readlink("/proc/self/ns/net")
		ifs, _ := net.Interfaces()
		var names []string
		for _, i := range ifs {
			names = append(names, i.Name)
		}
		_, err := os.Stat(s.Word)
		fmt.Println(ns, strings.Join(names, ","), err == nil)
		return 0
	case "parent": // starts a deaf child, prints its pid, and dies without stopping it
		os.Setenv(roleEnv, "deaf")
		p, err := Start(Options{Name: "orphan", Exe: os.Args[0], Args: []string{"-test.run=^$"}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := p.ReadLine(context.Background(), 10*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(p.Pid())
		return 0
	}
	return 2
}

// self is Options for the test binary in role.
func self(t *testing.T, role string) Options {
	t.Helper()
	t.Setenv(roleEnv, role)
	return Options{Name: role + " child", Exe: os.Args[0], Args: []string{"-test.run=^$"}}
}

// TestSpecAndLines: the spec goes in as one JSON line, JSON lines come back,
// commands on stdin reach the child, closing stdin ends it, and its exit
// code, rusage and log file are there after.
func TestSpecAndLines(t *testing.T) {
	o := self(t, "echo")
	o.Spec = spec{Word: "hello", N: 7}
	o.Log = filepath.Join(t.TempDir(), "echo.log")
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send("again"); err != nil {
		t.Fatal(err)
	}
	var got []spec
	done := make(chan error, 1)
	go func() { done <- Each(p, func(s spec) { got = append(got, s) }) }()
	time.Sleep(100 * time.Millisecond)
	p.CloseStdin()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if len(got) != 2 || got[0] != (spec{"hello", 7}) || got[1].Word != "again" {
		t.Errorf("lines %+v; want the spec back, then the command", got)
	}
	if code := p.ExitCode(); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if _, _, ok := p.Rusage(); !ok {
		t.Error("no rusage after exit")
	}
	if fi, err := os.Stat(o.Log); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file: %v, %v; want it private (0600)", fi, err)
	}
	if err := p.Send("late"); err == nil {
		t.Error("Send after the exit succeeded")
	}
}

// TestStop: a child that ends on stdin's end stops at once; one that ends on
// its stop signal alone stops with it; a deaf one is killed after the grace,
// not before.
func TestStop(t *testing.T) {
	tests := []struct {
		role    string
		signal  syscall.Signal
		killed  bool
		maxTime time.Duration
	}{
		{"echo", 0, false, 5 * time.Second},
		{"term", syscall.SIGTERM, false, 5 * time.Second},
		{"deaf", syscall.SIGTERM, true, 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.role, func(t *testing.T) {
			o := self(t, tc.role)
			o.StopSignal = tc.signal
			if tc.role == "echo" {
				o.Spec = spec{}
			}
			p, err := Start(o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.ReadLine(context.Background(), 10*time.Second); err != nil {
				t.Fatal(err)
			}
			p.DiscardOut()
			grace := 2 * time.Second
			if !tc.killed {
				grace = 30 * time.Second
			}
			t0 := time.Now()
			p.Stop(grace)
			took := time.Since(t0)
			if killed := p.ExitCode() == -1; killed != tc.killed {
				t.Errorf("exit code %d (%v); killed %v, want %v", p.ExitCode(), p.Err(), killed, tc.killed)
			}
			if tc.killed && took < grace {
				t.Errorf("killed after %s, before the grace of %s", took, grace)
			}
			if took > tc.maxTime {
				t.Errorf("Stop took %s", took)
			}
		})
	}
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// waitGone waits until pid is no longer alive.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) still alive 10 s later", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKillTakesTheGroup: a kill ends the child's whole process group (its
// own children too), so that nothing it started outlives a stop.
func TestKillTakesTheGroup(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	p, err := Start(self(t, "group"))
	if err != nil {
		t.Fatal(err)
	}
	line, err := p.ReadLine(context.Background(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := strconv.Atoi(string(line))
	if err != nil || !alive(gc) {
		t.Fatalf("grandchild %q: %v, alive %v", line, err, alive(gc))
	}
	p.DiscardOut()
	p.Kill()
	<-p.Done()
	waitGone(t, gc, "the grandchild")
}

// TestOrphanDies: a child whose parent dies without stopping it is killed
// by the kernel (the parent-death signal), even one that ignores its stdin.
func TestOrphanDies(t *testing.T) {
	t.Setenv(roleEnv, "parent")
	out, err := exec.Command(os.Args[0], "-test.run=^$").Output()
	if err != nil {
		t.Fatalf("parent: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("parent printed %q", out)
	}
	waitGone(t, pid, "the orphaned child")
}

// TestRun: the one-shot form returns the child's one JSON answer, with the
// kernel's CPU account spent; a child that answers nothing is an error
// naming it and quoting the end of its stderr (bounded); a child past its
// timeout is killed.
func TestRun(t *testing.T) {
	o := self(t, "spin")
	o.Spec = spec{N: 200}
	var got spec
	if err := Run(context.Background(), o, time.Minute, &got); err != nil || got.Word != "spun" {
		t.Fatalf("spin: %+v, %v", got, err)
	}

	o = self(t, "flood")
	err := Run(context.Background(), o, time.Minute, &got)
	if err == nil || !strings.Contains(err.Error(), "flood child process") || !strings.HasSuffix(err.Error(), "the last words") {
		t.Errorf("flood: %v; want an error naming the child and ending with its last words", err)
	} else if n := len(err.Error()); n > stderrTail+200 {
		t.Errorf("flood: an error of %d bytes; stderr is kept to %d", n, stderrTail)
	}

	o = self(t, "deaf")
	t0 := time.Now()
	err = Run(context.Background(), o, 500*time.Millisecond, &got)
	if err == nil || time.Since(t0) > 10*time.Second {
		t.Errorf("deaf: %v after %s; want an error once the timeout killed it", err, time.Since(t0))
	}
}

// TestReadLineTimeout: a child that prints nothing within the timeout is
// killed, and the error says so.
func TestReadLineTimeout(t *testing.T) {
	o := self(t, "echo") // waits for its spec, printing nothing
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.ReadLine(context.Background(), 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "nothing within 300ms") {
		t.Errorf("ReadLine: %v", err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the child was not killed")
	}
}

// TestNewNet: a child started with NewNet is in a network namespace of its
// own (only a loopback interface), and Setup runs before its spec is
// written; a Setup that fails kills the child, and Start says why.
func TestNewNet(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a network namespace of its own needs root")
	}
	marker := filepath.Join(t.TempDir(), "set-up")
	o := self(t, "netns")
	o.NewNet, o.Spec = true, spec{Word: marker}
	var setupPid int
	o.Setup = func(pid int) error {
		setupPid = pid
		return os.WriteFile(marker, nil, 0o600)
	}
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	line, err := p.ReadLine(context.Background(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	own, _ := os.Readlink("/proc/self/ns/net")
	f := strings.Fields(string(line))
	if len(f) != 3 || f[0] == own || f[1] != "lo" || f[2] != "true" || setupPid != p.Pid() {
		t.Errorf("child said %q (ours %s), setup for pid %d of %d; want another namespace, only lo, the marker there before the spec", line, own, setupPid, p.Pid())
	}

	failed := 0
	o.Setup = func(pid int) error {
		failed = pid
		return errors.New("no link")
	}
	_, err = Start(o)
	if err == nil || !strings.Contains(err.Error(), "set up netns child: no link") || failed == 0 {
		t.Fatalf("Start with a failing Setup: %v", err)
	}
	waitGone(t, failed, "the child whose setup failed")
}

// TestStartFails: a program that cannot start is an error naming the child.
func TestStartFails(t *testing.T) {
	_, err := Start(Options{Name: "ghost", Exe: filepath.Join(t.TempDir(), "none")})
	if err == nil || !strings.Contains(err.Error(), "start ghost") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start: %v", err)
	}
}
