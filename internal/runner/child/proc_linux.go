package child

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the child in a process group of its own (a stop kills
// the group; a terminal's Ctrl-C does not reach it) and has the kernel kill
// it when the parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// newNetwork has the child start in a network namespace of its own.
func newNetwork(a *syscall.SysProcAttr) error {
	a.Cloneflags |= syscall.CLONE_NEWNET
	return nil
}

// startPinned starts cmd with its CPU affinity set to cpus (none: as this
// process's). The mask is set on the thread that forks, which the child
// inherits for all of its threads, and restored after.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity %v: %w", cpus, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("restore affinity: %w", rerr)
	}
	return err
}

// UsableCPUs returns the CPUs this process may run on.
func UsableCPUs() map[int]bool {
	var set unix.CPUSet
	out := map[int]bool{}
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return out
	}
	for c := range 1024 {
		if set.IsSet(c) {
			out[c] = true
		}
	}
	return out
}
