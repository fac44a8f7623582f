package link

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// cmdTimeout bounds every ip, tc and nft the link runs.
const cmdTimeout = 10 * time.Second

// tools are the programs a link runs, by name; Tools finds them.
var tools = []string{"ip", "tc", "nft"}

// toolPath finds a program on PATH, or in the sbin directories a non-root
// PATH often lacks.
func toolPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		if p, err := exec.LookPath(dir + "/" + name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// run runs a tool with args, in the calling thread's network namespace.
func run(name string, args ...string) error { return runStdin(name, "", args...) }

// runStdin runs a tool with stdin as its input; an error is one line: the
// command and what it said.
func runStdin(name, stdin string, args ...string) error {
	path, err := toolPath(name)
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return &cmdError{cmd: name + " " + strings.Join(args, " "), err: err, out: oneLine(out.String())}
	}
	return nil
}

// cmdError is a tool that failed: the command, how it ended and what it
// said.
type cmdError struct {
	cmd, out string
	err      error
}

func (e *cmdError) Error() string { return fmt.Sprintf("link: %s: %v: %s", e.cmd, e.err, e.out) }

func (e *cmdError) Unwrap() error { return e.err }

// runBatch runs a tool once over a list of commands (ip -batch, tc -batch),
// so that they take effect together.
func runBatch(name string, cmds [][]string) error {
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(strings.Join(c, " "))
		b.WriteByte('\n')
	}
	return runStdin(name, b.String(), "-batch", "-")
}

// oneLine is a tool's output as one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
