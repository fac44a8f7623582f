//go:build soak

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/link"
	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestLinkProfiles runs profiles/link.yaml (a rate above the streams' per
// column) and profiles/link-narrow.yaml (below it), each 2 minutes with a
// blackhole, a throttle, an rst and a syn_drop (scripts/link-test.sh): every
// library's blackhole detection, mechanism and lost ids are measured, every
// network fault is recorded for every library, and after each run nothing
// is left: no pair, no namespace, no nft table.
func TestLinkProfiles(t *testing.T) {
	needLinks(t)
	for _, name := range []string{"link", "link-narrow"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if stdout, stderr, err := runSoak(t, "run", "-profile", filepath.Join("..", "..", "profiles", name+".yaml"), "-out", out); err != nil {
				t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			db := openRun(t, out)
			evs, err := db.Events("")
			if err != nil {
				t.Fatal(err)
			}
			faults := map[wire.FaultKind]int{}
			for _, e := range evs {
				if e.Kind == wire.EventFault && e.Lib != "" {
					faults[e.Fault]++
				}
			}
			for _, k := range wire.NetworkFaultKinds {
				if faults[k] != len(wire.Libraries) {
					t.Errorf("%s recorded %d times, want once per library", k, faults[k])
				}
			}
			r, err := measure.Compute(db)
			if err != nil {
				t.Fatal(err)
			}
			for _, lib := range wire.Libraries {
				d := measure.Dims{Lib: lib}
				det, _ := r.Get("blackhole_detect", d)
				mech, _ := r.Get("blackhole_mechanism", d)
				lost, _ := r.Get("blackhole_lost", d)
				if det.Num <= 0 || mech.Text == measure.NotMeasured || lost.Text == measure.NotMeasured {
					t.Errorf("%s: blackhole detected after %q by %q, lost %q; want all three measured", lib, det.Text, mech.Text, lost.Text)
				}
				t.Logf("%s: blackhole detected after %s by %s; ids lost %s", lib, det.Text, mech.Text, lost.Text)
			}
			if err := link.Remaining(10 * time.Second); err != nil {
				t.Error(err)
			}
			for _, c := range [][]string{{"ip", "netns", "list"}, {"nft", "list", "tables"}} {
				b, err := exec.Command(c[0], c[1:]...).CombinedOutput()
				if err != nil || strings.Contains(string(b), "soak") {
					t.Errorf("%s: %q, %v; want nothing of the tool", strings.Join(c, " "), b, err)
				}
			}
		})
	}
}
