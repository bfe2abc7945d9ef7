package oauth

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

// tokOther is a credential another process stored for the same server as
// seeded: other tokens, valid for validFor from now.
func tokOther(e *testEnv, seeded *record, validFor time.Duration) *record {
	other := *seeded
	other.AccessToken, other.RefreshToken = "at-other-"+canary, "rt-other-"+canary
	other.Expiry = e.now.Now().Add(validFor)
	return &other
}

func TestRefreshInvalidGrant(t *testing.T) {
	tests := []struct {
		name    string
		rotated bool // another process stores a new credential before the answer
	}{
		{name: "spent credential is deleted"},
		{name: "credential rotated in meanwhile survives", rotated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, seeded := tokSeed(t, e, "srv", func(r *record) { r.RefreshToken = "rt-dead-" + canary })
			other := tokOther(e, seeded, 3*time.Hour)
			e.now.Add(2 * time.Hour)
			e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
				if tt.rotated {
					assert.NoError(t, e.c.save(context.Background(), other))
				}
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": canary})
			})
			a, req := tokAuth(t, e.c, s)
			_, err := a.Headers(context.Background(), req)
			tokRequire(t, err, refusal.AuthRequired, ReasonSignInRequired)
			assert.Equal(t, 1, e.as.count("/token"))
			stored := tokStored(t, e, s)
			if !tt.rotated {
				assert.Nil(t, stored, "the spent credential is deleted")
				return
			}
			require.NotNil(t, stored)
			assert.True(t, other.same(stored), "the rotated credential survives")
			h, err := a.Headers(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, other.AccessToken, bearer(t, h))
		})
	}
}

func TestRefreshInvalidGrant401(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", nil)
	e.now.Add(2 * time.Hour)
	e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_grant"})
	})
	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	tokRequire(t, err, refusal.AuthRequired, ReasonSignInRequired)
	assert.Nil(t, tokStored(t, e, s))
}

func TestRefreshUnderHeldLock(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, e *testEnv, s Server, seeded *record) // while the refresh waits for the lock
		want   string                                                   // the token Headers returns; "" for sign-in required
	}{
		{name: "adopts a token rotated in meanwhile", change: func(t *testing.T, e *testEnv, _ Server, seeded *record) {
			require.NoError(t, e.c.save(context.Background(), tokOther(e, seeded, time.Hour)))
		}, want: "at-other-" + canary},
		{name: "signed out meanwhile", change: func(t *testing.T, e *testEnv, s Server, _ *record) {
			require.NoError(t, e.store.Delete(context.Background(), storeKey(s.ID, e.as.MCP())))
		}},
		{name: "replaced by an expired one without refresh token", change: func(t *testing.T, e *testEnv, _ Server, seeded *record) {
			other := tokOther(e, seeded, -time.Hour)
			other.RefreshToken = ""
			require.NoError(t, e.c.save(context.Background(), other))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tokLeakCheck(t)
			e := newEnv(t)
			s, seeded := tokSeed(t, e, "srv", nil)
			e.now.Add(2 * time.Hour)
			key := lockKey(s.ID, e.as.MCP())
			unlock, err := e.locker.Lock(context.Background(), key)
			require.NoError(t, err)
			a, req := tokAuth(t, e.c, s)
			type result struct {
				h   http.Header
				err error
			}
			done := make(chan result, 1)
			go func() {
				h, err := a.Headers(context.Background(), req)
				done <- result{h, err}
			}()
			require.Eventually(t, func() bool { return e.locker.Waiting(key) == 1 }, 5*time.Second, time.Millisecond)
			tt.change(t, e, s, seeded)
			require.NoError(t, unlock())
			got := <-done
			assert.Zero(t, e.as.count("/token"), "nothing is sent")
			if tt.want == "" {
				tokRequire(t, got.err, refusal.AuthRequired, ReasonSignInRequired)
				assert.False(t, seeded.same(tokStored(t, e, s)), "the change is kept")
				return
			}
			require.NoError(t, got.err)
			assert.Equal(t, tt.want, bearer(t, got.h))
		})
	}
}

func TestRefreshLockTimeout(t *testing.T) {
	tokLeakCheck(t)
	e := newEnv(t)
	s, seeded := tokSeed(t, e, "srv", nil)
	e.now.Add(2 * time.Hour)
	unlock, err := e.locker.Lock(context.Background(), lockKey(s.ID, e.as.MCP()))
	require.NoError(t, err)
	defer unlock()

	c := e.client(t)
	c.lockTimeout = 20 * time.Millisecond
	a, req := tokAuth(t, c, s)
	_, err = a.Headers(context.Background(), req)
	tokRequire(t, err, refusal.Transient, ReasonLockTimeout)
	retry, err := a.Refused(context.Background(), tokRefusal(a, 401, ""))
	assert.False(t, retry)
	tokRequire(t, err, refusal.Transient, ReasonLockTimeout)
	assert.Zero(t, e.as.count("/token"), "fails closed: nothing sent")
	assert.True(t, seeded.same(tokStored(t, e, s)))
}

func TestRefreshUsesStoredTokenEndpoint(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", nil)
	e.as.set(func(f *fakeAS) {
		m := f.defaultServerMeta()
		m["token_endpoint"] = f.URL() + "/elsewhere"
		f.serverMeta = m
	})
	e.now.Add(2 * time.Hour)
	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 1, e.as.count("/token"))
	assert.Zero(t, e.as.count("/elsewhere"))
	assert.Zero(t, e.as.count("/.well-known/oauth-authorization-server"), "never rediscovered")
	assert.Zero(t, e.as.count("/.well-known/oauth-protected-resource/mcp"), "never rediscovered")
}

func TestRefreshInsecureStoredEndpoint(t *testing.T) {
	for _, ep := range []string{"http://" + "127.0.0.1/token", "https://user@127.0.0.1/token", "/token", "ftp://x/token"} {
		t.Run(ep, func(t *testing.T) {
			e := newEnv(t)
			s, seeded := tokSeed(t, e, "srv", func(r *record) {
				r.TokenEndpoint = strings.Replace(ep, "127.0.0.1", strings.TrimPrefix(e.as.URL(), "https://"), 1)
			})
			e.now.Add(2 * time.Hour)
			a, req := tokAuth(t, e.c, s)
			_, err := a.Headers(context.Background(), req)
			tokRequire(t, err, refusal.Refused, ReasonInsecureEndpoint)
			assert.Zero(t, e.as.count("/token"), "nothing sent")
			assert.True(t, seeded.same(tokStored(t, e, s)), "credential kept")
		})
	}
}

func TestRefreshAnswers(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		class  refusal.Class
		reason string
	}{
		{name: "no access token", status: 200, body: `{"token_type":"Bearer","refresh_token":"rt-` + canary + `"}`, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "mac token", status: 200, body: `{"access_token":"at-` + canary + `","token_type":"mac"}`, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "no token type", status: 200, body: `{"access_token":"at-` + canary + `"}`, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "expires_in text", status: 200, body: `{"access_token":"at","token_type":"Bearer","expires_in":"abc"}`, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "expires_in negative", status: 200, body: `{"access_token":"at","token_type":"Bearer","expires_in":-1}`, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "expires_in fraction", status: 200, body: `{"access_token":"at","token_type":"Bearer","expires_in":1.5}`, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "not an object", status: 200, body: `["` + canary + `"]`, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "html", status: 200, body: `<html>` + canary, class: refusal.Protocol, reason: ReasonTokenResponseInvalid},
		{name: "invalid_client", status: 400, body: `{"error":"invalid_client","error_description":"` + canary + `"}`, class: refusal.AuthRefused, reason: ReasonClientAuthRefused},
		{name: "400 without body", status: 400, class: refusal.AuthRefused, reason: ReasonRefreshRefused},
		{name: "401 unauthorized_client", status: 401, body: `{"error":"unauthorized_client"}`, class: refusal.AuthRefused, reason: ReasonClientUnauthorized},
		{name: "invalid_scope", status: 400, body: `{"error":"invalid_scope"}`, class: refusal.AuthRefused, reason: ReasonScopeRefused},
		{name: "invalid_target", status: 400, body: `{"error":"invalid_target"}`, class: refusal.Refused, reason: ReasonResourceRefused},
		{name: "200 with an error code", status: 200, body: `{"access_token":"at","token_type":"Bearer","error":"invalid_request"}`, class: refusal.AuthRefused, reason: ReasonRefreshRefused},
		{name: "403 invalid_grant is no 400/401", status: 403, body: `{"error":"invalid_grant"}`, class: refusal.AuthRefused, reason: ReasonRefreshRefused},
		{name: "404", status: 404, body: canary, class: refusal.AuthRefused, reason: ReasonRefreshRefused},
		{name: "500", status: 500, body: canary, class: refusal.Transient, reason: ReasonUnavailable},
		{name: "503", status: 503, class: refusal.Transient, reason: ReasonUnavailable},
		{name: "429", status: 429, class: refusal.Transient, reason: ReasonUnavailable},
		{name: "redirect", status: 307, class: refusal.Refused, reason: ReasonRedirectRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, seeded := tokSeed(t, e, "srv", nil)
			e.now.Add(2 * time.Hour)
			e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
				if tt.status/100 == 3 {
					w.Header().Set("Location", e.as.URL()+"/token2?"+canary)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})
			a, req := tokAuth(t, e.c, s)
			_, err := a.Headers(context.Background(), req)
			tokRequire(t, err, tt.class, tt.reason)
			assert.Equal(t, 1, e.as.count("/token"))
			assert.Zero(t, e.as.count("/token2"), "no redirect followed")
			assert.True(t, seeded.same(tokStored(t, e, s)), "credential kept")

			retry, err := a.Refused(context.Background(), tokRefusal(a, 401, ""))
			assert.False(t, retry)
			tokRequire(t, err, tt.class, tt.reason)
		})
	}
}

func TestRefreshStoreChangedDuringRequest(t *testing.T) {
	tests := []struct {
		name   string
		change func(e *testEnv, s Server, seeded *record)
		// wantOther: Headers returns the other credential; wantFresh: the
		// token from the response; neither: sign-in required.
		wantOther, wantFresh bool
		stored               string // "none", "other"
	}{
		{name: "signed out: not resurrected", change: func(e *testEnv, s Server, _ *record) {
			_ = e.store.Delete(context.Background(), storeKey(s.ID, e.as.MCP()))
		}, stored: "none"},
		{name: "signed in anew: the new one is kept", change: func(e *testEnv, _ Server, seeded *record) {
			_ = e.c.save(context.Background(), tokOther(e, seeded, time.Hour))
		}, wantOther: true, stored: "other"},
		{name: "replaced by an expired one: fresh token used, not saved", change: func(e *testEnv, _ Server, seeded *record) {
			_ = e.c.save(context.Background(), tokOther(e, seeded, -time.Hour))
		}, wantFresh: true, stored: "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, seeded := tokSeed(t, e, "srv", nil)
			e.now.Add(2 * time.Hour)
			e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
				tt.change(e, s, seeded)
				e.as.token(w, r)
			})
			a, req := tokAuth(t, e.c, s)
			h, err := a.Headers(context.Background(), req)
			stored := tokStored(t, e, s)
			switch tt.stored {
			case "none":
				assert.Nil(t, stored)
			case "other":
				require.NotNil(t, stored)
				assert.Equal(t, "at-other-"+canary, stored.AccessToken)
			}
			switch {
			case tt.wantOther:
				require.NoError(t, err)
				assert.Equal(t, "at-other-"+canary, bearer(t, h))
			case tt.wantFresh:
				require.NoError(t, err)
				got := bearer(t, h)
				assert.NotEqual(t, seeded.AccessToken, got)
				assert.NotEqual(t, stored.AccessToken, got)
			default:
				tokRequire(t, err, refusal.AuthRequired, ReasonSignInRequired)
			}
		})
	}
}

func TestRefreshLockReleasedOnEveryPath(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", nil)
	e.now.Add(2 * time.Hour)
	e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "access_denied"})
	})
	a, req := tokAuth(t, e.c, s)
	for range 3 {
		_, err := a.Headers(context.Background(), req)
		tokRequire(t, err, refusal.AuthRefused, ReasonRefreshRefused)
		assert.False(t, e.locker.Held(lockKey(s.ID, e.as.MCP())))
	}
	assert.Equal(t, 3, e.as.count("/token"))
}
