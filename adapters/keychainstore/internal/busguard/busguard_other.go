//go:build !linux

// Package busguard is a no-op outside Linux, where package keyring does not
// connect to D-Bus at init.
package busguard

// Disabled is the address the Linux guard sets when no session bus exists.
const Disabled = "disabled:"

// Restore does nothing and reports false.
func Restore() bool { return false }
