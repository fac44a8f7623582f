//go:build !unix

package transport

import (
	"errors"
	"syscall"
)

var errNoSockopt = errors.New("SO_RCVBUF: not supported on this platform")

func setRcvBuf(syscall.RawConn, int) error { return errNoSockopt }

func getRcvBuf(syscall.RawConn) (int, error) { return 0, errNoSockopt }
