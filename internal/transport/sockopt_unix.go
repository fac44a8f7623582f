//go:build unix

package transport

import (
	"fmt"
	"syscall"
)

func setRcvBuf(rc syscall.RawConn, size int) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
	}); err != nil {
		return fmt.Errorf("set SO_RCVBUF: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("set SO_RCVBUF %d: %w", size, serr)
	}
	return nil
}

func getRcvBuf(rc syscall.RawConn) (int, error) {
	var (
		n    int
		gerr error
	)
	if err := rc.Control(func(fd uintptr) {
		n, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil {
		return 0, fmt.Errorf("get SO_RCVBUF: %w", err)
	}
	if gerr != nil {
		return 0, fmt.Errorf("get SO_RCVBUF: %w", gerr)
	}
	return n, nil
}
