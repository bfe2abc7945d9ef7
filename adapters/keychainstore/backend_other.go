//go:build !linux && !darwin && !windows

package keychainstore

import "github.com/99designs/keyring"

// platformBackends is empty: there is no OS keychain this package uses on
// this platform, so every call returns ports.ErrUnavailable.
func platformBackends() []keyring.BackendType { return nil }

// platformMaxValue is unused where no backend exists.
const platformMaxValue = 0
