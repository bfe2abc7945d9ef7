package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// The rules of issue #24's "breaks": each found as an attacker's success,
// each tested here as a rule over the inputs that break it.

// TestTokenCheckedAtReceipt: an access token an Authorization header
// cannot carry, or one too large to send or store, is refused by name at
// receipt and nothing is stored — whatever the grant (the code exchange,
// a headless sign-in, a refresh), instead of a credential that fails every
// later request.
func TestTokenCheckedAtReceipt(t *testing.T) {
	tests := []struct {
		name           string
		access, reftok string
		class          refusal.Class
		reason         string
	}{
		{"space", "at " + canary, "", refusal.Protocol, ReasonTokenMalformed},
		{"CR LF", "at\r\nX-Injected: " + canary, "", refusal.Protocol, ReasonTokenMalformed},
		{"NUL", "at\x00" + canary, "", refusal.Protocol, ReasonTokenMalformed},
		{"ESC", "at\x1b[31m" + canary, "", refusal.Protocol, ReasonTokenMalformed},
		{"DEL", "at\x7f" + canary, "", refusal.Protocol, ReasonTokenMalformed},
		{"not ASCII", "at-é-" + canary, "", refusal.Protocol, ReasonTokenMalformed},
		{"tab", "at\t" + canary, "", refusal.Protocol, ReasonTokenMalformed},
		{"60 KB", strings.Repeat("a", 60<<10) + canary, "", refusal.Refused, ReasonTokenTooLarge},
		{"just over the bound", strings.Repeat("a", MaxAccessTokenBytes+1), "", refusal.Refused, ReasonTokenTooLarge},
		{"refresh token with LF", "at-" + canary, "rt\n" + canary, refusal.Protocol, ReasonTokenMalformed},
		{"refresh token too large", "at-" + canary, strings.Repeat("r", MaxRefreshTokenBytes+1), refusal.Refused, ReasonTokenTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.secrets["svc"] = "s" })
			e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
				body := map[string]any{"access_token": tt.access, "token_type": "Bearer", "expires_in": 3600}
				if tt.reftok != "" {
					body["refresh_token"] = tt.reftok
				}
				writeJSON(w, http.StatusOK, body)
			})
			c, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) { return e.as.ts.Client(), nil },
				Store: e.store, Locker: e.locker, Now: e.now.Now, MaxResponseBytes: 1 << 20})
			require.NoError(t, err)
			err = c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{ClientID: "svc", Secret: "s"})
			tokRequire(t, err, tt.class, tt.reason)
			_, err = e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
			assert.ErrorIs(t, err, ports.ErrNotFound, "nothing stored")
		})
	}
	t.Run("the largest tokens are kept", func(t *testing.T) {
		e := newEnv(t)
		e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]any{"access_token": strings.Repeat("a", MaxAccessTokenBytes),
				"refresh_token": strings.Repeat("r ", MaxRefreshTokenBytes/2), "token_type": "Bearer"})
		})
		p := siBegin(t, e, e.as.server("srv"))
		browse(t, e.as.ts, p.URL())
		require.NoError(t, p.Wait(context.Background()), "what fits every store and header is accepted")
	})
}

// FuzzCheckToken: a token checkToken accepts as an access token can be
// written after "Bearer " or "DPoP " in a header net/http sends unchanged.
func FuzzCheckToken(f *testing.F) {
	for _, s := range []string{"abc", "a b", "a\r\nb", "\x00", "é", "eyJ.eyJ.sig", "a=b+c/d~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		if checkToken(tok, MaxAccessTokenBytes, 0x21, "srv", "") != nil {
			return
		}
		require.NotEmpty(t, tok)
		h := http.Header{}
		h.Set("Authorization", "Bearer "+tok)
		require.Equal(t, "Bearer "+tok, h.Get("Authorization"))
		require.Equal(t, []string{"Bearer", tok}, strings.SplitN(h.Get("Authorization"), " ", 2))
		require.False(t, strings.ContainsAny(tok, " \t\r\n\x00\x7f"))
	})
}

// tooLargeStore refuses every value longer than max, as a keychain with a
// small item limit would.
type tooLargeStore struct {
	ports.TokenStore
	max int
}

func (s tooLargeStore) Set(ctx context.Context, key string, v []byte) error {
	if len(v) > s.max {
		return ports.ErrValueTooLarge
	}
	return s.TokenStore.Set(ctx, key, v)
}

// TestStoreTooLargeIsNotTransient: a credential larger than the store
// keeps is Class Refused, ReasonTokenTooLarge — never Transient, which
// invites retries that cannot help.
func TestStoreTooLargeIsNotTransient(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) { f.secrets["svc"] = "s" })
	c, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) { return e.as.ts.Client(), nil },
		Store: tooLargeStore{TokenStore: e.store, max: 300}, Locker: e.locker, Now: e.now.Now})
	require.NoError(t, err)
	err = c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{ClientID: "svc", Secret: "s"})
	tokRequire(t, err, refusal.Refused, ReasonTokenTooLarge)
}

// TestRefreshFloor: a token is refreshed at most once per lifetime. One
// that lived long enough is refreshed ExpirySkew before its expiry; a
// short-lived one (under 2*ExpirySkew) is used until it expires, instead
// of being refreshed before every request.
func TestRefreshFloor(t *testing.T) {
	for _, tt := range []struct {
		name     string
		lifetime time.Duration
		at       []time.Duration // when requests are made, from receipt
		refresh  int             // refreshes over them
	}{
		{"20 s token, 5 requests within it", 20 * time.Second, []time.Duration{0, time.Second, 5 * time.Second, 10 * time.Second, 19 * time.Second}, 0},
		{"20 s token, after it expired", 20 * time.Second, []time.Duration{0, 20 * time.Second}, 1},
		{"1 h token, early", time.Hour, []time.Duration{0, 30 * time.Minute}, 0},
		{"1 h token, within the skew", time.Hour, []time.Duration{0, time.Hour - 20*time.Second}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.expiresIn = int(tt.lifetime / time.Second) })
			s := e.as.server("srv")
			p := siBegin(t, e, s)
			browse(t, e.as.ts, p.URL())
			require.NoError(t, p.Wait(context.Background()))
			tokens := e.as.count("/token")
			a, req := tokAuth(t, e.c, s)
			start := e.now.Now()
			for _, d := range tt.at {
				e.now.Add(start.Add(d).Sub(e.now.Now()))
				_, err := a.Headers(context.Background(), req)
				require.NoError(t, err)
			}
			assert.Equal(t, tt.refresh, e.as.count("/token")-tokens)
		})
	}
}

// TestRequestDeadline: every OAuth request is bounded by
// Options.RequestTimeout, revocation included: an endpoint that takes the
// request and never answers cannot hold a sign-out (which deletes the
// credential first), a refresh, or discovery.
func TestRequestDeadline(t *testing.T) {
	tokLeakCheck(t)
	e := newEnv(t)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	// A handler that answers nothing until the test ends, whatever the
	// client does (one that returned when its request's context ended
	// would answer 200 to a request the server saw end early).
	hangHandler := func(http.ResponseWriter, *http.Request) { <-hang }
	c, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) { return e.as.ts.Client(), nil },
		Store: e.store, Locker: e.locker, Now: e.now.Now, RequestTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	s, seeded := tokSeed(t, e, "srv", nil)

	e.as.handle("/token", hangHandler)
	start := time.Now()
	_, err = c.refresh(context.Background(), seeded)
	tokRequire(t, err, refusal.Transient, "deadline_exceeded")
	assert.Less(t, time.Since(start), 5*time.Second)

	e.as.handle(prPath, hangHandler)
	start = time.Now()
	_, err = c.Discover(context.Background(), s)
	tokRequire(t, err, refusal.Transient, "deadline_exceeded")
	assert.Less(t, time.Since(start), 5*time.Second)

	e.as.handle("/revoke", hangHandler)
	start = time.Now()
	require.NoError(t, c.SignOut(context.Background(), s))
	assert.Less(t, time.Since(start), 5*time.Second, "the revocation is bounded")
	assert.Equal(t, 1, e.as.count("/revoke"))
	st, err := c.Status(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, SignedOut, st)
}

// TestExpiredClientSecret: a dynamic registration whose secret expired
// (client_secret_expires_at) is not used again: the next sign-in registers
// anew, and a renewal says why it cannot authenticate.
func TestExpiredClientSecret(t *testing.T) {
	e := newEnv(t)
	var expires int64
	e.as.handle("/register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		e.as.mu.Lock()
		e.as.seq++
		id := "client-" + canary + "-" + time.Duration(e.as.seq).String()
		e.as.secrets[id] = "secret-" + canary
		e.as.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "client_secret": "secret-" + canary,
			"token_endpoint_auth_method": AuthClientSecretPost, "client_secret_expires_at": expires, "redirect_uris": req.RedirectURIs})
	})
	expires = e.now.Now().Add(time.Hour).Unix()
	s := e.as.server("srv")
	s.CallbackPort = siFreePort(t)
	p := siBegin(t, e, s)
	browse(t, e.as.ts, p.URL())
	require.NoError(t, p.Wait(context.Background()))
	p.Close()
	assert.Equal(t, 1, e.as.count("/register"))

	p = siBegin(t, e, s)
	p.Close()
	assert.Equal(t, 1, e.as.count("/register"), "a registration whose secret is valid is reused")

	e.now.Add(2 * time.Hour)
	rec := siStored(t, e, "srv")
	_, err := e.c.refresh(context.Background(), rec)
	tokRequire(t, err, refusal.AuthRequired, ReasonClientSecretExpired)

	p = siBegin(t, e, s)
	p.Close()
	assert.Equal(t, 2, e.as.count("/register"), "an expired secret's registration is made anew")
}

// TestApplicationType: a dynamic registration says native (a loopback
// redirect), or web when the host says so; no other value is accepted.
func TestApplicationType(t *testing.T) {
	for _, tt := range []struct{ opt, want string }{{"", "native"}, {ApplicationNative, "native"}, {ApplicationWeb, "web"}} {
		e := newEnv(t)
		got := make(chan string, 1)
		e.as.handle("/register", func(w http.ResponseWriter, r *http.Request) {
			var req map[string]any
			_ = json.NewDecoder(r.Body).Decode(&req)
			got <- req["application_type"].(string)
			writeJSON(w, http.StatusCreated, map[string]any{"client_id": "c"})
		})
		c, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) { return e.as.ts.Client(), nil },
			Store: e.store, Locker: e.locker, ApplicationType: tt.opt})
		require.NoError(t, err)
		p, err := c.BeginSignIn(context.Background(), e.as.server("srv"))
		require.NoError(t, err)
		p.Close()
		assert.Equal(t, tt.want, <-got)
	}
	_, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) { return nil, nil },
		Store: ports.TokenStore(nil), Locker: nil, ApplicationType: "desktop"})
	assert.Error(t, err)
	e := newEnv(t)
	_, err = New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) { return nil, nil },
		Store: e.store, Locker: e.locker, ApplicationType: "desktop"})
	tokRequire(t, err, refusal.Config, "oauth_options_invalid")
}

// TestStepUpSurvivesTheProcess: the step-up one process's Authenticator
// saw is saved beside the credential, so a sign-in in another process (the
// CLI's login after a call) asks for the union of what was requested,
// granted and named; once that sign-in succeeds the saved step-up is gone.
func TestStepUpSurvivesTheProcess(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	ch, ok := ParseChallenge(http.StatusUnauthorized, `Bearer scope="mcp:basic"`)
	require.True(t, ok)
	require.NoError(t, e.c.SaveChallenge(context.Background(), s, ch), "as the host saves a 401's challenge")
	p := siBegin(t, e, s)
	browse(t, e.as.ts, p.URL())
	require.NoError(t, p.Wait(context.Background()))
	require.Equal(t, "mcp:basic", siLastAuth(e).Get("scope"))

	caller := e.client(t) // the process that makes the call
	a, req := tokAuth(t, caller, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	_, err = a.Refused(context.Background(), tokRefusal(a, http.StatusForbidden, `Bearer error="insufficient_scope", scope="mcp:write"`))
	tokRequire(t, err, refusal.AuthRequired, ReasonStepUpRequired)

	login := e.client(t) // a later "mcpward login", a process of its own
	rep, err := login.Discover(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp:basic", "mcp:write"}, rep.Scopes, "doctor shows the union")
	p, err = login.BeginSignIn(context.Background(), s)
	require.NoError(t, err)
	browse(t, e.as.ts, p.URL())
	require.NoError(t, p.Wait(context.Background()))
	p.Close()
	assert.Equal(t, "mcp:basic mcp:write", siLastAuth(e).Get("scope"), "the union, not the same scopes again")
	_, err = e.store.Get(context.Background(), stepUpKey(storeKey("srv", e.as.MCP())))
	assert.ErrorIs(t, err, ports.ErrNotFound, "taken by the sign-in")

	again := e.client(t)
	rep, err = again.Discover(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp:basic"}, rep.Scopes, "a later sign-in selects as usual")
}

// TestStepUpLimit: a server that names a new scope after every step-up
// sign-in gets maxStepUps of them in a row, then a final refusal.
func TestStepUpLimit(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	signIns := 0
	for i := 0; ; i++ {
		p := siBegin(t, e, s)
		browse(t, e.as.ts, p.URL())
		require.NoError(t, p.Wait(context.Background()))
		p.Close()
		signIns++
		a, req := tokAuth(t, e.client(t), s)
		_, err := a.Headers(context.Background(), req)
		require.NoError(t, err)
		_, err = a.Refused(context.Background(), tokRefusal(a, http.StatusForbidden,
			`Bearer error="insufficient_scope", scope="more:`+string(rune('a'+i))+`"`))
		var su *StepUpError
		if !errors.As(err, &su) {
			tokRequire(t, err, refusal.AuthRefused, ReasonStepUpLimit)
			break
		}
		require.Less(t, i, 10, "a limit")
		e.now.Add(time.Minute)
	}
	assert.Equal(t, 1+maxStepUps, signIns, "the first sign-in, then maxStepUps step-ups")
}

// TestSaveChallengeSavesStepUp: a host that reports a 403's challenge
// (SaveChallenge, as composition does for every challenge) saves the
// step-up too, so a later sign-in elsewhere asks for the union.
func TestSaveChallengeSavesStepUp(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", func(r *record) { r.Scope = "mcp:basic" })
	ch, ok := ParseChallenge(http.StatusForbidden, `Bearer error="insufficient_scope", scope="mcp:write"`)
	require.True(t, ok)
	require.NoError(t, e.c.SaveChallenge(context.Background(), s, ch))
	rep, err := e.client(t).Discover(context.Background(), s)
	require.NoError(t, err)
	assert.Subset(t, rep.Scopes, []string{"mcp:basic", "mcp:write"})

	e2 := newEnv(t)
	s2, _ := tokSeed(t, e2, "srv", func(r *record) { r.Scope = "mcp:basic mcp:write" })
	require.NoError(t, e2.c.SaveChallenge(context.Background(), s2, ch))
	_, err = e2.store.Get(context.Background(), stepUpKey(storeKey("srv", e2.as.MCP())))
	assert.ErrorIs(t, err, ports.ErrNotFound, "nothing new to ask for: no step-up")
}
