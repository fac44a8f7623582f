package controller

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/wssoak/wssoak/internal/endpoint"
)

// preflight checks that the first hop answers on TCP, so that an unreachable URL is one
// clear error instead of a run of failed dials: the proxy when there is one (the workers
// never connect to the target themselves then, and a local target is reached through
// it too), else a remote target's host. Credentials are the proxy's to judge, per dial.
func preflight(ctx context.Context, target, proxy string) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	if proxy != "" {
		px, err := endpoint.ParseProxy(proxy)
		if err != nil {
			return err
		}
		c, err := d.DialContext(ctx, "tcp", px.Addr)
		if err != nil {
			return fmt.Errorf("proxy %s unreachable: %w", px, err)
		}
		return c.Close()
	}
	if target == "" || target == "local" {
		return nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("target %q: %w", target, err)
	}
	port := u.Port()
	switch {
	case u.Scheme != "ws" && u.Scheme != "wss":
		return fmt.Errorf("target %q: scheme must be ws or wss", target)
	case u.Hostname() == "":
		return fmt.Errorf("target %q: no host", target)
	case port == "" && u.Scheme == "wss":
		port = "443"
	case port == "":
		port = "80"
	}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("target %s unreachable: %w", target, err)
	}
	return c.Close()
}
