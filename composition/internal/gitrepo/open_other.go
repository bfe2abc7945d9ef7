//go:build !unix

package gitrepo

import "os"

// openNonBlocking opens path for reading (ReadRegular checked its type
// first).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
