package sampler

import (
	"bufio"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"
)

const (
	helperEnv   = "WSSOAK_TEST_HELPER_BURN"
	helperAlloc = 50 << 20
	helperBurn  = 0.6  // CPU seconds
	clockTick   = 0.01 // seconds; /proc/<pid>/stat counts CPU time in 100 Hz ticks
)

var sink uint64

// burn spins on one goroutine for d of wall time.
func burn(d time.Duration) {
	var x uint64
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink += x
}

// TestHelperBurnCPU is not a test: it is the child process of TestProcSample.
// It holds 50 MB resident, burns 0.6 s of CPU (by its own getrusage, so a busy
// machine does not shorten it) and says "ready". On the next line from stdin
// it returns the memory to the kernel, which would otherwise spend system time
// unmapping it at exit, after the parent's last sample, says "idle" and waits
// for stdin to close.
func TestHelperBurnCPU(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process")
	}
	buf := make([]byte, helperAlloc)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1 // make every page resident
	}
	for {
		u, s, _ := Rusage()
		if u+s >= helperBurn {
			break
		}
		burn(10 * time.Millisecond)
	}
	in := bufio.NewReader(os.Stdin)
	os.Stdout.WriteString("ready\n")
	_, _ = in.ReadString('\n')
	runtime.KeepAlive(buf)
	buf = nil
	debug.FreeOSMemory()
	os.Stdout.WriteString("idle\n")
	_, _ = io.Copy(io.Discard, in)
}

func TestProcSample(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBurnCPU$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewReader(stdout)
	expect := func(want string) {
		t.Helper()
		if line, err := out.ReadString('\n'); err != nil || line != want+"\n" {
			t.Fatalf("helper said %q, %v; want %q", line, err, want)
		}
	}
	expect("ready")
	p, err := NewProc(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	held, err := p.Sample()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "release\n")
	expect("idle")
	s, err := p.Sample()
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	go io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}

	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	kUser := float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
	kSys := float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
	t.Logf("holding: rss %d MB fds %d threads %d; before exit: user %.3fs sys %.3fs; kernel at exit: user %.3fs sys %.3fs",
		held.RSS>>20, held.FDs, held.Threads, s.CPUUser, s.CPUSys, kUser, kSys)

	if got, want := s.CPUUser+s.CPUSys, kUser+kSys; math.Abs(got-want) > max(0.05*want, 2*clockTick) {
		t.Errorf("sampled CPU %.3fs, kernel rusage %.3fs: differ by more than 5%% or 2 ticks", got, want)
	}
	if got, want := s.CPUUser, kUser; math.Abs(got-want) > max(0.05*want, 2*clockTick) {
		t.Errorf("sampled user CPU %.3fs, kernel rusage %.3fs", got, want)
	}
	if s.CPUUser+s.CPUSys < helperBurn-2*clockTick {
		t.Errorf("sampled CPU %.3fs, the helper burned %vs", s.CPUUser+s.CPUSys, helperBurn)
	}
	if held.RSS < helperAlloc {
		t.Errorf("RSS %d bytes, want at least the %d allocated", held.RSS, helperAlloc)
	}
	if held.FDs < 3 || held.Threads < 1 {
		t.Errorf("FDs %d, threads %d: want at least stdin/stdout/stderr and one thread", held.FDs, held.Threads)
	}
}

func TestNewProcMissing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewProc(cmd.Process.Pid); err == nil {
		t.Errorf("NewProc of an exited, reaped process succeeded")
	}
}

// TestRusage compares getrusage of this process with its /proc reading,
// taken right after one another.
func TestRusage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	u0, _, _ := Rusage()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if u, _, _ := Rusage(); u-u0 >= 0.1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("user CPU did not grow by 0.1 s in 10 s of spinning")
		}
		burn(10 * time.Millisecond)
	}
	u1, s1, maxRSS := Rusage()
	p, err := NewProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ps, err := p.Sample()
	if err != nil {
		t.Fatal(err)
	}
	u2, s2, _ := Rusage()
	// The /proc reading lies between the two getrusage calls, give or take
	// its 10 ms resolution.
	if got := ps.CPUUser + ps.CPUSys; got < u1+s1-2*clockTick || got > u2+s2+2*clockTick {
		t.Errorf("/proc CPU %.3fs outside getrusage %.3fs .. %.3fs", got, u1+s1, u2+s2)
	}
	if maxRSS < int64(ps.RSS)/2 || maxRSS < 1<<20 {
		t.Errorf("max RSS %d bytes, current RSS %d", maxRSS, ps.RSS)
	}
}
