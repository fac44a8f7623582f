package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/live"
)

// tool returns the path of name, or skips the test saying what it leaves unchecked.
func tool(t *testing.T, name, pkg, what string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (apt-get install %s): %s not checked", name, pkg, what)
	}
	return p
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestAlertRules: promtool's unit tests of the alert rules pass, and the
// rules read only series the live view serves.
func TestAlertRules(t *testing.T) {
	rules, err := os.ReadFile("prometheus/rules/soak.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	served := live.SeriesNames()
	for _, name := range regexp.MustCompile(`\bsoak_[a-z0-9_]+`).FindAllString(string(rules), -1) {
		if !slices.Contains(served, name) {
			t.Errorf("the rules read %s, which the live view does not serve", name)
		}
	}
	promtool := tool(t, "promtool", "prometheus", "the alert rules")
	out := run(t, promtool, "test", "rules", "prometheus/rules/soak.rules.test.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool test rules: %s", out)
	}
}

// TestScrapeConfigs: the example configurations are valid Prometheus
// configuration (the files they name, a token and a CA, are the user's).
func TestScrapeConfigs(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus", "the scrape configurations")
	run(t, promtool, "check", "config", "--syntax-only", "prometheus/prometheus.yml")
	run(t, promtool, "check", "config", "--syntax-only", "--agent", "prometheus/agent.yml")
}

// TestSystemdUnit: systemd-analyze verify finds nothing to say of the unit
// (its soak binary stood in by one that exists here), and does find a
// mistake: the check is not vacuous.
func TestSystemdUnit(t *testing.T) {
	analyze := tool(t, "systemd-analyze", "systemd", "the systemd unit")
	unit, err := os.ReadFile("systemd/soak.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ExecStart=/usr/local/bin/soak run -dir ", "Restart=on-failure", "RestartPreventExitStatus=2 3 4", "KillSignal=SIGTERM"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit has no %q", want)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	verify := func(text string) string {
		path := filepath.Join(t.TempDir(), "soak.service")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "/usr/local/bin/soak", exe)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(analyze, "verify", path).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	if out := verify(string(unit)); out != "" {
		t.Errorf("systemd-analyze verify: %s", out)
	}
	if out := verify(strings.Replace(string(unit), "Restart=on-failure", "Restart=on-failure\nRestartOnFail=yes", 1)); out == "" {
		t.Error("systemd-analyze verify said nothing of an unknown key")
	}
}
