package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports/portstest"
)

// siRequire checks err is a *refusal.Error of class and reason whose text
// carries no canary.
func siRequire(t testing.TB, err error, class refusal.Class, reason string) {
	t.Helper()
	require.Error(t, err)
	requireNoCanary(t, err)
	var re *refusal.Error
	require.True(t, errors.As(err, &re), "a *refusal.Error: %v", err)
	require.Equal(t, class, re.Class, "class of %v", err)
	require.Equal(t, reason, re.Reason, "reason of %v", err)
}

// siStored returns the credential stored for server id at the fake's MCP
// endpoint.
func siStored(t testing.TB, e *testEnv, id string) *record {
	t.Helper()
	raw, err := e.store.Get(context.Background(), storeKey(id, e.as.MCP()))
	require.NoError(t, err, "a credential is stored")
	var r record
	require.NoError(t, json.Unmarshal(raw, &r))
	return &r
}

// siLastAuth returns the query of the fake's last authorization request.
func siLastAuth(e *testEnv) url.Values {
	var q url.Values
	e.as.set(func(f *fakeAS) { q = f.lastAuth })
	return q
}

// siLastToken returns the form of the fake's last token request.
func siLastToken(e *testEnv) url.Values {
	var q url.Values
	e.as.set(func(f *fakeAS) { q = f.lastToken })
	return q
}

// siFreePort returns a loopback port that was free a moment ago.
func siFreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// siBegin begins a sign-in for s on e, closed with the test.
func siBegin(t testing.TB, e *testEnv, s Server) *SignIn {
	t.Helper()
	p, err := e.c.BeginSignIn(context.Background(), s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// siLocation plays the authorization step without following the redirect:
// it returns the Location the fake's /authorize answers authURL with.
func siLocation(t testing.TB, e *testEnv, authURL string) string {
	t.Helper()
	c := e.as.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(authURL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	return resp.Header.Get("Location")
}

// siGet sends method to u (a loopback URL) with host as the Host header
// ("" keeps u's) over a connection that is not kept alive, returning the
// status and body.
func siGet(t testing.TB, method, u, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// siTryGet GETs u over a connection that is not kept alive and returns the
// status, or -1 when the request failed; it may run on any goroutine.
func siTryGet(u string) int {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(u)
	if err != nil {
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

// siTryBrowse is browse for any goroutine: the callback's status, or -1
// when a step failed.
func siTryBrowse(e *testEnv, authURL string) int {
	c := e.as.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(authURL)
	if err != nil {
		return -1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return -1
	}
	return siTryGet(resp.Header.Get("Location"))
}

// siWithQuery returns loc with its query changed by edit.
func siWithQuery(t testing.TB, loc string, edit func(q url.Values)) string {
	t.Helper()
	u, err := url.Parse(loc)
	require.NoError(t, err)
	q := u.Query()
	edit(q)
	u.RawQuery = q.Encode()
	return u.String()
}

// siPending reports whether p has no outcome yet (Wait with an ended
// context returns canceled).
func siPending(t testing.TB, p *SignIn) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	siRequire(t, p.Wait(ctx), refusal.Transient, "canceled")
}

// siRedirectWith makes the fake's /authorize redirect with the request's
// state and the parameters of extra instead of a code.
func siRedirectWith(e *testEnv, extra url.Values) {
	e.as.handle("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		v := url.Values{"state": {q.Get("state")}}
		for k, vs := range extra {
			v[k] = vs
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+v.Encode(), http.StatusFound)
	})
}

func TestSignInLoopback(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	require.NoError(t, p.Wait(context.Background()), "Wait repeats the outcome until Close")

	r := siStored(t, e, "srv")
	assert.True(t, strings.HasPrefix(r.AccessToken, "at-"+canary), r.AccessToken)
	assert.True(t, strings.HasPrefix(r.RefreshToken, "rt-"+canary), r.RefreshToken)
	assert.Equal(t, e.now.Now().Add(time.Hour), r.Expiry)
	assert.Equal(t, "srv", r.Server)
	assert.Equal(t, e.as.MCP(), r.Resource)
	assert.Equal(t, e.as.URL(), r.Issuer)
	assert.Equal(t, e.as.URL()+"/token", r.TokenEndpoint)
	assert.Equal(t, e.as.URL()+"/revoke", r.RevocationEndpoint)
	assert.True(t, strings.HasPrefix(r.ClientID, "client-"), r.ClientID)
	assert.Equal(t, 1, e.as.count("/register"))

	form := siLastToken(e)
	assert.Equal(t, "authorization_code", form.Get("grant_type"))
	assert.Equal(t, e.as.MCP(), form.Get("resource"))
	assert.Equal(t, p.pk.verifier, form.Get("code_verifier"))
	assert.Equal(t, p.RedirectURI(), form.Get("redirect_uri"))
	assert.Equal(t, r.ClientID, form.Get("client_id"))

	// The credential works for the authenticator's loader.
	got, err := e.c.load(context.Background(), "srv", e.as.MCP())
	require.NoError(t, err)
	assert.Equal(t, r.AccessToken, got.AccessToken)
}

func TestSignInNoRevocationEndpoint(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) {
		m := f.defaultServerMeta()
		delete(m, "revocation_endpoint")
		f.serverMeta = m
	})
	p := siBegin(t, e, e.as.server("srv"))
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	assert.Empty(t, siStored(t, e, "srv").RevocationEndpoint)
}

func TestAuthorizationURL(t *testing.T) {
	t.Run("query", func(t *testing.T) {
		e := newEnv(t)
		p := siBegin(t, e, e.as.server("srv"))
		require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
		require.NoError(t, p.Wait(context.Background()))
		q := siLastAuth(e)
		assert.Equal(t, "code", q.Get("response_type"))
		assert.Equal(t, "S256", q.Get("code_challenge_method"))
		assert.Equal(t, s256Challenge(p.pk.verifier), q.Get("code_challenge"))
		assert.NotEqual(t, p.pk.verifier, q.Get("code_challenge"))
		assert.Equal(t, e.as.MCP(), q.Get("resource"))
		assert.Equal(t, "mcp.read mcp.write", q.Get("scope"))
		assert.Equal(t, p.RedirectURI(), q.Get("redirect_uri"))
		assert.Equal(t, siStored(t, e, "srv").ClientID, q.Get("client_id"))
		assert.Len(t, q.Get("state"), 43)
		assert.Equal(t, p.state, q.Get("state"))
		assert.NotContains(t, p.URL(), p.pk.verifier)
	})
	tests := []struct {
		name      string
		scopes    []string
		authorize string
		want      url.Values // expected values; "" means absent
	}{
		{"definition scopes", []string{"a", "b:c"}, "", url.Values{"scope": {"a b:c"}}},
		{"empty scopes omit scope", []string{}, "", url.Values{"scope": {""}}},
		{"endpoint query kept", nil, "/authorize?tenant=t1&state=theirs&scope=x", url.Values{
			"tenant": {"t1"}, "scope": {"mcp.read mcp.write"}}},
		{"endpoint scope kept when none requested", []string{}, "/authorize?scope=x", url.Values{"scope": {"x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.authorize != "" {
				e.as.set(func(f *fakeAS) {
					m := f.defaultServerMeta()
					m["authorization_endpoint"] = f.URL() + tt.authorize
					f.serverMeta = m
				})
			}
			s := e.as.server("srv")
			s.Scopes = tt.scopes
			p := siBegin(t, e, s)
			u, err := url.Parse(p.URL())
			require.NoError(t, err)
			assert.Equal(t, e.as.URL()+"/authorize", u.Scheme+"://"+u.Host+u.Path)
			q := u.Query()
			for k, v := range tt.want {
				if v[0] == "" {
					assert.NotContains(t, q, k)
					continue
				}
				assert.Equal(t, v, q[k], k)
			}
			assert.Equal(t, []string{p.state}, q["state"], "our state replaces theirs")
			assert.Equal(t, []string{"S256"}, q["code_challenge_method"])
		})
	}
}

func TestSignInCompletePasted(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	loc := siLocation(t, e, p.URL())
	require.True(t, strings.HasPrefix(loc, p.RedirectURI()+"?"), "the fake redirects to the redirect URI")
	require.NoError(t, p.Complete(context.Background(), "  "+loc+"\n"))
	r := siStored(t, e, "srv")
	assert.True(t, strings.HasPrefix(r.AccessToken, "at-"))
	require.NoError(t, p.Wait(context.Background()), "Wait sees the pasted outcome")

	// Replays: pasted again, or delivered to the loopback.
	siRequire(t, p.Complete(context.Background(), loc), refusal.Config, ReasonSignInUsed)
	status, body := siGet(t, http.MethodGet, loc, "")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, pageFailed, body)
	assert.Equal(t, r, siStored(t, e, "srv"), "a replay changes nothing")
}

func TestSignInReplayLoopback(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	loc := siLocation(t, e, p.URL())
	status, body := siGet(t, http.MethodGet, loc, "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, pageSignedIn, body)
	require.NoError(t, p.Wait(context.Background()))
	status, body = siGet(t, http.MethodGet, loc, "")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, pageFailed, body)
	siRequire(t, p.Complete(context.Background(), loc), refusal.Config, ReasonSignInUsed)
	assert.Equal(t, 1, e.as.count("/token"), "one exchange")

	// A second valid redirect of the same attempt is refused too.
	loc2 := siLocation(t, e, p.URL())
	siRequire(t, p.Complete(context.Background(), loc2), refusal.Config, ReasonSignInUsed)
	assert.Equal(t, 1, e.as.count("/token"))
}

func TestSignInConcurrentRedirects(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	loc := siLocation(t, e, p.URL())
	const n = 8
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { errs <- p.Complete(context.Background(), loc) })
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		if err == nil {
			ok++
			continue
		}
		siRequire(t, err, refusal.Config, ReasonSignInUsed)
	}
	assert.Equal(t, 1, ok, "exactly one redirect is accepted")
	assert.Equal(t, 1, e.as.count("/token"))
}

func TestSignInStateMismatchDoesNotConsume(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	loc := siLocation(t, e, p.URL())
	bad := []struct {
		name string
		edit func(q url.Values)
	}{
		{"wrong", func(q url.Values) { q.Set("state", canary) }},
		{"prefix", func(q url.Values) { q.Set("state", p.state[:42]) }},
		{"missing", func(q url.Values) { q.Del("state") }},
		{"empty", func(q url.Values) { q.Set("state", "") }},
		{"repeated", func(q url.Values) { q.Add("state", p.state) }},
		{"repeated wrong", func(q url.Values) { q["state"] = []string{canary, p.state} }},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			u := siWithQuery(t, loc, tt.edit)
			siRequire(t, p.Complete(context.Background(), u), refusal.Refused, ReasonSignInStateMismatch)
			status, body := siGet(t, http.MethodGet, u, "")
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, pageFailed, body, "nothing of the request is reflected")
			siPending(t, p)
		})
	}
	siRequire(t, p.Complete(context.Background(), loc+"&x=%zz"), refusal.Config, ReasonSignInRedirectInvalid)
	siRequire(t, p.Complete(context.Background(), loc+";x"), refusal.Config, ReasonSignInRedirectInvalid)
	siPending(t, p)
	assert.Zero(t, e.as.count("/token"))
	require.NoError(t, p.Complete(context.Background(), loc), "the attempt was not consumed")
	siStored(t, e, "srv")
}

func TestSignInPastedRedirectInvalid(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	loc := siLocation(t, e, p.URL())
	u, err := url.Parse(loc)
	require.NoError(t, err)
	port := u.Port()
	other := strconv.Itoa(siFreePort(t))
	q := "?" + u.RawQuery
	for _, raw := range []string{
		"",
		"not a url",
		"https://127.0.0.1:" + port + "/callback" + q,
		"http://localhost:" + port + "/callback" + q,
		"http://127.0.0.1:" + other + "/callback" + q,
		"http://127.0.0.1/callback" + q,
		"http://[::1]:" + port + "/callback" + q,
		"http://127.0.0.1:" + port + "/callback/" + q,
		"http://127.0.0.1:" + port + "/Callback" + q,
		"http://127.0.0.1:" + port + "/%63allback" + q,
		"http://127.0.0.1:" + port + "/x/../callback" + q,
		"http://127.0.0.1:" + port + q,
		"http://user@127.0.0.1:" + port + "/callback" + q,
		"http://127.0.0.1:" + port + "/callback" + q + "#frag",
		"http://127.0.0.1:0" + port + "/callback" + q,
		"http:127.0.0.1:" + port + "/callback" + q,
		"//127.0.0.1:" + port + "/callback" + q,
		"/callback" + q,
		q,
		"http://127.0.0.1:" + port + "/callback\x00" + q,
		"http://evil.example/?r=" + url.QueryEscape(loc),
	} {
		siRequire(t, p.Complete(context.Background(), raw), refusal.Config, ReasonSignInRedirectInvalid)
	}
	siPending(t, p)
	assert.Zero(t, e.as.count("/token"))
	require.NoError(t, p.Complete(context.Background(), strings.Replace(loc, "http://", "HTTP://", 1)),
		"the scheme is case-insensitive")
}

func TestSignInIssuer(t *testing.T) {
	tests := []struct {
		name      string
		advertise bool
		edit      func(q url.Values)
		ok        bool
	}{
		{"matching", true, nil, true},
		{"wrong", true, func(q url.Values) { q.Set("iss", "https://evil.example") }, false},
		{"wrong unadvertised", false, func(q url.Values) { q.Set("iss", "https://evil.example") }, false},
		{"trailing slash", true, func(q url.Values) { q.Set("iss", q.Get("iss")+"/") }, false},
		{"empty", true, func(q url.Values) { q.Set("iss", "") }, false},
		{"repeated", true, func(q url.Values) { q.Add("iss", q.Get("iss")) }, false},
		{"missing though advertised", true, func(q url.Values) { q.Del("iss") }, false},
		{"missing unadvertised", false, func(q url.Values) { q.Del("iss") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.advertiseIss = tt.advertise })
			p := siBegin(t, e, e.as.server("srv"))
			loc := siLocation(t, e, p.URL())
			u := loc
			if tt.edit != nil {
				u = siWithQuery(t, loc, tt.edit)
			}
			err := p.Complete(context.Background(), u)
			if tt.ok {
				require.NoError(t, err)
				siStored(t, e, "srv")
				return
			}
			siRequire(t, err, refusal.Refused, ReasonSignInIssuerMismatch)
			siRequire(t, p.Wait(context.Background()), refusal.Refused, ReasonSignInIssuerMismatch)
			siRequire(t, p.Complete(context.Background(), loc), refusal.Config, ReasonSignInUsed)
			assert.Zero(t, e.as.count("/token"), "no code is sent after a mix-up")
		})
	}
}

func TestSignInLoopbackTerminal(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(e *testEnv)
		class  refusal.Class
		reason string
	}{
		{"iss missing though advertised", func(e *testEnv) {
			e.as.set(func(f *fakeAS) { f.issInRedirect = false })
		}, refusal.Refused, ReasonSignInIssuerMismatch},
		{"denied", func(e *testEnv) {
			siRedirectWith(e, url.Values{"error": {"access_denied"}, "error_description": {"no " + canary}, "iss": {e.as.URL()}})
		}, refusal.AuthRefused, ReasonSignInDenied},
		{"denied without iss unadvertised", func(e *testEnv) {
			e.as.set(func(f *fakeAS) { f.advertiseIss = false })
			siRedirectWith(e, url.Values{"error": {canary}})
		}, refusal.AuthRefused, ReasonSignInDenied},
		{"denied with a code", func(e *testEnv) {
			siRedirectWith(e, url.Values{"error": {""}, "code": {canary}, "iss": {e.as.URL()}})
		}, refusal.AuthRefused, ReasonSignInDenied},
		{"no code", func(e *testEnv) {
			siRedirectWith(e, url.Values{"iss": {e.as.URL()}})
		}, refusal.Config, ReasonSignInRedirectInvalid},
		{"empty code", func(e *testEnv) {
			siRedirectWith(e, url.Values{"iss": {e.as.URL()}, "code": {""}})
		}, refusal.Config, ReasonSignInRedirectInvalid},
		{"repeated code", func(e *testEnv) {
			siRedirectWith(e, url.Values{"iss": {e.as.URL()}, "code": {canary, canary}})
		}, refusal.Config, ReasonSignInRedirectInvalid},
		{"token 400", func(e *testEnv) {
			e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": canary})
			})
		}, refusal.AuthRefused, ReasonTokenRefused},
		{"token 401", func(e *testEnv) {
			e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
		}, refusal.AuthRefused, ReasonTokenRefused},
		{"token 500", func(e *testEnv) {
			e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, canary, 500) })
		}, refusal.Transient, ReasonUnavailable},
		{"token 200 with an error code", func(e *testEnv) {
			e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, http.StatusOK, map[string]any{"access_token": canary, "token_type": "Bearer", "error": "invalid_client"})
			})
		}, refusal.AuthRefused, ReasonClientAuthRefused},
		{"token not json", func(e *testEnv) {
			e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "access_token="+canary) })
		}, refusal.Protocol, ReasonTokenResponseInvalid},
		{"token not bearer", func(e *testEnv) {
			e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, http.StatusOK, map[string]any{"access_token": canary, "token_type": "mac"})
			})
		}, refusal.Protocol, ReasonTokenResponseInvalid},
		{"token redirect", func(e *testEnv) {
			e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, e.as.URL()+"/token2?"+canary, http.StatusTemporaryRedirect)
			})
		}, refusal.Refused, ReasonRedirectRefused},
		{"store fails", func(e *testEnv) {
			// A stored registration is reused, so nothing is written
			// before the code is exchanged.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				panic(err)
			}
			port := ln.Addr().(*net.TCPAddr).Port
			_ = ln.Close()
			seedClient(e, &clientRecord{Kind: clientRegistered, Server: "srv", Resource: e.as.MCP(), Issuer: e.as.URL(),
				ClientID: "client-" + canary, Method: AuthNone, RedirectURI: fmt.Sprintf("http://127.0.0.1:%d/callback", port)})
			e.store.Fail("Set", errors.New("disk full "+canary))
		}, refusal.Transient, ReasonStoreUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(e)
			p := siBegin(t, e, e.as.server("srv"))
			assert.Equal(t, http.StatusBadRequest, browse(t, e.as.ts, p.URL()))
			siRequire(t, p.Wait(context.Background()), tt.class, tt.reason)
			loc := siLocation(t, e, p.URL())
			siRequire(t, p.Complete(context.Background(), loc), refusal.Config, ReasonSignInUsed)
		})
	}
}

func TestSignInTokenRefusedKeepsOlderCredential(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	before, err := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
	require.NoError(t, err)

	e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": canary})
	})
	p2 := siBegin(t, e, e.as.server("srv"))
	loc := siLocation(t, e, p2.URL())
	siRequire(t, p2.Complete(context.Background(), loc), refusal.AuthRefused, ReasonTokenRefused)
	after, err := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
	require.NoError(t, err)
	assert.Equal(t, before, after, "the older credential is untouched")

	// A successful re-authentication replaces it.
	e.as.handle("/token", nil)
	p3 := siBegin(t, e, e.as.server("srv"))
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p3.URL()))
	require.NoError(t, p3.Wait(context.Background()))
	assert.NotEqual(t, before, func() []byte {
		b, err := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
		require.NoError(t, err)
		return b
	}())
}

func TestSignInWaitContext(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- p.Wait(ctx) }()
	cancel()
	siRequire(t, <-errc, refusal.Transient, "canceled")

	dctx, dcancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer dcancel()
	siRequire(t, p.Wait(dctx), refusal.Transient, "deadline_exceeded")

	// The listener stays open until Close.
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
}

func TestSignInCloseEndsWait(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	errc := make(chan error, 1)
	go func() { errc <- p.Wait(context.Background()) }()
	require.NoError(t, p.Close())
	siRequire(t, <-errc, refusal.Config, ReasonSignInUsed)
}

func TestSignInCloseLeak(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) }) // runs after the fake is closed
	e := newEnv(t)
	p, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
	require.NoError(t, err)
	loc := siLocation(t, e, p.URL())

	// A stray request and a refused one, then Close twice, concurrently.
	status, _ := siGet(t, http.MethodGet, siWithQuery(t, loc, func(q url.Values) { q.Set("state", "x") }), "")
	assert.Equal(t, http.StatusBadRequest, status)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { assert.NoError(t, p.Close()) })
	}
	wg.Wait()
	require.NoError(t, p.Close())
	siRequire(t, p.Wait(context.Background()), refusal.Config, ReasonSignInUsed)
	siRequire(t, p.Complete(context.Background(), loc), refusal.Config, ReasonSignInUsed)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err = c.Get(loc)
	require.Error(t, err, "the listener is closed")
	assert.Zero(t, e.as.count("/token"))
}

func TestSignInCloseDuringExchange(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
	e := newEnv(t)
	entered, release := make(chan struct{}), make(chan struct{})
	e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-" + canary, "token_type": "Bearer"})
	})
	defer close(release)
	p, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
	require.NoError(t, err)
	loc := siLocation(t, e, p.URL())
	done := make(chan int, 1)
	go func() { done <- siTryGet(loc) }()
	<-entered
	require.NoError(t, p.Close())
	assert.Equal(t, http.StatusBadRequest, <-done, "the exchange was canceled")
	_, err = e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
	require.Error(t, err, "nothing stored")
}

func TestSignInListener(t *testing.T) {
	e := newEnv(t)
	p := siBegin(t, e, e.as.server("srv"))
	u, err := url.Parse(p.RedirectURI())
	require.NoError(t, err)
	assert.Equal(t, "http", u.Scheme)
	assert.Equal(t, "127.0.0.1", u.Hostname())
	assert.Equal(t, "/callback", u.Path)
	port := u.Port()

	// Bound to 127.0.0.1 only: not reachable on IPv6 loopback or another
	// local address.
	if c, err := net.Dial("tcp", net.JoinHostPort("::1", port)); err == nil {
		c.Close()
		t.Fatal("the listener answers on [::1]")
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			ip, ok := a.(*net.IPNet)
			if !ok || ip.IP.IsLoopback() || ip.IP.To4() == nil {
				continue
			}
			if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), port), time.Second); err == nil {
				c.Close()
				t.Fatalf("the listener answers on %s", ip.IP)
			}
		}
	}

	// Only GET /callback with the redirect URI's Host; nothing consumes.
	loc := siLocation(t, e, p.URL())
	lu, err := url.Parse(loc)
	require.NoError(t, err)
	cases := []struct {
		name, method, target, host string
		status                     int
	}{
		{"post", http.MethodPost, loc, "", http.StatusMethodNotAllowed},
		{"other path", http.MethodGet, "http://" + lu.Host + "/other?" + lu.RawQuery, "", http.StatusNotFound},
		{"escaped path", http.MethodGet, "http://" + lu.Host + "/%63allback?" + lu.RawQuery, "", http.StatusNotFound},
		{"rebinding host", http.MethodGet, loc, "localhost:" + port, http.StatusNotFound},
		{"foreign host", http.MethodGet, loc, "evil.example", http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := siGet(t, tc.method, tc.target, tc.host)
			assert.Equal(t, tc.status, status)
			assert.NotContains(t, body, canary)
			assert.NotContains(t, body, "CANARY")
			siPending(t, p)
		})
	}
	status, body := siGet(t, http.MethodGet, loc, "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, pageSignedIn, body)
}

func TestSignInCallbackPort(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	s.CallbackPort = siFreePort(t)
	p := siBegin(t, e, s)
	assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(s.CallbackPort)+"/callback", p.RedirectURI())
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))

	// The port is taken (by the open sign-in p).
	_, err := e.c.BeginSignIn(context.Background(), s)
	siRequire(t, err, refusal.Transient, ReasonCallbackUnavailable)
	for _, port := range []int{-1, 65536, 1 << 20} {
		s.CallbackPort = port
		_, err := e.c.BeginSignIn(context.Background(), s)
		siRequire(t, err, refusal.Config, ReasonCallbackPortInvalid)
	}
	registered := e.as.count("/register")
	assert.Equal(t, 1, registered, "a failed listener registers nothing")
}

func TestSignInDiscoveryFailure(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) {
		m := f.defaultServerMeta()
		m["code_challenge_methods_supported"] = []string{"plain"}
		f.serverMeta = m
	})
	_, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
	siRequire(t, err, refusal.Refused, ReasonPKCEUnsupported)
	assert.Zero(t, e.as.count("/register"))
}

func TestSignInWith(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		opt := goleak.IgnoreCurrent()
		t.Cleanup(func() { goleak.VerifyNone(t, opt) })
		e := newEnv(t)
		err := e.c.SignInWith(context.Background(), e.as.server("srv"), func(authURL string) error {
			require.Equal(t, http.StatusOK, browse(t, e.as.ts, authURL))
			return nil
		})
		require.NoError(t, err)
		siStored(t, e, "srv")
	})
	t.Run("waits for the browser", func(t *testing.T) {
		e := newEnv(t)
		browsed := make(chan int, 1)
		err := e.c.SignInWith(context.Background(), e.as.server("srv"), func(authURL string) error {
			go func() { browsed <- siTryBrowse(e, authURL) }()
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, <-browsed)
		siStored(t, e, "srv")
	})
	errTests := []struct {
		name   string
		open   func(string) error
		class  refusal.Class
		reason string
	}{
		{"nil open", nil, refusal.Config, "oauth_options_invalid"},
		{"open fails", func(u string) error { return errors.New("no browser for " + u + canary) },
			refusal.Transient, ReasonSignInOpenFailed},
		{"open refuses", func(string) error { return refusal.New(refusal.Refused, "host_said_no", "") },
			refusal.Refused, "host_said_no"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			err := e.c.SignInWith(context.Background(), e.as.server("srv"), tt.open)
			siRequire(t, err, tt.class, tt.reason)
			assert.Equal(t, "srv", refusalOf(err).Server)
		})
	}
	t.Run("canceled", func(t *testing.T) {
		e := newEnv(t)
		ctx, cancel := context.WithCancel(context.Background())
		err := e.c.SignInWith(ctx, e.as.server("srv"), func(string) error { cancel(); return nil })
		siRequire(t, err, refusal.Transient, "canceled")
	})
}

// siOffline returns a SignIn built without a network: its Client reaches no
// server (every request is Transient ReasonUnavailable) and its state is
// random, so no fuzzed input can know it.
func siOffline(tb testing.TB) *SignIn {
	c, err := New(Options{
		Client: func(context.Context, *url.URL) (*http.Client, error) { return nil, errors.New("offline") },
		Store:  portstest.NewTokenStore(), Locker: portstest.NewLocker(),
	})
	require.NoError(tb, err)
	tok, _ := url.Parse("https://as.example/token")
	return &SignIn{
		c: c, s: Server{ID: "srv"}, pk: newPKCE(), state: randomString(), clientID: "client",
		ep:   &endpoints{resource: "https://mcp.example/mcp", issuer: "https://as.example", token: tok, issParameter: true},
		host: "127.0.0.1:5555", redirectURI: "http://127.0.0.1:5555/callback",
		closedCh: make(chan struct{}), done: make(chan struct{}),
	}
}

func FuzzComplete(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:5555/callback?code=c&state=s&iss=https%3A%2F%2Fas.example",
		"http://127.0.0.1:5555/callback",
		"HTTP://127.0.0.1:5555/callback?",
		"http://127.0.0.1:5555/callback?state=%zz",
		"http://127.0.0.1:5555/callback#x",
		"http://127.0.0.1:05555/callback",
		"http://127.0.0.1:5555/%63allback",
		"http://u@127.0.0.1:5555/callback",
		" http://127.0.0.1:5555/callback?state=a;b ",
		"http://[::1]:5555/callback",
		"http:/127.0.0.1:5555/callback",
		"\x00",
	} {
		f.Add(s)
	}
	p := siOffline(f)
	f.Fuzz(func(t *testing.T, raw string) {
		q, ok := pastedQuery(raw, p.host)
		if ok {
			u, err := url.Parse(strings.TrimSpace(raw))
			require.NoError(t, err)
			require.Equal(t, "http", u.Scheme)
			require.Equal(t, "127.0.0.1:5555", u.Host)
			require.Equal(t, "/callback", u.Path)
			require.Equal(t, "/callback", u.EscapedPath())
			require.Nil(t, u.User)
			require.Empty(t, u.Fragment)
			require.Equal(t, u.RawQuery, q)
		}
		err := p.Complete(context.Background(), raw)
		require.Error(t, err, "a redirect without this sign-in's state is never accepted")
		reason := refusal.ReasonOf(err)
		if !ok {
			require.Equal(t, ReasonSignInRedirectInvalid, reason)
		} else {
			require.Contains(t, []string{ReasonSignInRedirectInvalid, ReasonSignInStateMismatch}, reason)
		}
		require.NoError(t, p.usedErr(), "nothing consumed")
	})
}

func FuzzRedirectQuery(f *testing.F) {
	for _, s := range []string{
		"code=c&iss=https%3A%2F%2Fas.example",
		"error=access_denied&iss=https%3A%2F%2Fas.example",
		"code=c",
		"iss=https%3A%2F%2Fas.example&code=&code=x",
		"iss=x",
		"%zz",
		";",
		"state=other",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		p := siOffline(t)
		err := p.accept(context.Background(), "state="+p.state+"&"+rawQuery)
		require.Error(t, err, "an offline sign-in never succeeds")
		requireNoCanary(t, err)
		re := refusalOf(err)
		require.NotNil(t, re)
		switch re.Reason {
		case ReasonSignInRedirectInvalid, ReasonSignInStateMismatch:
			// Refused before the state was taken, or a terminal missing code.
		case ReasonSignInIssuerMismatch, ReasonSignInDenied, ReasonUnavailable:
			require.Error(t, p.usedErr(), "consumed")
			require.Equal(t, err, p.outcome())
		default:
			t.Fatalf("unexpected reason %q", re.Reason)
		}
		if re.Reason == ReasonUnavailable {
			q, _ := url.ParseQuery(rawQuery)
			require.Equal(t, []string{"https://as.example"}, q["iss"])
			require.NotContains(t, q, "error")
			require.NotEmpty(t, q.Get("code"))
		}
	})
}
