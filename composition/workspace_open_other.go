//go:build !unix

package composition

import "os"

// openNonBlocking opens path for reading (readRegular checked its type
// first).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
