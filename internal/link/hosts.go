package link

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// namePrefix begins the name of the pair's end on this side: soak<pid>-<n>
// (and its peer's, soak<pid>-<n>p, until it moves), at most 15 bytes.
const namePrefix = "soak"

// lockHosts takes the machine-wide lock under which links choose their
// subnets and sweep leftovers, so that two processes never take one subnet.
// The lock is a file's flock: the kernel lets go of it when its holder dies.
func lockHosts() (unlock func(), err error) {
	dir := "/run/lock"
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = os.TempDir()
	}
	f, err := os.OpenFile(filepath.Join(dir, "wssoak-link.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("link: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("link: lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// ownerOf is the pid in a link's name, and whether name is one.
func ownerOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, false
	}
	rest = strings.TrimSuffix(rest, "p")
	pid, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(pid)
	if _, nerr := strconv.Atoi(n); err != nil || nerr != nil || p <= 0 {
		return 0, false
	}
	return p, true
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Leftovers are the names of the links here whose process is gone: a run
// killed before it could close its link (its namespace then still held by a
// process of its own that outlived it).
func Leftovers() ([]string, error) { return named(func(pid int) bool { return !alive(pid) }) }

// Mine are the names of the links here of this process.
func Mine() ([]string, error) { return named(func(pid int) bool { return pid == os.Getpid() }) }

// named are the names of the links here whose owner's pid keep accepts.
func named(keep func(pid int) bool) ([]string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("link: interfaces: %w", err)
	}
	var out []string
	for _, i := range ifs {
		if pid, ok := ownerOf(i.Name); ok && keep(pid) {
			out = append(out, i.Name)
		}
	}
	return out, nil
}

// sweep deletes the leftovers (deleting one end of a pair deletes both).
func sweep() error {
	names, err := Leftovers()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		errs = append(errs, deleteLink(n))
	}
	return errors.Join(errs...)
}

// freeSubnet returns a /26 of Range that no address here is in, trying from
// the one numbered from (so that processes starting together rarely try the
// same first).
func freeSubnet(from int) (netip.Prefix, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("link: addresses: %w", err)
	}
	used := map[netip.Prefix]bool{}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if ip = ip.Unmap(); ok && Range.Contains(ip) {
			p, _ := ip.Prefix(subnetBits)
			used[p] = true
		}
	}
	n := 1 << (subnetBits - Range.Bits())
	base := Range.Addr().As4()
	first := binary.BigEndian.Uint32(base[:])
	for i := range n {
		idx := (from%n + n + i) % n
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], first+uint32(idx)<<(32-subnetBits))
		p := netip.PrefixFrom(netip.AddrFrom4(a), subnetBits)
		if !used[p] {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("link: no free /%d left in %s", subnetBits, Range)
}

// Remaining reports what this process's links left behind, for a test
// suite's end: a pair of this process here, an nft table of the tool in
// this namespace, a namespace held by a file of this process. The kernel
// removes a namespace (and the pair in it) asynchronously: it waits up to
// wait for them to go.
func Remaining(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := leftBehind()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func leftBehind() error {
	var found []string
	mine, err := Mine()
	if err != nil {
		return err
	}
	for _, n := range mine {
		found = append(found, "interface "+n)
	}
	if p, err := toolPath("nft"); err == nil && os.Geteuid() == 0 {
		out, err := exec.Command(p, "list", "tables").CombinedOutput()
		if err != nil {
			return fmt.Errorf("nft list tables: %v: %s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[2] == table {
				found = append(found, "nft "+line)
			}
		}
	}
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return nil // no /proc: nothing of ours to find either
	}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if t, err := os.Readlink(fd); err == nil && strings.HasPrefix(t, "net:[") && t != own {
			found = append(found, "namespace "+t+" held by "+fd)
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("left behind: %s", strings.Join(found, "; "))
	}
	return nil
}
