package oauth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// migrationEnv is an MCP server (with its first authorization server) at
// e.as and a second authorization server at as2; e.c reaches both.
func migrationEnv(t *testing.T) (*testEnv, *fakeAS) {
	e := newEnv(t)
	as2 := newFakeAS(t)
	as2.set(func(f *fakeAS) { f.clock, f.seq = e.now.Now, 100 }) // its ids differ from the first one's
	c, err := New(Options{
		Client: func(_ context.Context, u *url.URL) (*http.Client, error) {
			if strings.EqualFold(u.Scheme+"://"+u.Host, as2.URL()) {
				return as2.ts.Client(), nil
			}
			return e.as.ts.Client(), nil
		},
		Store: e.store, Locker: e.locker, Now: e.now.Now,
	})
	require.NoError(t, err)
	e.c = c
	return e, as2
}

// moveTo makes e's resource metadata name as2 alone.
func moveTo(e *testEnv, as2 *fakeAS) {
	e.as.set(func(f *fakeAS) {
		m := f.defaultResourceMeta()
		m["authorization_servers"] = []string{as2.URL()}
		f.resourceMeta = m
	})
}

// TestMigrationSeenByARefusal is the conformance suite's
// authorization-server-migration from the side of a connection: when the
// server refuses the token and its resource metadata now names another
// authorization server, the old credential and its key are deleted at once
// (no refresh at the old one) and the refusal says why.
func TestMigrationSeenByARefusal(t *testing.T) {
	e, as2 := migrationEnv(t)
	e.as.set(func(f *fakeAS) { f.dpopAlgs = []string{"ES256"} })
	s := e.as.server("srv")
	p := siBegin(t, e, s)
	browse(t, e.as.ts, p.URL())
	require.NoError(t, p.Wait(context.Background()))
	tokens := e.as.count("/token")

	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	moveTo(e, as2)
	retry, err := a.Refused(context.Background(), tokRefusal(a, http.StatusUnauthorized,
		`DPoP resource_metadata="`+e.as.URL()+prPath+`", error="invalid_token"`))
	assert.False(t, retry)
	tokRequire(t, err, refusal.AuthRequired, ReasonAuthorizationServerChanged)
	assert.Equal(t, tokens, e.as.count("/token"), "nothing refreshed at the old authorization server")
	key := storeKey("srv", e.as.MCP())
	for _, k := range []string{key, proofKeyKey(key)} {
		_, err := e.store.Get(context.Background(), k)
		assert.ErrorIs(t, err, ports.ErrNotFound, "deleted: %s", k)
	}

	t.Run("a refusal while the metadata still names it refreshes", func(t *testing.T) {
		e, _ := migrationEnv(t)
		s, _ := tokSeed(t, e, "srv", nil)
		a, req := tokAuth(t, e.c, s)
		_, err := a.Headers(context.Background(), req)
		require.NoError(t, err)
		retry, err := a.Refused(context.Background(), tokRefusal(a, http.StatusUnauthorized, `Bearer error="invalid_token"`))
		require.NoError(t, err)
		assert.True(t, retry)
		assert.Equal(t, 1, e.as.count("/token"))
	})
}

// TestMigrationAtSignIn: a sign-in that finds another authorization server
// than the stored credential's deletes that credential first (doctor says
// so beforehand), asks the old one to revoke it, and registers anew at the
// new one without presenting anything of the old client there (SEP-2352).
func TestMigrationAtSignIn(t *testing.T) {
	e, as2 := migrationEnv(t)
	s := e.as.server("srv")
	p := siBegin(t, e, s)
	browse(t, e.as.ts, p.URL())
	require.NoError(t, p.Wait(context.Background()))
	p.Close()
	old := siStored(t, e, "srv")
	require.Equal(t, e.as.URL(), old.Issuer)

	moveTo(e, as2)
	rep, err := e.c.Discover(context.Background(), s)
	require.NoError(t, err)
	assertReportSafe(t, rep)
	last := rep.Steps[len(rep.Steps)-1]
	assert.Equal(t, CheckAuthorizationServerChange, last.Check)
	assert.Contains(t, last.Hint, as2.URL())
	assert.Equal(t, old.AccessToken, siStored(t, e, "srv").AccessToken, "doctor changes nothing")

	p, err = e.c.BeginSignIn(context.Background(), s)
	require.NoError(t, err)
	defer p.Close()
	st, err := e.c.Status(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, SignedOut, st, "the old credential is deleted before anything is sent to the new server")
	e.as.mu.Lock()
	assert.Contains(t, e.as.revoked, old.RefreshToken, "the old server is asked to revoke it")
	e.as.mu.Unlock()
	assert.Equal(t, 1, as2.count("/register"), "registered anew at the new server")

	require.Equal(t, http.StatusOK, browse(t, as2.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	as2.mu.Lock()
	assert.NotEqual(t, old.ClientID, as2.lastAuth.Get("client_id"))
	assert.NotEqual(t, old.ClientID, as2.lastToken.Get("client_id"))
	as2.mu.Unlock()
	now := siStored(t, e, "srv")
	assert.Equal(t, as2.URL(), now.Issuer, "the tokens are bound to the new server")
	assert.Equal(t, as2.URL()+"/token", now.TokenEndpoint)
}
