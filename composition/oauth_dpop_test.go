package composition

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/refusal"
)

// TestOAuthDPoPEndToEnd: where the authorization server offers DPoP, a
// sign-in's tokens are bound to a proof key, and every request of a
// connection through the real HTTP transport carries a proof the server
// verifies (htm and htu of that request, ath of that token), with the DPoP
// scheme and never as a Bearer token; a server that asks for a nonce gets
// each request once more with it, and the next ones carry it from the
// start.
func TestOAuthDPoPEndToEnd(t *testing.T) {
	o := newOAuthMCP(t)
	o.Mu.Lock()
	o.DPoP = true
	o.Mu.Unlock()
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {"guarded": {"type": "http", "url": "` + o.TS.URL + `/mcp", "oauth": {}}}}`)
	require.NoError(t, h.SignIn(ctx, srcs, "guarded", browser(t, o.TS)))
	o.Mu.Lock()
	require.Len(t, o.Bound, 2, "the access and refresh tokens are bound to the key")
	o.Mu.Unlock()

	f := h.Connect(ctx, srcs, nil)
	defer f.Close()
	require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	for range 3 {
		res, err := f.CallServerTool(ctx, "guarded", "whoami", nil)
		require.NoError(t, err)
		assert.Contains(t, string(res.Content), "signed in")
	}
	o.Mu.Lock()
	proofs := o.Proofs
	assert.GreaterOrEqual(t, proofs, 5, "initialize, initialized, the listing, three calls: each with its proof")
	assert.Zero(t, o.BoundAsBearer, "a DPoP-bound token is never sent as Bearer")
	o.RSNonce = "rs-nonce-1"
	o.Mu.Unlock()

	for range 2 {
		_, err := f.CallServerTool(ctx, "guarded", "whoami", nil)
		require.NoError(t, err, "retried once with the server's nonce")
	}
	o.Mu.Lock()
	assert.Equal(t, 1, o.NonceChallenges, "the nonce is asked for once, then carried")
	o.RSNonce = "rs-nonce-2"
	o.Mu.Unlock()
	_, err = f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.NoError(t, err, "a new nonce: one more retry")
	o.Mu.Lock()
	assert.Equal(t, 2, o.NonceChallenges)
	assert.Zero(t, o.BoundAsBearer)
	o.Mu.Unlock()

	t.Run("the host turns DPoP off for the server", func(t *testing.T) {
		cfg := oauthConfig(t, o.TS)
		cfg.OAuth.DisableDPoP = func(id string) bool { return id == "guarded" }
		h, cleanup, err := Headless(StateDir(t.TempDir()), nil, cfg)
		require.NoError(t, err)
		defer cleanup()
		o.Mu.Lock()
		bound := len(o.Bound)
		o.Mu.Unlock()
		require.NoError(t, h.SignIn(ctx, srcs, "guarded", browser(t, o.TS)))
		o.Mu.Lock()
		assert.Equal(t, bound, len(o.Bound), "Bearer tokens")
		o.Mu.Unlock()
		f := h.Connect(ctx, srcs, nil)
		defer f.Close()
		require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	})
}

// TestOAuthRefusalReason: a refused credential the OAuth Authenticator
// declines to retry fails with its own reason, not the transport's
// auth_refused: here the server moved to another authorization server
// (SEP-2352), which deletes the credential and asks for a new sign-in.
func TestOAuthRefusalReason(t *testing.T) {
	o := newOAuthMCP(t)
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {"guarded": {"type": "http", "url": "` + o.TS.URL + `/mcp", "oauth": {}}}}`)
	require.NoError(t, h.SignIn(ctx, srcs, "guarded", browser(t, o.TS)))
	f := h.Connect(ctx, srcs, nil)
	defer f.Close()
	require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])

	o.Mu.Lock()
	o.AuthorizationServers = []string{"https://new-as.example.com"}
	clear(o.Tokens) // the server takes only the new one's tokens now
	o.Mu.Unlock()
	_, err = f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.Error(t, err)
	assert.Equal(t, refusal.AuthRequired, refusal.ClassOf(err), "%v", err)
	assert.Equal(t, oauth.ReasonAuthorizationServerChanged, refusal.ReasonOf(err))
	st, err := h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st, "the old credential is deleted")
	o.Mu.Lock()
	assert.Zero(t, o.Refreshed, "nothing refreshed at the old authorization server")
	o.Mu.Unlock()
}
