package link

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/wssoak/wssoak/internal/wire"
)

// Check reports, as one line, why a link as cfg asks cannot be made here:
// not Linux, not root, ip, tc or nft missing, network namespaces not
// permitted, or (for a delay or jitter) no netem qdisc in the kernel. It
// leaves nothing behind: what it tries, it tries in a namespace of its own.
func Check(cfg wire.Link) error {
	if runtime.GOOS != "linux" {
		return errors.New("link: needs Linux (network namespaces, veth, tc and nft)")
	}
	if os.Geteuid() != 0 {
		return errors.New("link: needs root (network namespaces, veth, tc and nft): run as root, or leave link: out")
	}
	var missing []string
	for _, t := range tools {
		if _, err := toolPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("link: %s not found (Debian: apt-get install iproute2 nftables)", strings.Join(missing, ", "))
	}
	ns, err := newNamespace()
	if err != nil {
		return fmt.Errorf("link: network namespaces are not permitted here: %w", err)
	}
	defer ns.Close()
	if !cfg.NeedsNetem() {
		return nil
	}
	err = inside(ns, func() error {
		return run("tc", append([]string{"qdisc", "add", "dev", "lo", "root", "netem"}, netemArgs(cfg)...)...)
	})
	if ce := (*cmdError)(nil); errors.As(err, &ce) {
		return fmt.Errorf("link: delay and jitter need the kernel's netem qdisc (sch_netem), which this kernel lacks (tc: %s)", ce.out)
	}
	if err != nil {
		return fmt.Errorf("link: delay and jitter: %w", err)
	}
	return nil
}
