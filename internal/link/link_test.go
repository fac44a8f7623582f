package link

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/wire"
)

// roleEnv makes the test binary a child of the tests: the role it plays.
const roleEnv = "LINK_TEST_ROLE"

// playRole is a child of the tests.
func playRole(role string) int {
	switch role {
	case "sleeper": // sits in its namespace until stdin ends
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "linker": // a link to a sleeper in a namespace of its own; prints the pair's name, then waits to be killed
		os.Setenv(roleEnv, "sleeper")
		l, err := Reserve(wire.Link{On: true, Rate: 10e6}, 2)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		p, err := child.Start(child.Options{Name: "sleeper", Exe: os.Args[0], Args: []string{"-test.run=^$"}, NewNet: true,
			Setup: func(pid int) error { return l.Attach(fmt.Sprintf("/proc/%d/ns/net", pid)) }})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		p.DiscardOut()
		fmt.Println(l.Host())
		time.Sleep(time.Minute)
		return 0
	}
	return 2
}

// needLinks skips a test where links cannot be made (not root, no
// namespaces, no ip, tc or nft), saying why.
func needLinks(t *testing.T) {
	t.Helper()
	if err := Check(wire.Link{}); err != nil {
		t.Skip(err)
	}
}

// newLink is a link attached to a namespace of this process, with a server
// listening in it: what it accepts goes to accepted. Closed at the test's end.
func newLink(t *testing.T, cfg wire.Link, columns int) (*Link, net.Listener, chan net.Conn) {
	t.Helper()
	needLinks(t)
	cfg.On = true
	l, ln, err := Open(cfg, columns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	accepted := make(chan net.Conn, 16)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	return l, ln, accepted
}

// dialFrom dials the server from column col's address (-1: the host's
// address, left to the kernel), within timeout.
func dialFrom(l *Link, ln net.Listener, col int, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if col >= 0 {
		d.LocalAddr = &net.TCPAddr{IP: l.ColumnAddr(col).AsSlice()}
	}
	return d.Dial("tcp", ln.Addr().String())
}

// pair dials from col and returns both ends.
func pair(t *testing.T, l *Link, ln net.Listener, accepted chan net.Conn, col int) (client, server net.Conn) {
	t.Helper()
	c, err := dialFrom(l, ln, col, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	select {
	case s := <-accepted:
		t.Cleanup(func() { s.Close() })
		return c, s
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted")
	}
	return nil, nil
}

// TestAddresses: the link's addresses are in the benchmarking range, in
// one /26, distinct; its pair's end here is named for this process and has
// the host's and every column's address.
func TestAddresses(t *testing.T) {
	needLinks(t)
	l, err := Reserve(wire.Link{On: true}, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	seen := map[netip.Addr]bool{}
	all := []netip.Addr{l.HostAddr(), l.ServerAddr()}
	for i := range 5 {
		all = append(all, l.ColumnAddr(i))
	}
	for _, a := range all {
		if !Range.Contains(a) || !l.prefix.Contains(a) || seen[a] {
			t.Errorf("address %s: in range %v, in %s %v, seen %v", a, Range.Contains(a), l.prefix, l.prefix.Contains(a), seen[a])
		}
		seen[a] = true
	}
	if pid, ok := ownerOf(l.Host()); !ok || pid != os.Getpid() || len(l.Host()) > 15 {
		t.Errorf("pair named %q: owner %d %v", l.Host(), pid, ok)
	}
	ifc, err := net.InterfaceByName(l.Host())
	if err != nil {
		t.Fatal(err)
	}
	addrs, _ := ifc.Addrs()
	var got []string
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			got = append(got, ipn.String())
		}
	}
	if len(got) != 6 || got[0] != netip.PrefixFrom(l.HostAddr(), subnetBits).String() {
		t.Errorf("addresses on %s: %v; want the host's first, then 5 columns'", l.Host(), got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.InterfaceByName(l.Host()); err == nil {
		t.Errorf("%s still here after Close", l.Host())
	}
}

// TestTwoLinksTwoSubnets: links made together take different subnets.
func TestTwoLinksTwoSubnets(t *testing.T) {
	needLinks(t)
	var ls []*Link
	for range 3 {
		l, err := Reserve(wire.Link{On: true}, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ls = append(ls, l)
	}
	if ls[0].prefix == ls[1].prefix || ls[1].prefix == ls[2].prefix || ls[0].prefix == ls[2].prefix {
		t.Errorf("subnets %s %s %s: want three", ls[0].prefix, ls[1].prefix, ls[2].prefix)
	}
}

// throughput reads from c for settle (what the socket and the bucket held
// from before: not counted), then for d, and returns bits per second of the
// second part.
func throughput(t *testing.T, c net.Conn, settle, d time.Duration) float64 {
	t.Helper()
	buf := make([]byte, 64<<10)
	read := func(d time.Duration) int64 {
		var n int64
		c.SetReadDeadline(time.Now().Add(d))
		for {
			k, err := c.Read(buf)
			n += int64(k)
			if err != nil {
				return n
			}
		}
	}
	read(settle)
	t0 := time.Now()
	n := read(d)
	return float64(n*8) / time.Since(t0).Seconds()
}

// flood writes to c until it fails (the test closes it).
func flood(c net.Conn) {
	go func() {
		buf := bytes.Repeat([]byte("x"), 32<<10)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
}

// TestRatePerColumn: each column gets the link's rate, in a class of its own
// (two columns at once each get it whole, not half), and the host's own
// traffic is not shaped at all.
func TestRatePerColumn(t *testing.T) {
	const rate = 4e6
	l, ln, acc := newLink(t, wire.Link{Rate: rate}, 2)
	c0, s0 := pair(t, l, ln, acc, 0)
	c1, s1 := pair(t, l, ln, acc, 1)
	ch, sh := pair(t, l, ln, acc, -1)
	flood(s0)
	flood(s1)
	flood(sh)
	var got [3]float64
	var wg sync.WaitGroup
	for i, c := range []net.Conn{c0, c1, ch} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = throughput(t, c, 500*time.Millisecond, 2*time.Second)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if got[i] < 0.8*rate || got[i] > 1.2*rate {
			t.Errorf("column %d: %.2f Mbit/s; want the link's %.0f Mbit/s ±20 %%", i, got[i]/1e6, rate/1e6)
		}
	}
	if got[2] < 20*rate {
		t.Errorf("host's traffic: %.2f Mbit/s; want it unshaped (far above %.0f Mbit/s)", got[2]/1e6, rate/1e6)
	}
	t.Logf("columns %.2f, %.2f Mbit/s; host %.0f Mbit/s", got[0]/1e6, got[1]/1e6, got[2]/1e6)
}

// TestThrottle: a throttle lowers every column's rate to its own, and the
// link's comes back when it is lifted; overlapping throttles take the
// lowest.
func TestThrottle(t *testing.T) {
	const rate, low = 8e6, 1e6
	l, ln, acc := newLink(t, wire.Link{Rate: rate}, 1)
	c, s := pair(t, l, ln, acc, 0)
	flood(s)
	throughput(t, c, 0, 300*time.Millisecond)
	th := wire.Fault{Kind: wire.FaultThrottle, Rate: low, For: time.Second}
	p, err := l.Apply(th)
	if err != nil {
		t.Fatal(err)
	}
	if p.Conns[0] != 1 {
		t.Errorf("conns at the instant %v, want [1]", p.Conns)
	}
	higher := wire.Fault{Kind: wire.FaultThrottle, Rate: 4 * low, For: time.Second}
	if _, err := l.Apply(higher); err != nil {
		t.Fatal(err)
	}
	if got := throughput(t, c, 500*time.Millisecond, 1500*time.Millisecond); got < 0.7*low || got > 1.3*low {
		t.Errorf("throttled: %.2f Mbit/s; want the lower throttle's %.1f ±30 %%", got/1e6, low/1e6)
	}
	if err := l.Lift(th); err != nil {
		t.Fatal(err)
	}
	if got := throughput(t, c, 500*time.Millisecond, time.Second); got < 0.7*4*low || got > 1.3*4*low {
		t.Errorf("one throttle left: %.2f Mbit/s; want its %.1f ±30 %%", got/1e6, 4*low/1e6)
	}
	if err := l.Lift(higher); err != nil {
		t.Fatal(err)
	}
	if got := throughput(t, c, 500*time.Millisecond, time.Second); got < 0.8*rate || got > 1.2*rate {
		t.Errorf("lifted: %.2f Mbit/s; want the link's %.0f ±20 %%", got/1e6, rate/1e6)
	}
}

// TestBlackhole: while it lasts nothing passes either way, though writes
// succeed and nobody is told (no reset, no FIN); the host's own connections
// go on; once lifted, the same connection carries what was written.
func TestBlackhole(t *testing.T) {
	l, ln, acc := newLink(t, wire.Link{}, 2)
	c, s := pair(t, l, ln, acc, 1)
	ch, sh := pair(t, l, ln, acc, -1)
	bh := wire.Fault{Kind: wire.FaultBlackhole, For: time.Second}
	p, err := l.Apply(bh)
	if err != nil {
		t.Fatal(err)
	}
	if p.Conns[0] != 0 || p.Conns[1] != 1 || p.At.IsZero() {
		t.Errorf("played %+v; want column 1's one connection and the instant", p)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatalf("client write during the blackhole: %v (want it to succeed: nobody is told)", err)
	}
	if _, err := s.Write([]byte("data")); err != nil {
		t.Fatalf("server write during the blackhole: %v", err)
	}
	buf := make([]byte, 16)
	s.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
	if n, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("server read %q, %v during the blackhole; want nothing until the deadline", buf[:n], err)
	}
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("client read %q, %v during the blackhole; want nothing until the deadline", buf[:n], err)
	}
	if _, err := ch.Write([]byte("host")); err != nil {
		t.Fatal(err)
	}
	sh.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := io.ReadFull(sh, buf[:4]); err != nil || string(buf[:n]) != "host" {
		t.Errorf("the host's connection read %q, %v; want it untouched", buf[:n], err)
	}
	if err := l.Lift(bh); err != nil {
		t.Fatal(err)
	}
	// TCP retransmits what the blackhole ate: it arrives within the backoff.
	s.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := io.ReadFull(s, buf[:4]); err != nil || string(buf[:n]) != "ping" {
		t.Errorf("after the blackhole the server read %q, %v; want the client's write", buf[:n], err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := io.ReadFull(c, buf[:4]); err != nil || string(buf[:n]) != "data" {
		t.Errorf("after the blackhole the client read %q, %v; want the server's write", buf[:n], err)
	}
}

// TestRST: the connections open at the instant are reset at both ends at
// their next packet; a connection made after is not.
func TestRST(t *testing.T) {
	l, ln, acc := newLink(t, wire.Link{}, 1)
	c, s := pair(t, l, ln, acc, 0)
	p, err := l.Apply(wire.Fault{Kind: wire.FaultRST})
	if err != nil {
		t.Fatal(err)
	}
	if p.Conns[0] != 1 {
		t.Errorf("conns at the instant %v, want [1]", p.Conns)
	}
	// Data from the server: the client's ack of it is the packet the path
	// answers with a reset; the server's next segment then meets the
	// client's kernel, which has no such connection any more.
	buf := make([]byte, 64)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var cerr error
	for range 50 {
		if _, err := s.Write([]byte("data")); err != nil {
			break
		}
		if _, cerr = c.Read(buf); cerr != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !errors.Is(cerr, syscall.ECONNRESET) {
		t.Errorf("client: %v; want a connection reset", cerr)
	}
	s.SetDeadline(time.Now().Add(5 * time.Second))
	var serr error
	for range 50 {
		if _, serr = s.Write([]byte("more")); serr != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !errors.Is(serr, syscall.ECONNRESET) && !errors.Is(serr, syscall.EPIPE) {
		t.Errorf("server: %v; want its writes to fail with a reset", serr)
	}
	c2, s2 := pair(t, l, ln, acc, 0)
	if _, err := s2.Write([]byte("fresh")); err != nil {
		t.Fatal(err)
	}
	c2.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := io.ReadFull(c2, buf[:5]); err != nil || string(buf[:n]) != "fresh" {
		t.Errorf("a connection made after the reset read %q, %v", buf[:n], err)
	}
}

// TestSynDrop: new connections go unanswered (a dial times out) while open
// ones go on; once lifted, dials work again.
func TestSynDrop(t *testing.T) {
	l, ln, acc := newLink(t, wire.Link{}, 1)
	c, s := pair(t, l, ln, acc, 0)
	sd := wire.Fault{Kind: wire.FaultSynDrop, For: time.Second}
	if _, err := l.Apply(sd); err != nil {
		t.Fatal(err)
	}
	if _, err := dialFrom(l, ln, 0, 500*time.Millisecond); err == nil || !isTimeout(err) {
		t.Errorf("dial during syn_drop: %v; want a timeout", err)
	}
	if _, err := s.Write([]byte("open")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := io.ReadFull(c, buf); err != nil {
		t.Errorf("the open connection during syn_drop read %q, %v", buf[:n], err)
	}
	if hc, err := dialFrom(l, ln, -1, 2*time.Second); err != nil {
		t.Errorf("the host's dial during syn_drop: %v; want it untouched", err)
	} else {
		hc.Close()
	}
	if err := l.Lift(sd); err != nil {
		t.Fatal(err)
	}
	if nc, err := dialFrom(l, ln, 0, 2*time.Second); err != nil {
		t.Errorf("dial after syn_drop: %v", err)
	} else {
		nc.Close()
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestLoss: loss: drops that share of the columns' packets, at random, and
// none of the host's. Counted with UDP datagrams, which nothing resends.
func TestLoss(t *testing.T) {
	const loss, n = 30.0, 3000
	l, _, _ := newLink(t, wire.Link{Loss: loss}, 1)
	var pc net.PacketConn
	err := inside(l.ns, func() error {
		var err error
		pc, err = net.ListenPacket("udp", netip.AddrPortFrom(l.ServerAddr(), 0).String())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	count := func(from netip.Addr) int {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: from.AsSlice()}, pc.LocalAddr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 64)
			for {
				pc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				if _, _, err := pc.ReadFrom(buf); err != nil {
					return
				}
				got++
			}
		}()
		for i := range n {
			c.Write([]byte(strconv.Itoa(i)))
			if i%100 == 99 {
				time.Sleep(time.Millisecond) // within the socket buffers
			}
		}
		<-done
		return got
	}
	col := count(l.ColumnAddr(0))
	host := count(l.HostAddr())
	// 3000 draws at p = 0.3: the standard deviation is 25 datagrams.
	if want := n * (100 - loss) / 100; float64(col) < want-150 || float64(col) > want+150 {
		t.Errorf("column: %d of %d datagrams arrived; want about %.0f (%.0f %% lost)", col, n, want, loss)
	}
	if host != n {
		t.Errorf("host: %d of %d datagrams arrived; want all (no loss off the columns)", host, n)
	}
}

// TestCheckNetem: a delay is refused with one line naming netem where the
// kernel lacks it (as here), and builds where it has it.
func TestCheckNetem(t *testing.T) {
	needLinks(t)
	cfg := wire.Link{On: true, Delay: 20 * time.Millisecond, Jitter: 5 * time.Millisecond}
	err := Check(cfg)
	if err != nil {
		if !strings.Contains(err.Error(), "netem") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Check: %q; want one line naming netem", err)
		}
		t.Logf("refused, as it should be on a kernel without netem: %v", err)
		return
	}
	l, err := Reserve(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AttachNew(); err != nil {
		t.Errorf("Check allowed a delay, but the link fails: %v", err)
	}
}

// TestRuleset: the nft table and the htb tree the kernel is given are as
// designed: the column addresses in the set, the loss only where asked, and
// each column's class selected by its address.
func TestRuleset(t *testing.T) {
	l := &Link{cfg: wire.Link{Loss: 0.5, Rate: 2e6}, columns: 2, prefix: netip.MustParsePrefix("198.18.1.64/26"), peer: "p"}
	rs := l.ruleset()
	for _, want := range []string{"elements = { 198.18.1.67, 198.18.1.68 }", "numgen random mod 1000000 < 5000 drop",
		"ip saddr . tcp sport @rst tcp flags & rst == 0 reject with tcp reset", "ip saddr @columns jump from_columns"} {
		if !strings.Contains(rs, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, rs)
		}
	}
	l.cfg.Loss = 0
	if strings.Contains(l.ruleset(), "numgen") {
		t.Error("a link without loss has a numgen rule")
	}
	var text []string
	for _, c := range l.shaping() {
		text = append(text, strings.Join(c, " "))
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"class add dev p parent 1: classid 1:11 htb rate 2000000bit ceil 2000000bit",
		"match ip dst 198.18.1.68/32 flowid 1:11", "htb default 2"} {
		if !strings.Contains(all, want) {
			t.Errorf("shaping lacks %q:\n%s", want, all)
		}
	}
}

// TestParseTCP reads /proc/net/tcp lines of known sockets.
func TestParseTCP(t *testing.T) {
	// 198.18.0.2:8080 ← 198.18.0.3:40000 established; 127.0.0.1:53 listening,
	// as a little-endian machine writes them.
	in := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 020012C6:1F90 030012C6:9C40 01 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 20 4 30 10 -1
   1: 0100007F:0035 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 100 0 0 10 0
`
	got, err := parseTCP(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !littleEndian() {
		t.Skip("the sample is a little-endian machine's")
	}
	want := []tcpConn{
		{netip.MustParseAddrPort("198.18.0.2:8080"), netip.MustParseAddrPort("198.18.0.3:40000"), true},
		{netip.MustParseAddrPort("127.0.0.1:53"), netip.MustParseAddrPort("0.0.0.0:0"), false},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseTCP(strings.NewReader("h\n 0: 0100007:0035 00000000:0000 0A\n")); err == nil {
		t.Error("a 7-digit address parsed")
	}
}

func littleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// TestSchedule: every firing inside the window, each timed one lifted For
// later (at the latest at the window's end), lifts before applies at one
// instant, the replay server's kinds left out.
func TestSchedule(t *testing.T) {
	bh := wire.Fault{Kind: wire.FaultBlackhole, For: 2 * time.Second}
	rst := wire.Fault{Kind: wire.FaultRST}
	fs := []wire.ScheduledFault{
		{Fault: bh, At: 2 * time.Second, Every: 4 * time.Second},
		{Fault: wire.Fault{Kind: wire.FaultClose, Code: 1000}, At: time.Second},
		{Fault: rst, At: 4 * time.Second},
	}
	var got []string
	for _, s := range schedule(fs, 9*time.Second) {
		what := "apply"
		if s.lift {
			what = "lift"
		}
		got = append(got, fmt.Sprintf("%s %s %s", s.at, what, s.f.Kind))
	}
	want := "2s apply blackhole, 4s lift blackhole, 4s apply rst, 6s apply blackhole, 8s lift blackhole"
	if strings.Join(got, ", ") != want {
		t.Errorf("schedule:\n %s\nwant\n %s", strings.Join(got, ", "), want)
	}
	got = nil
	for _, s := range schedule(fs[:1], 7*time.Second) {
		got = append(got, fmt.Sprint(s.at, s.lift))
	}
	if strings.Join(got, " ") != "2s false 4s true 6s false 7s true" {
		t.Errorf("a lift past the window's end: %v; want it at the end", got)
	}
}

// TestPlay: Play applies each fault at its instant and lifts it, reporting
// what it played, and ends with nothing in force.
func TestPlay(t *testing.T) {
	l, ln, acc := newLink(t, wire.Link{}, 1)
	pair(t, l, ln, acc, 0)
	fs := []wire.ScheduledFault{
		{Fault: wire.Fault{Kind: wire.FaultSynDrop, For: 300 * time.Millisecond}, At: 200 * time.Millisecond},
		{Fault: wire.Fault{Kind: wire.FaultBlackhole, For: 10 * time.Second}, At: 600 * time.Millisecond},
	}
	epoch := time.Now()
	var played []Played
	l.Play(context.Background(), fs, epoch, time.Second, func(p Played, err error) {
		if err != nil {
			t.Error(err)
		}
		played = append(played, p)
	})
	if len(played) != 2 {
		t.Fatalf("played %d faults, want 2", len(played))
	}
	for i, p := range played {
		if d := p.At.Sub(epoch) - fs[i].At; d < 0 || d > 100*time.Millisecond {
			t.Errorf("%s played %s after its instant", p.Fault.Kind, d)
		}
		if p.Conns[0] != 1 {
			t.Errorf("%s found %v connections, want [1]", p.Fault.Kind, p.Conns)
		}
	}
	if l.blackhole != 0 || l.synDrop != 0 {
		t.Errorf("in force after Play: blackhole %d, syn_drop %d", l.blackhole, l.synDrop)
	}
	c, err := dialFrom(l, ln, 0, 2*time.Second)
	if err != nil {
		t.Fatalf("dial after Play: %v", err)
	}
	c.Close()
}

// TestKilledOwnerLeavesNothing: a process killed (-9) with a link to its
// child's namespace leaves nothing: the kernel kills the child, removes its
// namespace and the pair with it; a leftover pair of a dead process would
// be removed by the next Reserve.
func TestKilledOwnerLeavesNothing(t *testing.T) {
	needLinks(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=linker")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make([]byte, 64)
	n, err := out.Read(line)
	if err != nil {
		t.Fatalf("linker: %v", err)
	}
	host := strings.TrimSpace(string(line[:n]))
	if _, err := net.InterfaceByName(host); err != nil {
		t.Fatalf("the linker's pair %q: %v", host, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	deadline := killed.Add(10 * time.Second)
	for {
		if _, err := net.InterfaceByName(host); err != nil {
			t.Logf("%s gone %s after its owner was killed", host, time.Since(killed).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still here 10 s after its owner was killed", host)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A pair whose namespace outlived its owner: made by hand, named for a
	// process that is gone.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	name := fmt.Sprintf("%s%d-1", namePrefix, dead.Process.Pid)
	if err := run("ip", "link", "add", name, "type", "veth", "peer", "name", name+"p"); err != nil {
		t.Fatal(err)
	}
	left, err := Leftovers()
	if err != nil || !slices.Contains(left, name) {
		t.Errorf("Leftovers %v, %v; want %s", left, err, name)
	}
	l, err := Reserve(wire.Link{On: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := net.InterfaceByName(name); err == nil {
		run("ip", "link", "del", name)
		t.Errorf("Reserve left %s, a dead process's pair", name)
	}
}
