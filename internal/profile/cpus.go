package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU is the highest CPU number a CPU list may name (the kernel's
// affinity masks the bench sets hold 1024 CPUs).
const MaxCPU = 1023

// CPUs pins a bench's processes: the server side (the firehose, the chat
// servers) to Server, the client side to Client. Both nil: not pinned.
type CPUs struct {
	Server, Client []int
}

// Pinned tells whether c asks for pinning.
func (c CPUs) Pinned() bool { return c.Server != nil }

// Missing returns the CPUs of c that are not usable (the CPUs this process
// may run on), each once, in c's order: a bench that asks for them is not
// pinned, and says which are missing.
func (c CPUs) Missing(usable map[int]bool) []int {
	var out []int
	for _, n := range append(slices.Clone(c.Server), c.Client...) {
		if !usable[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// String writes c as ParseCPUs reads it ("0:1", "0-1:2-3"), "" when not pinned.
func (c CPUs) String() string {
	if !c.Pinned() {
		return ""
	}
	return cpuListString(c.Server) + ":" + cpuListString(c.Client)
}

// ParseCPUs reads "SERVER:CLIENT", each a taskset-style list such as 0,
// 2-3 or 0,2-3: CPUs 0 to MaxCPU, none twice in one list (a list may share
// CPUs with the other: server and clients on one CPU is a choice).
func ParseCPUs(s string) (CPUs, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return CPUs{}, fmt.Errorf("%q: want SERVER:CLIENT CPU lists, such as 0:1 or 0-1:2-3", s)
	}
	srv, err := cpuList(a)
	var cli []int
	if err == nil {
		cli, err = cpuList(b)
	}
	if err != nil {
		return CPUs{}, fmt.Errorf("%q: %w", s, err)
	}
	return CPUs{Server: srv, Client: cli}, nil
}

// cpuList reads one taskset-style list.
func cpuList(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b > MaxCPU {
			return nil, fmt.Errorf("%q is not a CPU list such as 0, 2-3 or 0,2 (CPUs 0 to %d)", s, MaxCPU)
		}
		for c := a; c <= b; c++ {
			if seen[c] {
				return nil, fmt.Errorf("%q names CPU %d twice", s, c)
			}
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// cpuListString writes cpus as cpuList reads them, runs of consecutive CPUs
// as ranges.
func cpuListString(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
