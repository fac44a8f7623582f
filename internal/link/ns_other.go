//go:build !linux

package link

import (
	"errors"
	"os"
)

var errLinux = errors.New("link: network namespaces need Linux")

func inside(*os.File, func() error) error { return errLinux }

func newNamespace() (*os.File, error) { return nil, errLinux }
