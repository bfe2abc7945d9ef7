package keychainstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/keychainstore"
	"github.com/mcpward/mcpward/conformance"
	"github.com/mcpward/mcpward/ports"
)

// TestConformance runs the TokenStore conformance suite on the real Secret
// Service of the session, cross-process subtests included (they re-execute
// this test binary, which reaches the same Secret Service through the
// inherited D-Bus session). Each harness is a fresh namespace, which is its
// Location, and is cleared when its subtest ends. Outside
// scripts/keyring-session.sh (make test-keychain) it skips.
func TestConformance(t *testing.T) {
	if os.Getenv("MCPWARD_TEST_SECRET_SERVICE") != "1" {
		t.Skip("needs a real Secret Service: run under scripts/keyring-session.sh (make test-keychain), " +
			"which sets MCPWARD_TEST_SECRET_SERVICE=1")
	}
	open := func(t *testing.T, ns string) ports.TokenStore {
		s, err := keychainstore.New(&keychainstore.Options{Namespace: ns, Timeout: 15 * time.Second})
		require.NoError(t, err, "keychainstore.New")
		return s
	}
	conformance.RunTokenStore(t, func(t *testing.T) conformance.Harness[ports.TokenStore] {
		b := make([]byte, 8)
		_, err := rand.Read(b)
		require.NoError(t, err)
		ns := "conformance-" + hex.EncodeToString(b)
		cleaner, err := keychainstore.New(&keychainstore.Options{Namespace: ns, Timeout: 15 * time.Second})
		require.NoError(t, err)
		t.Cleanup(func() {
			_, err := cleaner.Clear(context.Background())
			require.NoError(t, err, "clearing the namespace")
		})
		return conformance.Harness[ports.TokenStore]{
			Open:     func(t *testing.T) ports.TokenStore { return open(t, ns) },
			Location: ns,
			Attach:   open,
		}
	})
}
