package link

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// inside runs fn on a thread that has entered the network namespace ns:
// what fn opens (sockets, /proc/thread-self/net) and starts (ip, tc, nft
// inherit the thread's namespace) is in ns. It runs on a goroutine of its
// own, locked to its thread; a thread that cannot return to this process's
// namespace is never reused: it stays locked and exits with the goroutine.
func inside(ns *os.File, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("link: own namespace: %w", err)
			return
		}
		defer own.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("link: enter namespace: %w", err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("link: leave namespace: %w", err))
			return // locked: the thread ends with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// newNamespace makes a network namespace and returns a file that holds it:
// it lives until the file is closed (and no process is in it).
func newNamespace() (*os.File, error) {
	type got struct {
		f   *os.File
		err error
	}
	ch := make(chan got, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- got{nil, fmt.Errorf("own namespace: %w", err)}
			return
		}
		defer own.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- got{nil, fmt.Errorf("new network namespace: %w", err)}
			return
		}
		f, ferr := os.Open("/proc/thread-self/ns/net")
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			if f != nil {
				f.Close()
			}
			ch <- got{nil, fmt.Errorf("leave the new namespace: %w", err)}
			return // locked: the thread ends with this goroutine
		}
		runtime.UnlockOSThread()
		if ferr != nil {
			ferr = fmt.Errorf("new namespace: %w", ferr)
		}
		ch <- got{f, ferr}
	}()
	g := <-ch
	return g.f, g.err
}
