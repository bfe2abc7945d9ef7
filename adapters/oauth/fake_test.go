package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports/portstest"
)

// canary is planted in every secret the fake hands out (tokens, codes,
// client ids) and in URL paths and queries; no error may contain it.
const canary = "CANARY-7f3a"

// fakeAS is an MCP server's protected-resource metadata and its
// authorization server, on one TLS server: the MCP endpoint is URL()+"/mcp"
// and the issuer is URL(). Every knob may be changed between requests
// under mu; handlers registered with handle replace the built-in ones.
type fakeAS struct {
	t  testing.TB
	ts *httptest.Server

	mu sync.Mutex
	// resourceMeta and serverMeta replace the built-in metadata documents
	// when non-nil (the map is encoded as the response).
	resourceMeta map[string]any
	serverMeta   map[string]any
	// overrides replace the handler of a path.
	overrides map[string]http.HandlerFunc
	// issInRedirect adds iss to the authorization redirect; advertiseIss
	// sets authorization_response_iss_parameter_supported.
	issInRedirect bool
	advertiseIss  bool
	// expiresIn is the expires_in of issued tokens (seconds); 0 omits it.
	expiresIn int
	// rotate issues a new refresh token on every refresh, and the spent
	// one becomes invalid_grant.
	rotate bool
	// refreshDelay delays every refresh answer.
	refreshDelay time.Duration

	hits      map[string]int
	clients   map[string]bool     // registered client ids
	codes     map[string]codeInfo // code -> what it was issued for
	refreshes map[string]bool     // live refresh tokens
	access    map[string]bool     // issued access tokens
	revoked   []string
	seq       int
	lastAuth  url.Values // the last authorization request's query
	lastToken url.Values // the last token request's form

	fakeClients // client authentication, headless grants, the IdP
	fakeDPoP    // DPoP at the token endpoint
}

// codeInfo is what an authorization code was issued for.
type codeInfo struct {
	clientID, redirectURI, challenge, resource string
}

// newFakeAS starts a fakeAS; it is closed with the test.
func newFakeAS(t testing.TB) *fakeAS {
	f := &fakeAS{
		t: t, overrides: map[string]http.HandlerFunc{}, hits: map[string]int{}, clients: map[string]bool{},
		codes: map[string]codeInfo{}, refreshes: map[string]bool{}, access: map[string]bool{},
		expiresIn: 3600, rotate: true, advertiseIss: true, issInRedirect: true,
	}
	f.fakeClients = newFakeClients(t)
	f.fakeDPoP = newFakeDPoP()
	f.ts = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.ts.Close)
	return f
}

// newFakeASHTTP starts a fakeAS on plain http at 127.0.0.1 instead, for
// Options.AllowLoopbackHTTP; it is closed with the test.
func newFakeASHTTP(t testing.TB) *fakeAS {
	f := newFakeAS(t)
	f.ts.Close()
	f.ts = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.ts.Close)
	return f
}

// URL is the TLS server's base URL (the issuer).
func (f *fakeAS) URL() string { return f.ts.URL }

// MCP is the MCP endpoint the resource metadata describes.
func (f *fakeAS) MCP() string { return f.ts.URL + "/mcp" }

// server is the Server definition of the fake's MCP endpoint.
func (f *fakeAS) server(id string) Server { return Server{ID: id, URL: f.MCP()} }

// handle replaces the handler of path.
func (f *fakeAS) handle(path string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overrides[path] = h
}

// set runs fn under the fake's lock, to change knobs.
func (f *fakeAS) set(fn func(f *fakeAS)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// count returns how many requests path has had.
func (f *fakeAS) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

// defaultResourceMeta is the RFC 9728 document of the MCP endpoint.
func (f *fakeAS) defaultResourceMeta() map[string]any {
	return map[string]any{
		"resource":              f.MCP(),
		"authorization_servers": []string{f.URL()},
		"scopes_supported":      []string{"mcp.read", "mcp.write"},
	}
}

// defaultServerMeta is the RFC 8414 document of the issuer.
func (f *fakeAS) defaultServerMeta() map[string]any {
	m := map[string]any{
		"issuer":                           f.URL(),
		"authorization_endpoint":           f.URL() + "/authorize",
		"token_endpoint":                   f.URL() + "/token",
		"registration_endpoint":            f.URL() + "/register",
		"revocation_endpoint":              f.URL() + "/revoke",
		"code_challenge_methods_supported": []string{"S256"},
		"response_types_supported":         []string{"code"},
		"grant_types_supported":            []string{"authorization_code", "refresh_token"},
	}
	if f.advertiseIss {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if f.dpopAlgs != nil {
		m["dpop_signing_alg_values_supported"] = f.dpopAlgs
	}
	f.clientMeta(m)
	return m
}

func (f *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.URL.Path]++
	h := f.overrides[r.URL.Path]
	f.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		f.mu.Lock()
		m := f.resourceMeta
		if m == nil {
			m = f.defaultResourceMeta()
		}
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, m)
	case "/.well-known/oauth-authorization-server":
		f.mu.Lock()
		m := f.serverMeta
		if m == nil {
			m = f.defaultServerMeta()
		}
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, m)
	case "/authorize":
		f.authorize(w, r)
	case "/token":
		f.token(w, r)
	case "/register":
		f.register(w, r)
	case "/revoke":
		_ = r.ParseForm()
		f.mu.Lock()
		f.revoked = append(f.revoked, r.PostForm.Get("token"))
		delete(f.refreshes, r.PostForm.Get("token"))
		f.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	case "/idp/token":
		f.idpToken(w, r)
	case "/mcp":
		// The MCP endpoint itself: 401 with the RFC 9728 challenge.
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+f.URL()+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	default:
		http.NotFound(w, r)
	}
}

// authorize plays the user agreeing at once: it redirects to redirect_uri
// with a fresh code, the request's state and (issInRedirect) iss.
func (f *fakeAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastAuth = q
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	f.seq++
	code := fmt.Sprintf("code-%s-%d", canary, f.seq)
	f.codes[code] = codeInfo{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource")}
	to, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := to.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	if f.issInRedirect {
		v.Set("iss", f.URL())
	}
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

// token serves the authorization_code and refresh_token grants.
func (f *fakeAS) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	form := r.PostForm
	f.mu.Lock()
	f.lastToken = form
	delay := f.refreshDelay
	f.mu.Unlock()
	jkt, ok := f.tokenProof(w, r)
	if !ok {
		return
	}
	clientID, ok := f.authenticate(w, r)
	if !ok {
		return
	}
	switch form.Get("grant_type") {
	case grantClientCredentials:
		f.issueHeadless(w, false, jkt)
	case grantJWTBearer:
		if f.workloadGrant(w, form, jkt) {
			return
		}
		f.jwtBearer(w, form, clientID, jkt)
	case "authorization_code":
		f.mu.Lock()
		info, ok := f.codes[form.Get("code")]
		delete(f.codes, form.Get("code"))
		f.mu.Unlock()
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		switch {
		case !ok, info.clientID != clientID, info.redirectURI != form.Get("redirect_uri"),
			info.challenge != base64.RawURLEncoding.EncodeToString(sum[:]), info.resource != form.Get("resource"):
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "bad code " + canary})
			return
		}
		f.issue(w, "", jkt)
	case "refresh_token":
		if delay > 0 {
			time.Sleep(delay)
		}
		f.mu.Lock()
		live := f.refreshes[form.Get("refresh_token")]
		boundTo := f.bound[form.Get("refresh_token")]
		f.mu.Unlock()
		if !live {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "spent " + canary})
			return
		}
		if boundTo != jkt {
			// RFC 9449 §5: a public client's refresh token is bound to its key.
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_dpop_proof", "error_description": canary})
			return
		}
		f.issue(w, form.Get("refresh_token"), jkt)
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
	}
}

// issue answers with fresh tokens; spent is the refresh token being used
// (rotated away when f.rotate), jkt the thumbprint of the DPoP key they are
// bound to ("" for Bearer tokens).
func (f *fakeAS) issue(w http.ResponseWriter, spent, jkt string) {
	f.mu.Lock()
	f.seq++
	access := fmt.Sprintf("at-%s-%d", canary, f.seq)
	f.access[access] = true
	body := map[string]any{"access_token": access, "token_type": f.tokenType(jkt)}
	f.bound[access] = jkt
	if f.expiresIn > 0 {
		body["expires_in"] = f.expiresIn
	}
	if spent == "" || f.rotate {
		refresh := fmt.Sprintf("rt-%s-%d", canary, f.seq)
		f.refreshes[refresh] = true
		f.bound[refresh] = jkt
		body["refresh_token"] = refresh
		if spent != "" {
			delete(f.refreshes, spent)
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

// register serves RFC 7591 dynamic registration of public clients.
func (f *fakeAS) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
		return
	}
	f.mu.Lock()
	f.seq++
	id := fmt.Sprintf("client-%s-%d", canary, f.seq)
	f.clients[id] = true
	f.lastRegMethod = req.AuthMethod
	answer := map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"}
	if f.regMethod != "" {
		answer["token_endpoint_auth_method"] = f.regMethod
		secret := fmt.Sprintf("secret-%s-%d", canary, f.seq)
		answer["client_secret"] = secret
		f.secrets[id] = secret
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, answer)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// testEnv is a Client on a fake, with the stores it uses.
type testEnv struct {
	as     *fakeAS
	c      *Client
	store  *portstest.TokenStore
	locker *portstest.Locker
	now    *fakeNow
}

// fakeNow is a settable clock.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (n *fakeNow) Now() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.t
}

func (n *fakeNow) Add(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.t = n.t.Add(d)
}

// newEnv returns a Client whose ClientFunc hands out the fake's TLS client
// (trusting its certificate) for the fake's origin and refuses others.
func newEnv(t testing.TB) *testEnv {
	as := newFakeAS(t)
	e := &testEnv{as: as, store: portstest.NewTokenStore(), locker: portstest.NewLocker(), now: &fakeNow{t: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)}}
	as.set(func(f *fakeAS) { f.clock = e.now.Now })
	e.c = e.client(t)
	return e
}

// client returns another Client sharing e's store, locker and clock, as a
// second process would.
func (e *testEnv) client(t testing.TB) *Client {
	c, err := New(Options{
		Client: func(_ context.Context, u *url.URL) (*http.Client, error) {
			if !strings.EqualFold(u.Scheme+"://"+u.Host, e.as.URL()) {
				return nil, fmt.Errorf("no client for that origin")
			}
			return e.as.ts.Client(), nil
		},
		Store:       e.store,
		Locker:      e.locker,
		Now:         e.now.Now,
		LockTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	return c
}

// browse plays the user's browser on authURL: it follows the authorization
// server's redirect to the loopback callback and returns the callback's
// status.
func browse(t testing.TB, ts *httptest.Server, authURL string) int {
	t.Helper()
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(authURL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode, "the authorization server redirects")
	cb, err := http.Get(resp.Header.Get("Location"))
	require.NoError(t, err)
	cb.Body.Close()
	return cb.StatusCode
}

// requireNoCanary fails when err's text carries the canary.
func requireNoCanary(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		require.NotContains(t, err.Error(), canary)
	}
}
