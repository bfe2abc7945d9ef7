package filestore

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"

	"github.com/mcpward/mcpward/ports"
)

// maxShortKey is the longest key named by its base32 encoding: 1 + 240
// characters, within NAME_MAX (255). Longer keys are named by their hash.
const maxShortKey = 150

// keyEncoding is lowercase unpadded base32: names that differ only in letter
// case never come from different keys, so case-insensitive filesystems
// cannot alias two keys.
var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// keyName returns the file name for a valid key (see the package doc).
func keyName(key string) string {
	if len(key) <= maxShortKey {
		return "k" + keyEncoding.EncodeToString([]byte(key))
	}
	sum := sha256.Sum256([]byte(key))
	return "h" + hex.EncodeToString(sum[:])
}

// checkKey returns ErrInvalidKey for an empty key or one longer than
// ports.MaxKeyLen bytes.
func checkKey(key string) error {
	if key == "" || len(key) > ports.MaxKeyLen {
		return fmt.Errorf("filestore: key empty or longer than %d bytes: %w", ports.MaxKeyLen, ports.ErrInvalidKey)
	}
	return nil
}
