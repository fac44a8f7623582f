package profile

import (
	"strings"
	"testing"
)

func TestLabelsParse(t *testing.T) {
	p, err := Parse("profiles/x.yaml", []byte("name: x\nlabels:\n  region: fra\n  instance_type: \"c6i.large\"\n  note: ''\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Labels.String(); got != "instance_type=c6i.large,note=,region=fra" {
		t.Errorf("labels %q", got)
	}
	if p, err := Parse("profiles/x.yaml", []byte("name: x\n")); err != nil || p.Labels != nil {
		t.Errorf("no labels: %v, %v", p.Labels, err)
	}
}

// TestLabelsErrors: each bad labels: mapping fails with its file and line.
func TestLabelsErrors(t *testing.T) {
	many := "labels:\n"
	for i := range MaxLabels + 1 {
		many += "  k" + strings.Repeat("x", i) + ": v\n"
	}
	for _, tt := range []struct{ yaml, want string }{
		{"name: x\nlabels: [a, b]\n", "profiles/x.yaml:2: labels must be a mapping of names to values (region: fra), got a list"},
		{"name: x\nlabels:\n  region: fra\n  region: ams\n", `profiles/x.yaml:4: duplicate key "region" in labels (first at line 3)`},
		{"name: x\nlabels:\n  9lives: x\n", `profiles/x.yaml:3: labels: label name "9lives": want a letter or '_' then letters, digits or '_' (a Prometheus label name)`},
		{"name: x\nlabels:\n  reg-ion: x\n", `profiles/x.yaml:3: labels: label name "reg-ion": want a letter or '_' then letters, digits or '_' (a Prometheus label name)`},
		{"name: x\nlabels:\n  __name__: x\n", `profiles/x.yaml:3: labels: label name "__name__": names beginning with __ are Prometheus' own`},
		{"name: x\nlabels:\n  run_id: x\n", `profiles/x.yaml:3: labels: label name "run_id" is the live view's own (reserved: ` + strings.Join(ReservedLabels, ", ") + ")"},
		{"name: x\nlabels:\n  region: [a]\n", "profiles/x.yaml:3: labels.region must be a single value, got a list"},
		{"name: x\nlabels:\n  region: \"a\\tb\"\n", "profiles/x.yaml:3: labels: label region: the value has a control character"},
		{"name: x\nlabels:\n  region: " + strings.Repeat("a", 129) + "\n", "profiles/x.yaml:3: labels: label region: the value has 129 characters: at most 128"},
		{"name: x\n" + many, "profiles/x.yaml:3: labels has 33 labels: at most 32"},
	} {
		_, err := Parse("profiles/x.yaml", []byte(tt.yaml))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
}

func TestLabelsSet(t *testing.T) {
	var l Labels
	if err := l.Set("region", "fra"); err != nil {
		t.Fatal(err)
	}
	if err := l.Set("region", "ams"); err != nil || l["region"] != "ams" {
		t.Errorf("override: %v %v", l, err)
	}
	if err := l.Set("lib", "x"); err == nil {
		t.Error("reserved name accepted")
	}
	for i := len(l); i < MaxLabels; i++ {
		if err := l.Set("k"+strings.Repeat("x", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Set("one_more", "v"); err == nil {
		t.Errorf("label %d accepted", MaxLabels+1)
	}
	if err := l.Set("region", "again"); err != nil {
		t.Errorf("changing a label at the limit: %v", err)
	}
}
