//go:build linux || darwin

package stdiotransport

import "syscall"

// supported reports whether this GOOS can launch stdio children.
const supported = true

// sysProcAttr makes the child lead a new process group, so that its
// descendants can be signalled with it.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func termGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
