//go:build !linux

package child

import (
	"errors"
	"os/exec"
	"syscall"
)

// sysProcAttr puts the child in a process group of its own; without
// Linux's parent-death signal, a child ends when its stdin closes.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// newNetwork refuses: network namespaces are Linux's alone.
func newNetwork(*syscall.SysProcAttr) error {
	return errors.New("a network namespace of its own needs Linux")
}

// startPinned starts cmd; pinning is Linux's alone.
func startPinned(cmd *exec.Cmd, _ []int) error { return cmd.Start() }

// UsableCPUs returns no CPU: pinning is Linux's alone.
func UsableCPUs() map[int]bool { return map[int]bool{} }
