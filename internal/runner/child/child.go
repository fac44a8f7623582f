// Package child is the one launcher of the processes the tool starts: the
// run's replay server, workers and server-side load, the bench's firehose
// and clients, the chat servers and loads. A child gets its spec as one JSON
// line on stdin, answers in lines on stdout, and writes its log to stderr
// (a file, or the last 64 KiB kept in memory). It runs in a process group of
// its own (a terminal's Ctrl-C reaches the parent alone, which decides) and
// is killed by the kernel when its parent dies, so that no child outlives
// the process that started it. The child's side is ReadSpec and Writer.
package child

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/rundir"
)

// Options describe a child process.
type Options struct {
	Name string   // what errors call it: "worker gorilla", "replay server"
	Exe  string   // the program
	Args []string // its arguments
	// Env is added to this process's environment for the child (a later
	// entry wins over an earlier one of the same name).
	Env []string
	// Spec, when not nil, is written on stdin as one JSON line before Start
	// returns.
	Spec any
	// CPUs pins the child to these CPUs (its threads inherit the mask); nil:
	// as this process.
	CPUs []int
	// Log is the file stderr is appended to (created private, 0600); "":
	// the last stderrTail bytes are kept for Process.Stderr.
	Log string
	// StopSignal is sent by Stop besides closing stdin, for a child that
	// does not read stdin (a chat server ends on SIGTERM); 0: closing stdin
	// alone asks it to end.
	StopSignal syscall.Signal
	// NewNet starts the child in a network namespace of its own (Linux's
	// CLONE_NEWNET; root only), empty but for a loopback interface that is
	// down. The namespace is the child's: the kernel removes it, with every
	// interface, qdisc and nft table in it, when the child ends.
	NewNet bool
	// Setup, when set, runs after the child started and before its spec is
	// written (the child waits for its spec): for what must be ready before
	// the child reads it, such as its network namespace's link. An error
	// kills the child, and Start returns it.
	Setup func(pid int) error
}

// stderrTail is how much of a child's stderr is kept when it has no log file.
const stderrTail = 64 << 10

// Process is a running child.
type Process struct {
	o         Options
	cmd       *exec.Cmd
	stdin     *os.File
	out       *bufio.Reader // stdout
	outFile   *os.File
	log       *os.File
	tail      *tail
	closeIn   sync.Once
	closeOut  sync.Once
	done      chan struct{} // closed once the process was reaped
	err       error         // Wait's result, valid after done
	startedAt time.Time
}

// Start starts a child and writes its spec. Its stdout must be read to its
// end (Out, ReadLine, Each or DiscardOut): the child blocks on a full pipe,
// and the pipe is released at the end.
func Start(o Options) (*Process, error) {
	p := &Process{o: o, done: make(chan struct{})}
	cmd := exec.Command(o.Exe, o.Args...)
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.SysProcAttr = sysProcAttr()
	// A grandchild that keeps stderr open must not hold up the reaping.
	cmd.WaitDelay = 5 * time.Second
	if o.Log != "" {
		lf, err := rundir.OpenAppend(o.Log) // a resumed run appends
		if err != nil {
			return nil, fmt.Errorf("open %s log: %w", o.Name, err)
		}
		p.log, cmd.Stderr = lf, lf
	} else {
		p.tail = &tail{}
		cmd.Stderr = p.tail
	}
	// Pipes of our own, not cmd's: Wait then reaps the process as soon as it
	// exits, while its last lines on stdout can still be read after.
	inR, inW, err := os.Pipe()
	if err != nil {
		p.closeLog()
		return nil, fmt.Errorf("%s stdin: %w", o.Name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		p.closeLog()
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("%s stdout: %w", o.Name, err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if o.NewNet {
		err = newNetwork(cmd.SysProcAttr)
	}
	if err == nil {
		err = startPinned(cmd, o.CPUs)
	}
	inR.Close() // the child's ends
	outW.Close()
	if err != nil {
		p.closeLog()
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start %s: %w", o.Name, err)
	}
	p.cmd, p.stdin, p.outFile, p.startedAt = cmd, inW, outR, time.Now()
	p.out = bufio.NewReaderSize(&releasing{p}, 256<<10)
	go p.wait()
	if o.Setup != nil {
		if err := o.Setup(p.Pid()); err != nil {
			p.Kill()
			p.DiscardOut()
			<-p.done
			return nil, fmt.Errorf("set up %s: %w", o.Name, err)
		}
	}
	if o.Spec != nil {
		line, err := json.Marshal(o.Spec)
		if err == nil {
			_, err = p.stdin.Write(append(line, '\n'))
		}
		if err != nil {
			p.Kill()
			p.DiscardOut()
			<-p.done
			return nil, fmt.Errorf("send spec to %s: %w", o.Name, err)
		}
	}
	return p, nil
}

// wait reaps the process.
func (p *Process) wait() {
	p.err = p.cmd.Wait()
	p.CloseStdin() // the child is gone: a later Send fails at once
	p.closeLog()
	close(p.done)
}

func (p *Process) closeLog() {
	if p.log != nil {
		p.log.Close()
	}
}

// releasing reads the child's stdout and releases the pipe at its end.
type releasing struct{ p *Process }

func (r *releasing) Read(b []byte) (int, error) {
	n, err := r.p.outFile.Read(b)
	if err != nil {
		r.p.closeOut.Do(func() { r.p.outFile.Close() })
	}
	return n, err
}

// Name is the child's name, as Options gave it.
func (p *Process) Name() string { return p.o.Name }

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath is the file its stderr goes to ("" when kept in memory).
func (p *Process) LogPath() string { return p.o.Log }

// Out is the child's stdout.
func (p *Process) Out() *bufio.Reader { return p.out }

// Done is closed once the child has exited and was reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the child ended (exec.Cmd.Wait's error), valid after Done.
func (p *Process) Err() error { return p.err }

// ExitCode is the child's exit code, valid after Done; -1 when it was
// killed by a signal or has not exited.
func (p *Process) ExitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Rusage is the kernel's account of the child's CPU seconds, valid after Done.
func (p *Process) Rusage() (user, sys float64, ok bool) {
	if p.cmd.ProcessState == nil {
		return 0, 0, false
	}
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, false
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime), tv(ru.Stime), true
}

// Stderr is the end of what the child wrote on stderr, when it has no log
// file; valid after Done.
func (p *Process) Stderr() string {
	if p.tail == nil {
		return ""
	}
	return p.tail.String()
}

// Send writes a command line to the child's stdin.
func (p *Process) Send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// CloseStdin asks the child to end: every child of the tool ends when its
// stdin closes.
func (p *Process) CloseStdin() { p.closeIn.Do(func() { p.stdin.Close() }) }

// Kill kills the child's process group at once.
func (p *Process) Kill() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

// Stop ends the child: it closes stdin (and sends the StopSignal, if any),
// waits up to grace for the child to exit, then kills its process group and
// waits for it.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	p.CloseStdin()
	if p.o.StopSignal != 0 {
		_ = p.cmd.Process.Signal(p.o.StopSignal)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.Kill()
		<-p.done
	}
}

// DiscardOut reads the rest of the child's stdout and drops it, in the
// background: for a child whose later lines nobody needs.
func (p *Process) DiscardOut() {
	go func() { _, _ = io.Copy(io.Discard, p.out) }()
}

// maxLine bounds one line read from a child's stdout.
const maxLine = 1 << 20

// ReadLine reads the child's next line on stdout (without its newline),
// within timeout and while ctx lasts: a server's address or ready line. When
// it does not come in time, the child is killed and the rest of stdout
// dropped.
func (p *Process) ReadLine(ctx context.Context, timeout time.Duration) ([]byte, error) {
	type got struct {
		line []byte
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		line, err := readLine(p.out)
		ch <- got{line, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case g := <-ch:
		if g.err == nil {
			return g.line, nil
		}
		err = g.err
		p.Kill()
	case <-t.C:
		err = fmt.Errorf("nothing within %s", timeout)
		p.Kill()
		<-ch // the read ends at the killed child's EOF; one reader at a time
	case <-ctx.Done():
		err = ctx.Err()
		p.Kill()
		<-ch
	}
	p.DiscardOut()
	if err == io.EOF {
		err = errors.New("exited before its first line")
	}
	return nil, fmt.Errorf("%s: %w%s", p.o.Name, err, p.stderrNote())
}

// stderrNote is ": " and the end of the child's stderr, once it exited, when
// it has no log file.
func (p *Process) stderrNote() string {
	select {
	case <-p.done:
	case <-time.After(time.Second):
		return ""
	}
	if s := p.Stderr(); s != "" {
		return ": " + s
	}
	return ""
}

// readLine reads one line of at most maxLine bytes, without its newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case len(line) > maxLine:
			return nil, fmt.Errorf("a line longer than %d bytes", maxLine)
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil // the last line, without a newline
		default:
			return nil, err
		}
	}
}

// Each reads the child's stdout to its end, one JSON value a line, and hands
// each to fn, decoded into a fresh T. A line that does not decode is passed
// over (a stray line does not end the child's account); a line longer than
// 1 MiB ends the reading with an error, the rest of stdout dropped.
func Each[T any](p *Process, fn func(T)) error {
	for {
		line, err := readLine(p.out)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			p.DiscardOut()
			return fmt.Errorf("%s stdout: %w", p.o.Name, err)
		}
		var v T
		if json.Unmarshal(line, &v) == nil {
			fn(v)
		}
	}
}

// maxResult bounds the output of a one-shot child.
const maxResult = 16 << 20

// Run is the one-shot form: it starts a child with its spec on stdin (then
// closes stdin), reads its stdout to the end and decodes it, one JSON value,
// into out. The child's process group is killed when ctx ends or timeout
// passes. An error names the child and carries the end of its stderr.
func Run(ctx context.Context, o Options, timeout time.Duration, out any) error {
	p, err := Start(o)
	if err != nil {
		return err
	}
	p.CloseStdin()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, p.Kill)
	defer stop()
	b, rerr := io.ReadAll(io.LimitReader(p.out, maxResult+1))
	if len(b) > maxResult {
		p.Kill()
		p.DiscardOut()
		rerr = fmt.Errorf("more than %d bytes on stdout", maxResult)
	}
	<-p.done
	if rerr == nil {
		rerr = json.Unmarshal(bytes.TrimSpace(b), out)
	}
	if rerr != nil {
		return fmt.Errorf("%s process: %v (exit: %v): %s", o.Name, rerr, p.err, p.Stderr())
	}
	return nil
}

// tail keeps the last stderrTail bytes written to it.
type tail struct {
	mu   sync.Mutex
	b    []byte
	lost bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - stderrTail; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
		t.lost = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(bytes.TrimSpace(t.b))
	if t.lost {
		s = "…" + s
	}
	return s
}
