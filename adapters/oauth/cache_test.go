package oauth

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// authHeader returns the Authorization header a hands out for req.
func authHeader(t *testing.T, a *Authenticator, req ports.AuthRequest) string {
	t.Helper()
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	return h.Get("Authorization")
}

func TestCacheServesHeadersWithinTTL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s, seeded := tokSeed(t, e, "srv", nil)
	a, req := tokAuth(t, e.c, s)

	want := "Bearer " + seeded.AccessToken
	assert.Equal(t, want, authHeader(t, a, req))
	gets := e.store.Calls("Get")
	for range 10 {
		assert.Equal(t, want, authHeader(t, a, req))
	}
	assert.Equal(t, gets, e.store.Calls("Get"), "no store read within the TTL")

	// Another Authenticator of the same Client shares the cache.
	b, _ := tokAuth(t, e.c, s)
	assert.Equal(t, want, authHeader(t, b, req))
	assert.Equal(t, gets, e.store.Calls("Get"))

	// Past the TTL the store is read again: a failing store is reported.
	e.now.Add(DefaultCacheTTL)
	e.store.Fail("Get", ports.ErrUnavailable)
	_, err := a.Headers(ctx, req)
	tokRequire(t, err, refusal.Transient, ReasonStoreUnavailable)
	e.store.Clear()
}

func TestCacheSignOutElsewhere(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s, seeded := tokSeed(t, e, "srv", nil)
	a, req := tokAuth(t, e.c, s)
	assert.Equal(t, "Bearer "+seeded.AccessToken, authHeader(t, a, req))

	// Signed out by this Client: seen at once.
	other := e.client(t)
	require.NoError(t, e.c.SignOut(ctx, s))
	_, err := a.Headers(ctx, req)
	tokRequire(t, err, refusal.AuthRequired, ReasonSignInRequired)

	// Signed out by another process: seen within the TTL.
	s, seeded = tokSeed(t, e, "srv", nil)
	assert.Equal(t, "Bearer "+seeded.AccessToken, authHeader(t, a, req))
	require.NoError(t, other.SignOut(ctx, s))
	e.now.Add(DefaultCacheTTL - time.Millisecond)
	assert.Equal(t, "Bearer "+seeded.AccessToken, authHeader(t, a, req), "still cached")
	e.now.Add(time.Millisecond)
	_, err = a.Headers(ctx, req)
	tokRequire(t, err, refusal.AuthRequired, ReasonSignInRequired)
}

func TestCacheRefusedAdoptsRotatedToken(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s, seeded := tokSeed(t, e, "srv", nil)
	a, req := tokAuth(t, e.c, s)
	assert.Equal(t, "Bearer "+seeded.AccessToken, authHeader(t, a, req))

	// Another process stores a new token; the server refuses the cached
	// one: Refused reads the store, and the retry's Headers carries the
	// new token, without a refresh.
	rotated := *seeded
	rotated.AccessToken = "at-rotated-" + canary
	other := e.client(t)
	require.NoError(t, other.save(ctx, &rotated))
	retry, err := a.Refused(ctx, tokRefusal(a, http.StatusUnauthorized, ""))
	require.NoError(t, err)
	assert.True(t, retry)
	assert.Equal(t, "Bearer "+rotated.AccessToken, authHeader(t, a, req))
	assert.Zero(t, e.as.count("/token"))
}

func TestCacheDisabled(t *testing.T) {
	e := newEnv(t)
	c, err := New(Options{
		Client:   func(context.Context, *url.URL) (*http.Client, error) { return e.as.ts.Client(), nil },
		Store:    e.store,
		Locker:   e.locker,
		Now:      e.now.Now,
		CacheTTL: -1,
	})
	require.NoError(t, err)
	ctx := context.Background()
	s, _ := tokSeed(t, e, "srv", nil)
	a, req := tokAuth(t, c, s)
	gets := e.store.Calls("Get")
	for range 3 {
		_, err := a.Headers(ctx, req)
		require.NoError(t, err)
	}
	assert.Equal(t, gets+3, e.store.Calls("Get"), "every request reads the store")
}
