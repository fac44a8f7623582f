package controller

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/rundir"
)

// child is a process of the run: the replay server or a worker. It gets its
// configuration as the first line of stdin, and exits when stdin closes, so
// children never outlive a controller that died.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	log   *os.File
	done  chan struct{} // closed after Wait returned
	err   error         // Wait's result, valid after done
}

func startChild(name, exe string, args []string, config []byte, logPath string) (*child, error) {
	lf, err := rundir.OpenAppend(logPath) // a resumed run appends
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s stdin: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s stdout: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 256*1024), log: lf, done: make(chan struct{})}
	if _, err := stdin.Write(append(config, '\n')); err != nil {
		c.kill()
		return nil, fmt.Errorf("send config to %s: %w", name, err)
	}
	return c, nil
}

// wait reaps the process once its stdout reached EOF; call it in a goroutine after reading stdout to EOF.
func (c *child) wait() {
	c.err = c.cmd.Wait()
	c.log.Close()
	close(c.done)
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// send writes a command line to the child's stdin.
func (c *child) send(line string) error {
	_, err := io.WriteString(c.stdin, line+"\n")
	return err
}

// closeStdin asks the child to exit.
func (c *child) closeStdin() { _ = c.stdin.Close() }

// stop closes stdin and waits up to d before killing the process group.
func (c *child) stop(d time.Duration) {
	c.closeStdin()
	select {
	case <-c.done:
	case <-time.After(d):
		c.kill()
		<-c.done
	}
}

func (c *child) kill() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
}

// rusage is the kernel's account of the child's CPU seconds, valid after done.
func (c *child) rusage() (user, sys float64, ok bool) {
	if c.cmd.ProcessState == nil {
		return 0, 0, false
	}
	ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, false
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime), tv(ru.Stime), true
}
