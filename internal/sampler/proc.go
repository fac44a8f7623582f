// Package sampler samples processes and the host, and keeps latency
// histograms. Process figures (RSS, CPU seconds) come from /proc/<pid> so a
// controller can measure each worker from outside; Rusage measures the
// calling process itself.
package sampler

import (
	"fmt"

	"github.com/shirou/gopsutil/v4/process"
)

// Proc samples one process by pid.
type Proc struct {
	pid int
	p   *process.Process
}

// NewProc returns a sampler for the process pid. It fails if no such process exists.
func NewProc(pid int) (*Proc, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, fmt.Errorf("open process %d: %w", pid, err)
	}
	return &Proc{pid: pid, p: p}, nil
}

// ProcSample is one reading of a process.
type ProcSample struct {
	RSS             uint64  // resident set, bytes
	CPUUser, CPUSys float64 // cumulative CPU seconds since the process started
	FDs, Threads    int32   // open file descriptors and threads; -1 if unreadable
}

// Sample reads the process's RSS and CPU times (from /proc/<pid>/statm and
// /proc/<pid>/stat on Linux, in clock ticks of 10 ms) and, best effort, its
// file descriptor and thread counts.
func (p *Proc) Sample() (ProcSample, error) {
	var s ProcSample
	mi, err := p.p.MemoryInfo()
	if err != nil {
		return s, fmt.Errorf("read memory of process %d: %w", p.pid, err)
	}
	t, err := p.p.Times()
	if err != nil {
		return s, fmt.Errorf("read cpu times of process %d: %w", p.pid, err)
	}
	s.RSS, s.CPUUser, s.CPUSys = mi.RSS, t.User, t.System
	s.FDs, s.Threads = -1, -1
	if n, err := p.p.NumFDs(); err == nil {
		s.FDs = n
	}
	if n, err := p.p.NumThreads(); err == nil {
		s.Threads = n
	}
	return s, nil
}
