//go:build linux

package keychainstore

import (
	"github.com/99designs/keyring"
	"github.com/mcpward/mcpward/ports"
)

// platformBackends is the only keyring backend used on Linux: the Secret
// Service (gnome-keyring, KeePassXC, and KWallet 5.97+, which implements the
// same D-Bus API). kwallet (kwalletd5's own API), keyctl, pass and file are
// never used.
func platformBackends() []keyring.BackendType {
	return []keyring.BackendType{keyring.SecretServiceBackend}
}

// platformMaxValue is the largest value Set accepts on Linux.
const platformMaxValue = ports.MaxValueLen
