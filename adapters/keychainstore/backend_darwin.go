//go:build darwin

package keychainstore

import (
	"github.com/99designs/keyring"
	"github.com/mcpward/mcpward/ports"
)

// platformBackends is the only keyring backend used on macOS: the Keychain
// (built only with cgo; without cgo the store is unavailable).
func platformBackends() []keyring.BackendType {
	return []keyring.BackendType{keyring.KeychainBackend}
}

// platformMaxValue is the largest value Set accepts on macOS.
const platformMaxValue = ports.MaxValueLen
