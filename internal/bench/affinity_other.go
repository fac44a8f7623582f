//go:build !linux

package bench

import "os/exec"

func startPinned(cmd *exec.Cmd, _ []int) error { return cmd.Start() }

func UsableCPUs() map[int]bool { return map[int]bool{} }
