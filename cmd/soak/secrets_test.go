package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMistypedProxyPasswordHidden: a mistyped proxy URL in a profile is an error naming the
// profile line and the proxy, and its password appears nowhere: not in the error line, not
// in what the command printed, not in a file. -worker-timeout 1s (refused) makes sure no
// run starts should a form be accepted.
func TestMistypedProxyPasswordHidden(t *testing.T) {
	const pass = "Zs3cretQ"
	for _, raw := range []string{
		"http//user:" + pass + "@host",
		"user:" + pass + "@host",
		"socks5:/user:" + pass + "@host",
		"socks5://user:p w" + pass + "@host",
		"http://user:pa%zz" + pass + "@host",
		"://u:" + pass + "@h",
		`http:\\u:` + pass + "@h",
		"socks5://u:" + pass + "\n@h",
		"socks5://u:\n" + pass + "@h:1080",
		"socks5://h:1080/u:" + pass + "@x",
		"ftp://u:" + pass + "@h",
		"socks4://id:" + pass + "@h",
	} {
		dir := t.TempDir()
		prof := writeProfile(t, dir, "p.yaml", "name: x\nduration: 5s\nproxy: "+strconv.Quote(raw)+"\n")
		out := filepath.Join(dir, "out")
		stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out, "-worker-timeout", "1s")
		var line bytes.Buffer
		code := exitCode(err, &line)
		if code != 1 || strings.Count(line.String(), "\n") != 1 || !strings.HasPrefix(line.String(), "soak: "+prof+":3: ") || !strings.Contains(line.String(), "proxy URL") {
			t.Errorf("proxy %q: exit %d, error %q; want exit 1 and one line naming %s:3 and the proxy URL", raw, code, line.String(), prof)
		}
		for what, s := range map[string]string{"error line": line.String(), "stdout": stdout, "stderr": stderr} {
			if strings.Contains(s, pass) {
				t.Errorf("proxy %q: the password is in the %s: %q", raw, what, s)
			}
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("proxy %q: a run directory was made: %v", raw, entries)
		}
	}
}
