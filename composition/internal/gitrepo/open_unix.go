//go:build unix

package gitrepo

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without blocking on a FIFO and
// without making a terminal the controlling one.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
