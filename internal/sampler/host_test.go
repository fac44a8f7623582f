package sampler

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
)

func TestHostSample(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	h := NewHost()
	if _, err := h.Sample(); err != nil {
		t.Fatal(err)
	}
	burn(300 * time.Millisecond) // one core busy for the interval
	s, err := h.Sample()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", s)
	n, err := cpu.Counts(true)
	if err != nil {
		t.Fatal(err)
	}
	if floor := 100 / float64(n) / 2; s.CPUPct < floor || s.CPUPct > 100 {
		t.Errorf("CPU %.1f%% while one of %d cpus was busy: want %.1f .. 100", s.CPUPct, n, floor)
	}
	for name, v := range map[string]float64{"steal": s.StealPct, "iowait": s.IOWaitPct, "load1": s.Load1} {
		if v < 0 || name != "load1" && v > 100 {
			t.Errorf("%s = %v", name, v)
		}
	}
	if s.MemTotal == 0 || s.MemAvailable > s.MemTotal || s.MemUsed != s.MemTotal-s.MemAvailable {
		t.Errorf("memory total %d available %d used %d", s.MemTotal, s.MemAvailable, s.MemUsed)
	}
}

func TestCPUSplit(t *testing.T) {
	tests := []struct {
		name                string
		a, b                cpu.TimesStat
		busy, steal, iowait float64
	}{
		{"half busy", cpu.TimesStat{}, cpu.TimesStat{User: 3, System: 1, Idle: 4}, 50, 0, 0},
		{"steal and iowait", cpu.TimesStat{User: 10, Idle: 10}, cpu.TimesStat{User: 12, Idle: 15, Iowait: 1, Steal: 2}, 40, 20, 10},
		{"guest is inside user", cpu.TimesStat{}, cpu.TimesStat{User: 1, Guest: 1, Idle: 1}, 50, 0, 0},
		{"no time passed", cpu.TimesStat{User: 1}, cpu.TimesStat{User: 1}, 0, 0, 0},
		{"counters went back", cpu.TimesStat{User: 5}, cpu.TimesStat{User: 1}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy, steal, iowait := cpuSplit(tt.a, tt.b)
			if busy != tt.busy || steal != tt.steal || iowait != tt.iowait {
				t.Errorf("got %v %v %v, want %v %v %v", busy, steal, iowait, tt.busy, tt.steal, tt.iowait)
			}
		})
	}
}

func TestHostInfo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	info, err := HostInfo()
	if err != nil {
		t.Logf("partial: %v", err)
	}
	t.Logf("%v", info)
	for _, k := range []string{"cpu_logical", "kernel", "arch", "mem_total"} {
		if info[k] == "" {
			t.Errorf("%s missing", k)
		}
	}
	if _, err := os.Stat("/proc/sys/net/ipv4/tcp_rmem"); err == nil && len(strings.Fields(info["tcp_rmem"])) != 3 {
		t.Errorf("tcp_rmem = %q, want three numbers", info["tcp_rmem"])
	}
	// against the kernel's own files, read here independently
	if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil && info["clocksource"] != strings.TrimSpace(string(b)) {
		t.Errorf("clocksource = %q, the kernel says %q", info["clocksource"], strings.TrimSpace(string(b)))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if la := strings.Fields(info["load_at_start"]); len(la) != 3 || la[0] == "" || len(strings.Fields(string(b))) < 3 {
			t.Errorf("load_at_start = %q, want three load averages (/proc/loadavg: %q)", info["load_at_start"], b)
		}
	}
	// A value names the host when one of its words is the host's name: a
	// substring is not enough (a host called "vm" is in "kvm-clock").
	hostname, _ := os.Hostname()
	for k, v := range info {
		if strings.Contains(strings.ToLower(k), "host") {
			t.Errorf("key %s names the host", k)
		}
		for _, word := range strings.Fields(v) {
			if hostname != "" && (word == hostname || strings.HasPrefix(word, hostname+".")) {
				t.Errorf("%s = %q names the host", k, v)
			}
		}
	}
}
