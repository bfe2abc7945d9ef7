//go:build windows

package keychainstore

import "github.com/99designs/keyring"

// platformBackends is the only keyring backend used on Windows: the
// Credential Manager.
func platformBackends() []keyring.BackendType {
	return []keyring.BackendType{keyring.WinCredBackend}
}

// platformMaxValue is the Credential Manager's limit on a credential blob
// (CRED_MAX_CREDENTIAL_BLOB_SIZE, 5*512 bytes), below ports.MaxValueLen.
const platformMaxValue = 5 * 512
