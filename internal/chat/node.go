package chat

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// NodeLib is the foreign reference server: the same room on Node's ws
// package (reference/node-ws/chat-server.mjs), run when node and the package
// (npm ci in that folder) are there.
const NodeLib = "node-ws"

// NodeDir is the Node server's folder, relative to the repository root.
const NodeDir = "reference/node-ws"

// NodeServer returns the node binary and the server script under root (a
// repository checkout), or why the reference server cannot run.
func NodeServer(root string) (node, script string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", errors.New("node is not installed")
	}
	dir := filepath.Join(root, NodeDir)
	script = filepath.Join(dir, "chat-server.mjs")
	if _, err := os.Stat(script); err != nil {
		return "", "", fmt.Errorf("no %s: run from the repository root", filepath.Join(NodeDir, "chat-server.mjs"))
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws", "package.json")); err != nil {
		return "", "", fmt.Errorf("the ws package is not installed: run npm ci in %s", NodeDir)
	}
	return node, script, nil
}
