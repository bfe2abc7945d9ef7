package composition

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/oauth"
)

// TestOAuthDesktopKeychain signs in with the Desktop profile on a real
// Secret Service: the credential lives in the keychain (no token file is
// written), connections use it, and signing out removes it. It runs under
// scripts/keyring-session.sh (make test-keychain).
func TestOAuthDesktopKeychain(t *testing.T) {
	if os.Getenv("MCPWARD_TEST_SECRET_SERVICE") != "1" {
		t.Skip("needs a real Secret Service: run under scripts/keyring-session.sh (make test-keychain)")
	}
	o := newOAuthMCP(t)
	dir := t.TempDir()
	h, cleanup, err := Desktop(StateDir(dir), nil, nil, oauthConfig(t, o.ts))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := oauthSrcs(o.ts.URL)

	require.NoError(t, h.SignIn(ctx, srcs, "guarded", browser(t, o.ts)))
	st, err := h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)
	entries, err := os.ReadDir(filepath.Join(dir, StoreSubdir, "tokens"))
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		assert.Empty(t, entries, "no token file in the desktop profile")
	}

	f := h.Connect(ctx, srcs, nil)
	require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	res, err := f.Call(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Content), "signed in")
	require.NoError(t, f.Close())

	require.NoError(t, h.SignOut(ctx, srcs, "guarded"))
	st, err = h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st, "the keychain item is gone")
}
