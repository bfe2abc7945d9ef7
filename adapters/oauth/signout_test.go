package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestSignOut(t *testing.T) {
	tests := []struct {
		name       string
		seed       bool
		mod        func(r *record)
		revokeCode int
		wantToken  string // the revoked token; "" for no revocation request
		wantHint   string
	}{
		{name: "revokes the refresh token", seed: true, revokeCode: 200, wantToken: "rt-seed-" + canary + "-srv", wantHint: "refresh_token"},
		{name: "revokes the access token without refresh token", seed: true, mod: func(r *record) { r.RefreshToken = "" }, revokeCode: 200, wantToken: "at-seed-" + canary + "-srv", wantHint: "access_token"},
		{name: "revocation failure still signs out", seed: true, revokeCode: 500, wantToken: "rt-seed-" + canary + "-srv", wantHint: "refresh_token"},
		{name: "revocation refused still signs out", seed: true, revokeCode: 400, wantToken: "rt-seed-" + canary + "-srv", wantHint: "refresh_token"},
		{name: "revocation redirect still signs out", seed: true, revokeCode: 307, wantToken: "rt-seed-" + canary + "-srv", wantHint: "refresh_token"},
		{name: "no revocation endpoint", seed: true, mod: func(r *record) { r.RevocationEndpoint = "" }},
		{name: "http revocation endpoint is not used", seed: true, mod: func(r *record) { r.RevocationEndpoint = "http://127.0.0.1/revoke" }},
		{name: "no credential: nothing sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.as.server("srv")
			if tt.seed {
				s, _ = tokSeed(t, e, "srv", tt.mod)
			}
			var form url.Values
			var storedAtRevoke error
			e.as.handle("/revoke", func(w http.ResponseWriter, r *http.Request) {
				_, storedAtRevoke = e.store.Get(context.Background(), storeKey(s.ID, e.as.MCP()))
				_ = r.ParseForm()
				form = r.PostForm
				if tt.revokeCode/100 == 3 {
					w.Header().Set("Location", e.as.URL()+"/revoke2")
				}
				w.WriteHeader(tt.revokeCode)
			})
			require.NoError(t, e.c.SignOut(context.Background(), s))
			assert.Nil(t, tokStored(t, e, s), "signed out")
			assert.Zero(t, e.as.count("/revoke2"))
			if tt.wantToken == "" {
				assert.Zero(t, e.as.count("/revoke"), "nothing sent")
				return
			}
			require.Equal(t, 1, e.as.count("/revoke"))
			assert.True(t, errors.Is(storedAtRevoke, ports.ErrNotFound), "deleted before revoking")
			assert.Equal(t, tt.wantToken, form.Get("token"))
			assert.Equal(t, tt.wantHint, form.Get("token_type_hint"))
			assert.Equal(t, "client-"+canary, form.Get("client_id"))
			state, err := e.c.Status(context.Background(), s)
			require.NoError(t, err)
			assert.Equal(t, SignedOut, state)
		})
	}
}

func TestSignOutRevocationUnreachable(t *testing.T) {
	e := newEnv(t)
	// An endpoint at an origin the ClientFunc refuses.
	s, _ := tokSeed(t, e, "srv", func(r *record) { r.RevocationEndpoint = "https://revoke.invalid/revoke" })
	require.NoError(t, e.c.SignOut(context.Background(), s))
	assert.Nil(t, tokStored(t, e, s))
}

func TestSignOutCorrupt(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, e *testEnv, key string)
	}{
		{name: "unreadable value", setup: func(t *testing.T, e *testEnv, key string) {
			require.NoError(t, e.store.Set(context.Background(), key, []byte("{"+canary)))
		}},
		{name: "another server's record", setup: func(t *testing.T, e *testEnv, key string) {
			_, rec := tokSeed(t, e, "other", nil)
			b, err := e.store.Get(context.Background(), storeKey("other", rec.Resource))
			require.NoError(t, err)
			require.NoError(t, e.store.Set(context.Background(), key, b))
		}},
		{name: "store reports corrupt", setup: func(t *testing.T, e *testEnv, key string) {
			require.NoError(t, e.store.Set(context.Background(), key, []byte("x")))
			e.store.FailOnce("Get", ports.ErrCorrupt)
			e.store.FailOnce("Get", ports.ErrCorrupt)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.as.server("srv")
			key := storeKey(s.ID, e.as.MCP())
			tt.setup(t, e, key)
			state, err := e.c.Status(context.Background(), s)
			tokRequire(t, err, refusal.Config, ReasonCredentialCorrupt)
			assert.Equal(t, State(""), state)
			require.NoError(t, e.c.SignOut(context.Background(), s))
			_, err = e.store.Get(context.Background(), key)
			assert.ErrorIs(t, err, ports.ErrNotFound, "the corrupt credential is deleted")
			assert.Zero(t, e.as.count("/revoke"), "nothing sent")
		})
	}
}

func TestSignOutStoreFailures(t *testing.T) {
	tests := []struct {
		name string
		fail func(e *testEnv)
	}{
		{name: "get unavailable", fail: func(e *testEnv) { e.store.Fail("Get", ports.ErrUnavailable) }},
		{name: "delete unavailable", fail: func(e *testEnv) { e.store.Fail("Delete", ports.ErrUnavailable) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, seeded := tokSeed(t, e, "srv", nil)
			tt.fail(e)
			err := e.c.SignOut(context.Background(), s)
			tokRequire(t, err, refusal.Transient, ReasonStoreUnavailable)
			assert.Zero(t, e.as.count("/revoke"), "nothing sent while the credential is stored")
			e.store.Clear()
			assert.True(t, seeded.same(tokStored(t, e, s)))
		})
	}
}

func TestSignOutCanceled(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.store.Fail("Delete", ports.ErrUnavailable)
	err := e.c.SignOut(ctx, s)
	tokRequire(t, err, refusal.Transient, "canceled")
	assert.Zero(t, e.as.count("/revoke"))
}

func TestSignOutURLInvalid(t *testing.T) {
	e := newEnv(t)
	err := e.c.SignOut(context.Background(), Server{ID: "srv", URL: "http://" + canary + ".example/mcp"})
	tokRequire(t, err, refusal.Config, ReasonURLInvalid)
	_, err = e.c.Status(context.Background(), Server{ID: "srv", URL: "http://" + canary + ".example/mcp"})
	tokRequire(t, err, refusal.Config, ReasonURLInvalid)
}

func TestStatus(t *testing.T) {
	tests := []struct {
		name    string
		seed    bool
		mod     func(r *record)
		advance time.Duration
		want    State
	}{
		{name: "none", want: SignedOut},
		{name: "valid", seed: true, want: SignedIn},
		{name: "no expiry", seed: true, mod: func(r *record) { r.Expiry = time.Time{} }, advance: 1000 * time.Hour, want: SignedIn},
		{name: "expired", seed: true, advance: 2 * time.Hour, want: RefreshNeeded},
		{name: "expired without refresh token", seed: true, mod: func(r *record) { r.RefreshToken = "" }, advance: 2 * time.Hour, want: RefreshNeeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.as.server("srv")
			if tt.seed {
				s, _ = tokSeed(t, e, "srv", tt.mod)
			}
			e.now.Add(tt.advance)
			got, err := e.c.Status(context.Background(), s)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Contains(t, []State{SignedIn, SignedOut, RefreshNeeded}, got, "a fixed word")
			assert.Zero(t, e.as.count("/token"), "Status sends nothing")
		})
	}
}

func TestStatusStoreUnavailable(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", nil)
	e.store.Fail("Get", ports.ErrUnavailable)
	state, err := e.c.Status(context.Background(), s)
	tokRequire(t, err, refusal.Transient, ReasonStoreUnavailable)
	assert.Equal(t, State(""), state)
}
