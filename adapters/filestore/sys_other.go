//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import (
	"io/fs"
	"os"
)

// On this platform Open returns ErrUnsupportedPlatform, so no Store exists
// and the functions below are never reached.
const platformSupported = false

func ownedByMe(fs.FileInfo) bool { return false }

func tryFlock(*os.File, bool) (bool, error) { return false, ErrUnsupportedPlatform }

func funlock(*os.File) error { return ErrUnsupportedPlatform }
