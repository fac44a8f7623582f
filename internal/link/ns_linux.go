package link

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// onThread runs fn on a goroutine of its own, locked to its thread, and
// puts the thread back into this process's network namespace after, so fn
// may leave it elsewhere; a thread that cannot return is never reused: it
// stays locked and exits with the goroutine.
func onThread(fn func() error) error {
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
		ferr := fn()
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("link: back to the own namespace: %w", err))
			return // locked: the thread ends with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// inside runs fn on a thread that has entered the network namespace ns:
// what fn opens (sockets, /proc/thread-self/net) and starts (ip, tc, nft
// inherit the thread's namespace) is in ns.
func inside(ns *os.File, fn func() error) error {
	return onThread(func() error {
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("link: enter namespace: %w", err)
		}
		return fn()
	})
}

// newNamespace makes a network namespace and returns a file that holds it:
// it lives until the file is closed (and no process is in it).
func newNamespace() (*os.File, error) {
	var f *os.File
	err := onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("new network namespace: %w", err)
		}
		var err error
		f, err = os.Open("/proc/thread-self/ns/net")
		return err
	})
	if err != nil && f != nil {
		f.Close()
		f = nil
	}
	return f, err
}
