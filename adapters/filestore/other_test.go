//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import (
	"errors"
	"testing"

	"github.com/mcpward/mcpward/ports"
)

func TestOpenIsUnavailableOnThisPlatform(t *testing.T) {
	s, err := Open(t.TempDir())
	if s != nil || !errors.Is(err, ErrUnsupportedPlatform) || !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("Open = %v, %v; want nil, ErrUnsupportedPlatform", s, err)
	}
}
