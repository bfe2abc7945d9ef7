package stdiotransport

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// observeExit blocks until the child pid has exited, without reaping it
// (WNOWAIT), so its pid and process group id stay reserved. It returns
// false if the exit cannot be observed this way.
//
// It waits on a pidfd through the runtime's poller, so a waiting reaper
// parks its goroutine instead of holding an OS thread blocked in waitid
// for the child's whole life (a thread and its stacks, about 50 KiB, per
// connected server); where pidfds are missing (Linux before 5.4) it blocks
// in waitid.
func observeExit(pid int) bool {
	if ok, polled := pollExit(pid); polled {
		return ok
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return err == nil
	}
}

// pollExit waits for the exit of the child pid on a non-blocking pidfd,
// without reaping it. polled is false when it could not wait this way (no
// pidfd, or no poller for it): the caller waits otherwise. The child is
// unreaped, so its pid cannot name another process meanwhile.
func pollExit(pid int) (exited, polled bool) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false, false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo // zeroed: Signo stays 0 while the child runs
		for {
			werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
			if !errors.Is(werr, syscall.EINTR) {
				break
			}
		}
		return werr != nil || info.Signo == int32(syscall.SIGCHLD)
	})
	if err != nil || errors.Is(werr, syscall.EINVAL) {
		// No poller (rc.Read did not wait), or no P_PIDFD (Linux 5.3).
		return false, false
	}
	return werr == nil, true
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
