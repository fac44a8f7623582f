package link

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain plays a test's child role when roleEnv is set; else it runs the
// tests, then checks that they left nothing: no pair of this process here,
// no nft table of the tool in this namespace, no namespace held by a file
// of this process, and fails the suite if they did.
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(playRole(role))
	}
	code := m.Run()
	if err := leaks(); err != nil {
		fmt.Fprintln(os.Stderr, "leak check:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// leaks reports what the tests left behind, waiting a little for the kernel,
// which removes a namespace (and the pair in it) asynchronously.
func leaks() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := leftBehind()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func leftBehind() error {
	var found []string
	mine, err := Mine()
	if err != nil {
		return err
	}
	for _, n := range mine {
		found = append(found, "interface "+n)
	}
	if p, err := toolPath("nft"); err == nil && os.Geteuid() == 0 {
		out, err := exec.Command(p, "list", "tables").CombinedOutput()
		if err != nil {
			return fmt.Errorf("nft list tables: %v: %s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[2] == table {
				found = append(found, "nft "+line)
			}
		}
	}
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return nil // no /proc: nothing of ours to find either
	}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if t, err := os.Readlink(fd); err == nil && strings.HasPrefix(t, "net:[") && t != own {
			found = append(found, "namespace "+t+" held by "+fd)
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("left behind: %s", strings.Join(found, "; "))
	}
	return nil
}
