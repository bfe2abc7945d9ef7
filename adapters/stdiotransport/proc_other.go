//go:build !linux && !darwin

package stdiotransport

import "syscall"

// supported reports whether this GOOS can launch stdio children: on this
// one Launcher.Transport returns Class Unsupported "platform_unsupported".
const supported = false

func sysProcAttr() *syscall.SysProcAttr { return nil }
func termGroup(int)                     {}
func killGroup(int)                     {}
func observeExit(int) bool              { return false }
func exitedNow(int) bool                { return false }
