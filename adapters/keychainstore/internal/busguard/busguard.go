//go:build linux

// Package busguard keeps package github.com/99designs/keyring from starting
// a D-Bus session daemon when the process has no session bus.
//
// keyring's init connects to the session bus. When DBUS_SESSION_BUS_ADDRESS
// is unset and no per-user bus socket exists, its D-Bus library runs
// dbus-launch, which leaves a dbus-daemon (and, through bus activation, a
// keyring daemon writing under HOME) running after the process exits. This
// package's init runs before keyring's (it imports only syscall, and Go
// initializes packages in import-path order among those whose imports are
// ready) and, in exactly that situation, sets DBUS_SESSION_BUS_ADDRESS to
// "disabled:", so the connection fails and the Secret Service backend is
// absent for the life of the process. Restore removes the variable again once
// keyring's init has run.
package busguard

import "syscall"

const (
	envAddr = "DBUS_SESSION_BUS_ADDRESS"
	// Disabled is the address set when no session bus exists: a transport
	// no D-Bus library dials.
	Disabled = "disabled:"
)

// set records that init set envAddr, so Restore only undoes its own change.
var set bool

func init() {
	set = guard()
}

// guard sets envAddr to Disabled when the process has no session bus, and
// reports whether it did.
func guard() bool {
	if v, ok := syscall.Getenv(envAddr); ok && v != "" {
		return false // an address (or an explicit "autolaunch:") was given
	}
	dir := "/run/user/" + itoa(syscall.Getuid())
	// The D-Bus library looks for these two files before it autolaunches.
	if exists(dir+"/bus") || exists(dir+"/dbus-session") {
		return false
	}
	return syscall.Setenv(envAddr, Disabled) == nil
}

// Restore unsets DBUS_SESSION_BUS_ADDRESS if this package's init set it and
// it still holds Disabled. It reports whether it did. Call it from the init
// of a package that imports keyring.
func Restore() bool {
	if !set {
		return false
	}
	set = false
	if v, _ := syscall.Getenv(envAddr); v != Disabled {
		return false
	}
	return syscall.Unsetenv(envAddr) == nil
}

// exists reports what the D-Bus library's check reports: anything but a
// definite "no such file" counts as present.
func exists(path string) bool {
	var st syscall.Stat_t
	return syscall.Stat(path, &st) != syscall.ENOENT
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
