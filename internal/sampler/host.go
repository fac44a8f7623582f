package sampler

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"
)

// HostSample is one reading of the host. Percentages are of all CPUs
// together (0-100) over the interval since the previous Sample.
type HostSample struct {
	Load1, Load5, Load15 float64
	CPUPct               float64 // busy: everything but idle and iowait
	StealPct             float64 // taken by the hypervisor for other guests
	IOWaitPct            float64
	MemTotal             uint64 // bytes
	MemAvailable         uint64 // bytes the kernel estimates can be allocated without swapping
	MemUsed              uint64 // MemTotal - MemAvailable
}

// Host samples the host. It remembers the CPU counters of the previous
// Sample; it is not safe for concurrent use.
type Host struct {
	prev cpu.TimesStat
}

// NewHost returns a host sampler. Its first Sample reports CPU percentages
// since boot.
func NewHost() *Host { return &Host{} }

// Sample reads load averages, memory and the CPU time split since the
// previous call.
func (h *Host) Sample() (HostSample, error) {
	var s HostSample
	la, err := load.Avg()
	if err != nil {
		return s, fmt.Errorf("read load average: %w", err)
	}
	vm, err := mem.VirtualMemory()
	if err != nil {
		return s, fmt.Errorf("read memory: %w", err)
	}
	ts, err := cpu.Times(false)
	if err != nil {
		return s, fmt.Errorf("read cpu times: %w", err)
	}
	if len(ts) == 0 {
		return s, errors.New("read cpu times: no total")
	}
	s.Load1, s.Load5, s.Load15 = la.Load1, la.Load5, la.Load15
	s.MemTotal, s.MemAvailable = vm.Total, vm.Available
	if vm.Available < vm.Total {
		s.MemUsed = vm.Total - vm.Available
	}
	cur := ts[0]
	s.CPUPct, s.StealPct, s.IOWaitPct = cpuSplit(h.prev, cur)
	h.prev = cur
	return s, nil
}

// cpuSplit returns busy, steal and iowait percentages of the time between two
// readings of the CPU counters. Guest time is already part of user time in
// /proc/stat and is not added again.
func cpuSplit(a, b cpu.TimesStat) (busy, steal, iowait float64) {
	total := func(t cpu.TimesStat) float64 {
		return t.User + t.Nice + t.System + t.Idle + t.Iowait + t.Irq + t.Softirq + t.Steal
	}
	dt := total(b) - total(a)
	if dt <= 0 {
		return 0, 0, 0
	}
	idle := (b.Idle - a.Idle) + (b.Iowait - a.Iowait)
	pct := func(x float64) float64 { return min(max(100*x/dt, 0), 100) }
	return pct(dt - idle), pct(b.Steal - a.Steal), pct(b.Iowait - a.Iowait)
}

// sysctls are the network buffer settings recorded with a run, by key.
var sysctls = []struct{ key, path string }{
	{"tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem"},
	{"rmem_max", "/proc/sys/net/core/rmem_max"},
	{"rmem_default", "/proc/sys/net/core/rmem_default"},
	// what a number measured on this host depends on: the clock source
	// (tsc reads in ~20 ns, kvm-clock and hpet far slower) and the CPU
	// frequency governor (absent on most VMs)
	{"clocksource", "/sys/devices/system/clocksource/clocksource0/current_clocksource"},
	{"cpu_governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"},
}

// HostInfo describes the host for a run's environment: cpu_model,
// cpu_logical, cpu_physical, kernel, arch, os, virtualization, mem_total,
// load_at_start (the 1, 5 and 15 minute load averages) and, where readable,
// the receive-buffer sysctls tcp_rmem, rmem_max and rmem_default, the
// clocksource and cpu_governor, and the clock's sync state at the start
// (ClockSync.HostInfo). The CPU time stolen by the hypervisor is in every
// host sample (HostSample.StealPct).
// The host name and host id are deliberately left out. A value that cannot be
// read is omitted; the error joins those failures (sysctls and clock
// excepted) and the map holds everything else even when the error is not nil.
func HostInfo() (map[string]string, error) {
	info := make(map[string]string)
	var errs []error
	if ci, err := cpu.Info(); err != nil {
		errs = append(errs, fmt.Errorf("read cpu info: %w", err))
	} else if len(ci) > 0 {
		info["cpu_model"] = ci[0].ModelName
	}
	if n, err := cpu.Counts(true); err != nil {
		errs = append(errs, fmt.Errorf("count logical cpus: %w", err))
	} else {
		info["cpu_logical"] = strconv.Itoa(n)
	}
	if n, err := cpu.Counts(false); err == nil && n > 0 {
		info["cpu_physical"] = strconv.Itoa(n) // often unknown in containers and VMs
	}
	if v, err := host.KernelVersion(); err != nil {
		errs = append(errs, fmt.Errorf("read kernel version: %w", err))
	} else {
		info["kernel"] = v
	}
	if v, err := host.KernelArch(); err != nil {
		errs = append(errs, fmt.Errorf("read kernel arch: %w", err))
	} else {
		info["arch"] = v
	}
	if platform, _, version, err := host.PlatformInformation(); err != nil {
		errs = append(errs, fmt.Errorf("read platform: %w", err))
	} else {
		info["os"] = strings.TrimSpace(platform + " " + version)
	}
	if system, role, err := host.Virtualization(); err == nil && system != "" {
		info["virtualization"] = strings.TrimSpace(system + " " + role)
	}
	if vm, err := mem.VirtualMemory(); err != nil {
		errs = append(errs, fmt.Errorf("read memory: %w", err))
	} else {
		info["mem_total"] = strconv.FormatUint(vm.Total, 10)
	}
	if la, err := load.Avg(); err != nil {
		errs = append(errs, fmt.Errorf("read load average: %w", err))
	} else {
		info["load_at_start"] = fmt.Sprintf("%.2f %.2f %.2f", la.Load1, la.Load5, la.Load15)
	}
	for _, sc := range sysctls {
		if b, err := os.ReadFile(sc.path); err == nil {
			info[sc.key] = strings.Join(strings.Fields(string(b)), " ")
		}
	}
	if c, err := ReadClock(); err == nil {
		maps.Copy(info, c.HostInfo())
	}
	return info, errors.Join(errs...)
}
