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

// exitedNow reports, without blocking or reaping, whether the child pid
// has already exited (WNOHANG|WNOWAIT). False when it runs, or was reaped.
func exitedNow(pid int) bool {
	for {
		var info unix.Siginfo // zeroed: Signo stays 0 when no child has exited
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return err == nil && info.Signo == int32(syscall.SIGCHLD)
	}
}
