//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package iostreams

import "syscall"

const ioctlGetTermios = syscall.TIOCGETA
