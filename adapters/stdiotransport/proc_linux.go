package stdiotransport

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// observeExit blocks until the child pid has exited, without reaping it
// (WNOWAIT), so its pid and process group id stay reserved. It returns
// false if the exit cannot be observed this way.
func observeExit(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return err == nil
	}
}
