//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

const platformSupported = true

// ownedByMe reports whether fi is owned by the effective user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// tryFlock tries once to take a flock on f without blocking; it returns
// false, nil when another open file description holds a conflicting one.
func tryFlock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	return flockFile(f, how)
}

// funlock releases f's flock explicitly, so a descriptor duplicated into a
// child that is between fork and exec cannot keep it alive.
func funlock(f *os.File) error {
	_, err := flockFile(f, syscall.LOCK_UN)
	return err
}

func flockFile(f *os.File, how int) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(ferr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return ferr == nil, ferr
}
