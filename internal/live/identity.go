package live

import (
	"encoding/json"
	"runtime/debug"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wssoak/wssoak/internal/store"
)

// identity is what soak_run_info says of the run: where it runs and what it
// is, and the user's labels, for group_left joins onto every other series.
type identity struct {
	desc       *prometheus.Desc
	values     []string // in the order of the desc's labels
	start, end time.Time
}

// hostLabels are the host record's entries soak_run_info carries (those
// that tell two machines apart; the rest is in the report).
var hostLabels = []string{"kernel", "cpu_model", "cpu_logical", "arch", "os", "virtualization"}

func newIdentity(r store.Run) *identity {
	names := []string{"run_id", "profile", "target", "version", "go_version"}
	values := []string{r.ID, r.Name, r.Target, Version(), r.GoVersion}
	for _, k := range hostLabels {
		names, values = append(names, k), append(values, r.Host[k])
	}
	user := map[string]string{}
	if s := r.Settings["labels"]; s != "" {
		_ = json.Unmarshal([]byte(s), &user) // written by the controller from checked labels
	}
	keys := make([]string, 0, len(user))
	for k := range user {
		if !slices.Contains(names, k) { // checked when set: never, but a label must not be given twice
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		names, values = append(names, k), append(values, user[k])
	}
	d := prometheus.NewDesc("soak_run_info", "1, labelled with the run's identity (profile, target, soak and Go versions, the host's kernel and CPU) and the user's labels (-label, the profile's labels:).", names, nil)
	return &identity{desc: d, values: values, start: r.Started, end: r.Started.Add(r.Planned)}
}

func (id *identity) metric() prometheus.Metric {
	return prometheus.MustNewConstMetric(id.desc, prometheus.GaugeValue, 1, id.values...)
}

// Version is the soak binary's version: its module version when built from
// a release, else its VCS revision (with "+dirty" for a modified tree), else
// "devel".
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return "devel"
	case len(rev) > 12:
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
