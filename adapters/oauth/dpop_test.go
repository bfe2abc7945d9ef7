package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// dpopEnv is a testEnv whose authorization server advertises DPoP (ES256).
func dpopEnv(t *testing.T) *testEnv {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) { f.dpopAlgs = []string{"RS256", "ES256"} })
	return e
}

// dpopSignIn signs in to server id at e's fake through the browser.
func dpopSignIn(t *testing.T, e *testEnv, s Server) {
	t.Helper()
	p := siBegin(t, e, s)
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
}

// rsCheck checks h, the headers of a request to htu with method, as a
// resource server taking tokens of the fake does: "Authorization: DPoP"
// with a token the fake issued, and a proof of the key it is bound to. It
// returns the proof's claims.
func rsCheck(t *testing.T, e *testEnv, h http.Header, method, htu string) map[string]any {
	t.Helper()
	auth := h.Get("Authorization")
	require.True(t, strings.HasPrefix(auth, "DPoP "), "the DPoP scheme, never Bearer")
	tok := strings.TrimPrefix(auth, "DPoP ")
	require.Len(t, h.Values("DPoP"), 1, "one proof")
	jkt, claims, err := verifyProof(h.Get("DPoP"), method, htu, e.now.Now(), tok)
	require.NoError(t, err)
	e.as.mu.Lock()
	bound := e.as.bound[tok]
	e.as.mu.Unlock()
	require.NotEmpty(t, bound, "a DPoP-bound token of the fake")
	require.Equal(t, bound, jkt, "the proof's key is the one the token is bound to")
	return claims
}

// TestDPoPSignIn: where the authorization server advertises ES256, a
// sign-in binds its tokens to a fresh proof key: the code exchange carries
// a proof, the key is stored beside the credential (which names its
// thumbprint), and every request gets "Authorization: DPoP" with a fresh
// proof for its method and URL (no query), never Bearer.
func TestDPoPSignIn(t *testing.T) {
	e := dpopEnv(t)
	s := e.as.server("srv")
	dpopSignIn(t, e, s)

	e.as.mu.Lock()
	require.Len(t, e.as.proofs, 1, "the code exchange carried one valid proof")
	require.Empty(t, e.as.proofErrs)
	e.as.mu.Unlock()
	rec, err := e.c.load(context.Background(), "srv", e.as.MCP())
	require.NoError(t, err)
	require.NotNil(t, rec)
	assert.Equal(t, tokenTypeDPoP, rec.TokenType)
	assert.NotEmpty(t, rec.DPoPJKT)
	b, err := e.store.Get(context.Background(), proofKeyKey(storeKey("srv", rec.Resource)))
	require.NoError(t, err, "the key is stored beside the credential")
	k, err := parseProofKey(b)
	require.NoError(t, err)
	assert.Equal(t, rec.DPoPJKT, k.jkt)

	a, req := tokAuth(t, e.c, s)
	jtis := map[string]bool{}
	for _, r := range []struct{ method, url string }{
		{http.MethodPost, ""}, // the transport says nothing: the server URL
		{http.MethodPost, e.as.MCP()},
		{http.MethodGet, e.as.MCP()},
		{http.MethodDelete, strings.ToUpper(e.as.URL()[:5]) + e.as.URL()[5:] + "/mcp?x=1#f"},
	} {
		req.Method, req.URL = r.method, r.url
		h, err := a.Headers(context.Background(), req)
		require.NoError(t, err)
		claims := rsCheck(t, e, h, r.method, e.as.MCP())
		jti := claims["jti"].(string)
		assert.False(t, jtis[jti], "a fresh jti per request")
		jtis[jti] = true
		_, hasNonce := claims["nonce"]
		assert.False(t, hasNonce, "no nonce before the server gives one")
	}
}

// TestDPoPNotUsed: without ES256 advertised, or with DPoP turned off for the
// server by the host, the tokens are Bearer tokens and no proof is sent.
func TestDPoPNotUsed(t *testing.T) {
	for _, tt := range []struct {
		name    string
		algs    []string
		disable bool
	}{
		{"not advertised", nil, false},
		{"another algorithm only", []string{"RS256"}, false},
		{"turned off by the host", []string{"ES256"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.dpopAlgs = tt.algs })
			s := e.as.server("srv")
			s.DisableDPoP = tt.disable
			dpopSignIn(t, e, s)
			assert.Empty(t, siLastTokenHeader(e))
			rec := siStored(t, e, "srv")
			assert.Empty(t, rec.TokenType)
			a, req := tokAuth(t, e.c, s)
			h, err := a.Headers(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, rec.AccessToken, bearer(t, h))
			assert.Empty(t, h.Values("DPoP"))
			_, err = e.store.Get(context.Background(), proofKeyKey(storeKey("srv", e.as.MCP())))
			assert.ErrorIs(t, err, ports.ErrNotFound, "no key is made")
		})
	}
}

// siLastTokenHeader returns the DPoP header of the last token request, as
// the fake recorded it (the proofs it accepted).
func siLastTokenHeader(e *testEnv) []map[string]any {
	e.as.mu.Lock()
	defer e.as.mu.Unlock()
	return e.as.proofs
}

// TestDPoPDowngradeRefused: an authorization server that advertises DPoP
// but answers a proof with a Bearer token is refused by name; nothing is
// stored, neither the credential nor the key.
func TestDPoPDowngradeRefused(t *testing.T) {
	e := dpopEnv(t)
	e.as.set(func(f *fakeAS) { f.downgrade = true })
	p := siBegin(t, e, e.as.server("srv"))
	browse(t, e.as.ts, p.URL())
	err := p.Wait(context.Background())
	siRequire(t, err, refusal.Refused, ReasonDPoPDowngrade)
	for _, k := range []string{storeKey("srv", e.as.MCP()), proofKeyKey(storeKey("srv", e.as.MCP()))} {
		_, err := e.store.Get(context.Background(), k)
		assert.ErrorIs(t, err, ports.ErrNotFound)
	}

	t.Run("at refresh", func(t *testing.T) {
		e := dpopEnv(t)
		dpopSignIn(t, e, e.as.server("srv"))
		before := siStored(t, e, "srv")
		e.as.set(func(f *fakeAS) { f.downgrade = true })
		_, err := e.c.refresh(context.Background(), before)
		tokRequire(t, err, refusal.Refused, ReasonDPoPDowngrade)
		assert.True(t, before.same(siStored(t, e, "srv")), "the credential is kept")
	})
}

// TestDPoPAuthorizationServerNonce: a token endpoint that wants a nonce
// (use_dpop_nonce and a DPoP-Nonce) gets the request once more with it;
// one that asks again with yet another nonce is refused by name after that
// one retry. A later request carries the nonce from the start.
func TestDPoPAuthorizationServerNonce(t *testing.T) {
	e := dpopEnv(t)
	e.as.set(func(f *fakeAS) { f.asNonce = "as-nonce-1" })
	dpopSignIn(t, e, e.as.server("srv"))
	assert.Equal(t, 2, e.as.count("/token"), "one retry with the nonce")
	proofs := siLastTokenHeader(e)
	require.Len(t, proofs, 1)
	assert.Equal(t, "as-nonce-1", proofs[0]["nonce"])

	rec := siStored(t, e, "srv")
	_, err := e.c.refresh(context.Background(), rec)
	require.NoError(t, err)
	assert.Equal(t, 3, e.as.count("/token"), "the refresh carries the nonce at once")

	e2 := dpopEnv(t)
	e2.as.set(func(f *fakeAS) { f.asNonce, f.nonceEvery = "n", true })
	p := siBegin(t, e2, e2.as.server("srv"))
	browse(t, e2.as.ts, p.URL())
	siRequire(t, p.Wait(context.Background()), refusal.AuthRefused, ReasonDPoPNonceRefused)
	assert.Equal(t, 2, e2.as.count("/token"), "one retry, never a loop")
}

// TestDPoPResourceServerNonce: a 401 with a DPoP challenge saying
// use_dpop_nonce and a DPoP-Nonce makes the request be retried, without a
// refresh, with proofs carrying that nonce; a nonce no proof can carry, or
// one asked of a Bearer credential, is refused by name.
func TestDPoPResourceServerNonce(t *testing.T) {
	e := dpopEnv(t)
	s := e.as.server("srv")
	dpopSignIn(t, e, s)
	tokens := e.as.count("/token")
	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	r := tokRefusal(a, http.StatusUnauthorized, `DPoP error="use_dpop_nonce", error_description="nonce"`)
	r.DPoPNonce = "rs-nonce-" + canary
	retry, err := a.Refused(context.Background(), r)
	require.NoError(t, err)
	assert.True(t, retry)
	assert.Equal(t, tokens, e.as.count("/token"), "nothing refreshed")
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "rs-nonce-"+canary, rsCheck(t, e, h, http.MethodPost, e.as.MCP())["nonce"])

	for _, bad := range []string{"", `with"quote`, "with space", strings.Repeat("n", maxNonce+1)} {
		r.DPoPNonce = bad
		retry, err := a.Refused(context.Background(), r)
		assert.False(t, retry)
		tokRequire(t, err, refusal.AuthRefused, ReasonDPoPNonceRefused)
	}
	h, err = a.Headers(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "rs-nonce-"+canary, rsCheck(t, e, h, http.MethodPost, e.as.MCP())["nonce"], "a bad nonce replaces nothing")

	eb := newEnv(t)
	sb, _ := tokSeed(t, eb, "srv", nil)
	ab, _ := tokAuth(t, eb.c, sb)
	rb := tokRefusal(ab, http.StatusUnauthorized, `DPoP error="use_dpop_nonce"`)
	rb.DPoPNonce = "n"
	retry, err = ab.Refused(context.Background(), rb)
	assert.False(t, retry)
	tokRequire(t, err, refusal.AuthRefused, ReasonDPoPNonceRefused)
}

// TestDPoPRefresh: an expired DPoP-bound token is refreshed with a proof of
// the same key (its refresh token is bound to it) and stays DPoP-bound.
func TestDPoPRefresh(t *testing.T) {
	e := dpopEnv(t)
	s := e.as.server("srv")
	dpopSignIn(t, e, s)
	first := siStored(t, e, "srv")
	e.now.Add(2 * time.Hour)
	a, req := tokAuth(t, e.c, s)
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	rsCheck(t, e, h, http.MethodPost, e.as.MCP())
	next := siStored(t, e, "srv")
	assert.NotEqual(t, first.AccessToken, next.AccessToken)
	assert.Equal(t, first.DPoPJKT, next.DPoPJKT, "the same key")
	assert.Equal(t, tokenTypeDPoP, next.TokenType)
	assert.Equal(t, "refresh_token", siLastToken(e).Get("grant_type"))
	e.as.mu.Lock()
	assert.Empty(t, e.as.proofErrs)
	e.as.mu.Unlock()
}

// TestDPoPKeyMissing: a DPoP-bound credential whose key is gone (or was
// replaced by another) is never sent, as Bearer or otherwise: sign in again.
func TestDPoPKeyMissing(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(t *testing.T, e *testEnv, key string)
	}{
		{"deleted", func(t *testing.T, e *testEnv, key string) {
			require.NoError(t, e.store.Delete(context.Background(), key))
		}},
		{"another key", func(t *testing.T, e *testEnv, key string) {
			k, err := newProofKey()
			require.NoError(t, err)
			b, err := k.marshal()
			require.NoError(t, err)
			require.NoError(t, e.store.Set(context.Background(), key, b))
		}},
		{"unreadable", func(t *testing.T, e *testEnv, key string) {
			require.NoError(t, e.store.Set(context.Background(), key, []byte("{"+canary)))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := dpopEnv(t)
			s := e.as.server("srv")
			dpopSignIn(t, e, s)
			tt.mod(t, e, proofKeyKey(storeKey("srv", e.as.MCP())))
			c := e.client(t) // another process: nothing parsed yet
			a, req := tokAuth(t, c, s)
			h, err := a.Headers(context.Background(), req)
			assert.Nil(t, h)
			tokRequire(t, err, refusal.AuthRequired, ReasonProofKeyMissing)
		})
	}
}

// orderStore records the order of Deletes of a token store.
type orderStore struct {
	ports.TokenStore
	mu      sync.Mutex
	deletes []string
}

func (o *orderStore) Delete(ctx context.Context, key string) error {
	o.mu.Lock()
	o.deletes = append(o.deletes, key)
	o.mu.Unlock()
	return o.TokenStore.Delete(ctx, key)
}

// TestDPoPSignOut: signing out deletes the credential, then its key
// (tokens first), then asks for the revocation.
func TestDPoPSignOut(t *testing.T) {
	e := dpopEnv(t)
	s := e.as.server("srv")
	dpopSignIn(t, e, s)
	os := &orderStore{TokenStore: e.store}
	c, err := New(Options{Client: func(_ context.Context, _ *url.URL) (*http.Client, error) { return e.as.ts.Client(), nil },
		Store: os, Locker: e.locker, Now: e.now.Now})
	require.NoError(t, err)
	require.NoError(t, c.SignOut(context.Background(), s))
	key := storeKey("srv", e.as.MCP())
	require.GreaterOrEqual(t, len(os.deletes), 2)
	assert.Equal(t, []string{key, proofKeyKey(key)}, os.deletes[:2], "tokens first")
	for _, k := range []string{key, proofKeyKey(key)} {
		_, err := e.store.Get(context.Background(), k)
		assert.ErrorIs(t, err, ports.ErrNotFound)
	}
	e.as.mu.Lock()
	assert.Len(t, e.as.revoked, 1)
	e.as.mu.Unlock()
}

// TestDPoPHeadless: a client credentials sign-in binds its tokens too
// when the authorization server advertises DPoP, and its renewal carries a
// proof of the same key.
func TestDPoPHeadless(t *testing.T) {
	e := dpopEnv(t)
	e.as.set(func(f *fakeAS) { f.secrets["svc"] = "s" })
	s := e.as.server("srv")
	require.NoError(t, e.c.SignInClientCredentials(context.Background(), s, ClientCredentials{ClientID: "svc", Secret: "s"}))
	rec := siStored(t, e, "srv")
	assert.Equal(t, tokenTypeDPoP, rec.TokenType)
	e.now.Add(2 * time.Hour)
	a, req := tokAuth(t, e.c, s)
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	rsCheck(t, e, h, http.MethodPost, e.as.MCP())
	assert.Equal(t, rec.DPoPJKT, siStored(t, e, "srv").DPoPJKT)
}

// TestProofFormat checks a proof against go-jose's reading of it: the
// header (typ, alg, a public JWK and nothing private), the claims exactly,
// and that a URL needing JSON escapes is escaped.
func TestProofFormat(t *testing.T) {
	k, err := newProofKey()
	require.NoError(t, err)
	now := time.Unix(1_900_000_000, 0)
	proof, err := k.proof("POST", "https://h.example/p\"\\q", now, "n-1", athOf("tok"))
	require.NoError(t, err)
	sig, err := jose.ParseSigned(proof, []jose.SignatureAlgorithm{jose.ES256})
	require.NoError(t, err)
	hdr := sig.Signatures[0].Protected
	assert.Equal(t, "dpop+jwt", hdr.ExtraHeaders["typ"])
	require.True(t, hdr.JSONWebKey.IsPublic())
	payload, err := sig.Verify(hdr.JSONWebKey.Key)
	require.NoError(t, err)
	raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(proof, ".")[0])
	assert.NotContains(t, string(raw), `"d"`, "no private part in the header")
	assert.Contains(t, string(payload), `"htu":"https://h.example/p\"\\q"`)
	assert.Contains(t, string(payload), `"iat":1900000000`)
	assert.Contains(t, string(payload), `"nonce":"n-1"`)
	assert.Contains(t, string(payload), `"ath":"`+athOf("tok")+`"`)

	// The stored form round-trips to the same key.
	b, err := k.marshal()
	require.NoError(t, err)
	k2, err := parseProofKey(b)
	require.NoError(t, err)
	assert.Equal(t, k.jkt, k2.jkt)
	assert.Equal(t, k.header, k2.header)

	// Another curve is never a proof key.
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	_, err = newProofKeyFrom(p384)
	assert.Error(t, err)
}

// TestParseProofKeyRefuses: what is not the stored form of a P-256 key is
// refused without echoing it.
func TestParseProofKeyRefuses(t *testing.T) {
	for _, in := range []string{"", "{}", `{"v":1,"crv":"P-256","d":"` + canary + `"}`, `{"v":2,"crv":"P-256","d":"AA"}`,
		`{"v":1,"crv":"P-384","d":"AA"}`, `{"v":1,"crv":"P-256","d":"` + strings.Repeat("A", 43) + `"}`} {
		_, err := parseProofKey([]byte(in))
		require.Error(t, err, in)
		assert.NotContains(t, err.Error(), canary)
	}
}

// FuzzParseProofKey: parseProofKey never panics, and a key it accepts signs
// proofs its own thumbprint names.
func FuzzParseProofKey(f *testing.F) {
	k, _ := newProofKey()
	b, _ := k.marshal()
	f.Add(b)
	f.Add([]byte(`{"v":1,"crv":"P-256","d":""}`))
	f.Add([]byte(`{"v":1,"crv":"P-256","d":"_____________________________________________w"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		k, err := parseProofKey(in)
		if err != nil {
			return
		}
		p, err := k.proof("POST", "https://a/b", time.Unix(1, 0), "", "")
		require.NoError(t, err)
		jkt, _, err := verifyProof(p, "POST", "https://a/b", time.Unix(1, 0), "")
		require.NoError(t, err)
		require.Equal(t, k.jkt, jkt)
	})
}

// FuzzValidNonce: a nonce validNonce accepts is printable ASCII without a
// quote or backslash, so it can go into a proof's JSON unescaped; one it
// refuses is never kept.
func FuzzValidNonce(f *testing.F) {
	for _, s := range []string{"abc", `a"b`, "a\\b", "a b", "\x00", "é", strings.Repeat("x", maxNonce+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		var n nonceCache
		changed := n.set("o", v)
		if !validNonce(v) {
			require.False(t, changed)
			require.Empty(t, n.get("o"))
			return
		}
		require.True(t, changed)
		require.Equal(t, v, n.get("o"))
		require.LessOrEqual(t, len(v), maxNonce)
		require.False(t, strings.ContainsAny(v, "\"\\ "))
		k, _ := newProofKey()
		p, err := k.proof("POST", "https://a/b", time.Unix(1, 0), v, "")
		require.NoError(t, err)
		_, claims, err := verifyProof(p, "POST", "https://a/b", time.Unix(1, 0), "")
		require.NoError(t, err)
		require.Equal(t, v, claims["nonce"])
	})
}

// TestHTU: a proof's htu is the target URI without query or fragment,
// scheme and host lower case, the path as escaped; the Authenticator of a
// server whose URL has a query uses it without.
func TestHTU(t *testing.T) {
	for in, want := range map[string]string{
		"https://H.example/MCP?x=1#f":   "https://h.example/MCP",
		"HTTPS://h.example:8443/a%2Fb/": "https://h.example:8443/a%2Fb/",
		"https://h.example":             "https://h.example",
	} {
		got, ok := htuOf(in)
		require.True(t, ok, in)
		assert.Equal(t, want, got, in)
		got, err := requestHTU(in, "srv")
		require.NoError(t, err)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"/relative", "mailto:x", ""} {
		_, ok := htuOf(in)
		assert.False(t, ok, in)
	}
	c := discoveryClient(t, testMaxBody, nil)
	a, err := c.Authenticator(Server{ID: "srv", URL: "https://" + mcpHost + "/mcp?tenant=" + canary})
	require.NoError(t, err)
	assert.Equal(t, "https://"+mcpHost+"/mcp", a.htu)
}

// TestPresignedProof: a proof is signed ahead once two requests came within
// presignAge, and is used only by a request it fits (method, URL, token,
// nonce) within presignAge of its signing, and only once; otherwise the
// request signs its own.
func TestPresignedProof(t *testing.T) {
	e := dpopEnv(t)
	s := e.as.server("srv")
	dpopSignIn(t, e, s)
	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	a.mu.Lock()
	assert.False(t, a.signing || a.next != nil, "nothing is signed ahead after one request")
	a.mu.Unlock()
	ready := func() *nextProof {
		t.Helper()
		_, err := a.Headers(context.Background(), req) // a second request soon after
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.next != nil && !a.signing
		}, 5*time.Second, time.Millisecond)
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.next
	}
	n := ready()
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, n.proof, h.Get("DPoP"), "a fitting proof is taken")
	rsCheck(t, e, h, http.MethodPost, e.as.MCP())

	for _, tt := range []struct {
		name string
		edit func(r *ports.AuthRequest)
	}{
		{"another method", func(r *ports.AuthRequest) { r.Method = http.MethodGet }},
		{"another URL", func(r *ports.AuthRequest) { r.URL = e.as.URL() + "/other" }},
		{"too old", func(*ports.AuthRequest) { e.now.Add(presignAge + time.Second) }},
		{"a nonce came", func(*ports.AuthRequest) {
			r := tokRefusal(a, http.StatusUnauthorized, `DPoP error="use_dpop_nonce"`)
			r.DPoPNonce = "fresh-nonce"
			_, err := a.Refused(context.Background(), r)
			require.NoError(t, err)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ready()
			r := req
			tt.edit(&r)
			h, err := a.Headers(context.Background(), r)
			require.NoError(t, err)
			assert.NotEqual(t, n.proof, h.Get("DPoP"))
			htu := r.URL
			if htu == "" {
				htu = e.as.MCP()
			}
			rsCheck(t, e, h, r.Method, htu)
		})
	}
}
