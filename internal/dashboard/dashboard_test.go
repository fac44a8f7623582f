package dashboard

//lint:file-ignore SA1019 the v1 dashboard schema is the one every Grafana imports (v2 needs Grafana 12's new dashboards API); the SDK marks it deprecated in favour of v2

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/wssoak/wssoak/internal/live"
)

var update = flag.Bool("update", false, "rewrite deploy/grafana/soak.json (as go generate does)")

const checkedIn = "../../deploy/grafana/soak.json"

// TestCheckedIn: deploy/grafana/soak.json is what Build makes (go generate
// ./internal/dashboard, or this test with -update, writes it).
func TestCheckedIn(t *testing.T) {
	want, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(checkedIn, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the generated dashboard: run go generate ./internal/dashboard", checkedIn)
	}
}

// decode reads the checked-in file strictly, as Grafana's schema says
// (refusing a field it does not know, or a required one missing), then
// validates it. In v0.0.22 the strict decoder has two quirks: it returns
// an empty error list as a non-nil error (no error: its length counts), and,
// by the same, a panel that decoded without error is dropped from the
// result (left empty); so the dashboard validated and returned is the one
// the plain decoder reads, panels and all.
func decode(t *testing.T) dashboard.Dashboard {
	t.Helper()
	raw, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	if err := strict(raw); !noErrors(err) {
		t.Fatalf("strict decode of %s: %v", checkedIn, err)
	}
	var d dashboard.Dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); !noErrors(err) {
		t.Fatalf("%s does not validate: %v", checkedIn, err)
	}
	return d
}

func strict(raw []byte) error {
	plugins.RegisterDefaultPlugins() // the panels' and queries' own types
	var d dashboard.Dashboard
	return d.UnmarshalJSONStrict(raw)
}

func noErrors(err error) bool {
	var be cog.BuildErrors
	if errors.As(err, &be) {
		return len(be) == 0
	}
	return err == nil
}

// TestStrictDecode: the checked-in file decodes strictly and validates, and
// holds the variables and panels it is for.
func TestStrictDecode(t *testing.T) {
	d := decode(t)
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	if !slices.Equal(vars, []string{"datasource", "host", "run", "lib"}) {
		t.Errorf("variables %v", vars)
	}
	if n := len(Exprs(d)); n < 15 {
		t.Errorf("%d expressions; want every panel's", n)
	}
	// The strict decoder is strict: a misspelt field fails it, in the
	// dashboard, a panel or a query.
	raw, _ := os.ReadFile(checkedIn)
	for _, field := range []string{`"refresh"`, `"gridPos"`, `"legendFormat"`} {
		if err := strict(bytes.Replace(raw, []byte(field), []byte(`"x`+field[1:]), 1)); noErrors(err) {
			t.Errorf("%s misspelt: decoded strictly", field)
		}
	}
}

// TestExprSeries: every series a dashboard expression reads is one the live
// view serves.
func TestExprSeries(t *testing.T) {
	served := live.SeriesNames()
	re := regexp.MustCompile(`\bsoak_[a-z0-9_]+`)
	for _, e := range Exprs(decode(t)) {
		for _, name := range re.FindAllString(e, -1) {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
			if !slices.Contains(served, name) && !slices.Contains(served, base) {
				t.Errorf("%s reads %s, which the live view does not serve", e, name)
			}
		}
	}
}

// TestExprsPromtool: every expression, its variables substituted, is valid
// PromQL to Prometheus' own checker: each is wrapped as a recording rule and
// the file checked by promtool check rules (Debian's prometheus package;
// .ci/run installs it).
func TestExprsPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus): the dashboard's PromQL is not checked")
	}
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	exprs := Exprs(decode(t))
	for i, e := range exprs {
		fmt.Fprintf(&b, "      - record: soak_dashboard:expr_%d\n        expr: %q\n", i, e)
	}
	path := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(exprs)); !strings.Contains(string(out), want) {
		t.Errorf("promtool says %q, want %q", out, want)
	}
	// And the checker does refuse a broken expression: the check is not vacuous.
	bad := filepath.Join(t.TempDir(), "bad.rules.yml")
	os.WriteFile(bad, []byte("groups:\n  - name: d\n    rules:\n      - record: x:y\n        expr: 'rate(soak_messages_total[$__rate_interval])'\n"), 0o644)
	if err := exec.Command(promtool, "check", "rules", bad).Run(); err == nil {
		t.Error("promtool accepted an expression with $__rate_interval left in")
	}
}
