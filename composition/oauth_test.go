package composition

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// oauthMCP is an MCP server behind OAuth and its authorization server on
// one TLS server: the MCP endpoint /mcp accepts only the access tokens
// /token issued.
type oauthMCP struct {
	ts *httptest.Server

	mu      sync.Mutex
	tokens  map[string]bool
	codes   map[string]string // code -> code_challenge
	revoked int
	seq     int
	// refreshes are the live refresh tokens (each is spent by its use);
	// refreshed counts refresh grants served, spent those refused.
	refreshes map[string]bool
	refreshed int
	spent     int
	// signInExpiresIn is the expires_in of tokens from a code (0: 3600);
	// refreshed tokens always get 3600.
	signInExpiresIn int
	// beforeRefresh, when set, is called with each refresh request before
	// it is looked at (without mu held); false drops the request unserved.
	// Set it under mu.
	beforeRefresh func(r *http.Request) bool
}

func newOAuthMCP(t testing.TB) *oauthMCP {
	o := &oauthMCP{tokens: map[string]bool{}, codes: map[string]string{}, refreshes: map[string]bool{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says who is signed in."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		ok := o.tokens[tok]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o.ts.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		oauthJSON(w, http.StatusOK, map[string]any{"resource": o.ts.URL + "/mcp", "authorization_servers": []string{o.ts.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		oauthJSON(w, http.StatusOK, map[string]any{
			"issuer": o.ts.URL, "authorization_endpoint": o.ts.URL + "/authorize", "token_endpoint": o.ts.URL + "/token",
			"registration_endpoint": o.ts.URL + "/register", "revocation_endpoint": o.ts.URL + "/revoke",
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		oauthJSON(w, http.StatusCreated, map[string]any{"client_id": "registered-client"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.mu.Lock()
		o.seq++
		code := fmt.Sprintf("code-%d", o.seq)
		o.codes[code] = q.Get("code_challenge")
		o.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"code": {code}, "state": {q.Get("state")}}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		hook := o.beforeRefresh
		o.mu.Unlock()
		if hook != nil && r.PostForm.Get("grant_type") == "refresh_token" && !hook(r) {
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		o.mu.Lock()
		defer o.mu.Unlock()
		if r.PostForm.Get("grant_type") == "refresh_token" {
			rt := r.PostForm.Get("refresh_token")
			if !o.refreshes[rt] || r.PostForm.Get("resource") != o.ts.URL+"/mcp" {
				o.spent++
				oauthJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(o.refreshes, rt) // rotating: a refresh token is good once
			o.refreshed++
			oauthJSON(w, http.StatusOK, o.issue(3600))
			return
		}
		if ch, ok := o.codes[r.PostForm.Get("code")]; !ok || ch != base64.RawURLEncoding.EncodeToString(sum[:]) ||
			r.PostForm.Get("resource") != o.ts.URL+"/mcp" {
			oauthJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(o.codes, r.PostForm.Get("code"))
		exp := o.signInExpiresIn
		if exp == 0 {
			exp = 3600
		}
		oauthJSON(w, http.StatusOK, o.issue(exp))
	})
	mux.HandleFunc("/revoke", func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.revoked++
		o.mu.Unlock()
	})
	o.ts = httptest.NewTLSServer(mux)
	t.Cleanup(o.ts.Close)
	return o
}

// issue mints an access token and a refresh token; o.mu is held.
func (o *oauthMCP) issue(expiresIn int) map[string]any {
	o.seq++
	tok := fmt.Sprintf("token-%d", o.seq)
	o.tokens[tok] = true
	o.refreshes["rt-"+tok] = true
	return map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": expiresIn, "refresh_token": "rt-" + tok}
}

func oauthJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthConfig is a Config with OAuth on, admitting https to loopback and
// trusting ts's certificate.
func oauthConfig(t testing.TB, ts *httptest.Server) Config {
	policy, err := egress.New(&egress.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return Config{
		Egress: policy,
		HTTP:   &httptransport.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1},
		OAuth:  &OAuthConfig{},
	}
}

// browser returns an open func that plays the user's browser: it follows
// the authorization server's redirect to the loopback callback.
func browser(t testing.TB, ts *httptest.Server) func(string) error {
	return func(authURL string) error {
		go func() {
			c := ts.Client()
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			resp, err := c.Get(authURL)
			if err != nil {
				return
			}
			resp.Body.Close()
			if cb, err := http.Get(resp.Header.Get("Location")); err == nil {
				cb.Body.Close()
			}
		}()
		return nil
	}
}

func TestOAuthSignInConnectSignOut(t *testing.T) {
	o := newOAuthMCP(t)
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.ts))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {"guarded": {"type": "http", "url": "` + o.ts.URL + `/mcp", "oauth": {}}}}`)

	r, ok := h.Evaluate(ctx, srcs).Server("guarded")
	require.True(t, ok)
	assert.Equal(t, AuthOAuth, r.Auth)
	assert.True(t, r.Usable())
	st, err := h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st)

	// Before signing in, connecting fails by name, and nothing is sent
	// unauthenticated.
	f := h.Connect(ctx, srcs, nil)
	sr := f.Servers()[0]
	assert.Equal(t, StateFailed, sr.State)
	assert.Equal(t, refusal.AuthRequired, sr.Class)
	assert.Equal(t, oauth.ReasonSignInRequired, sr.Reason)
	require.NoError(t, f.Close())

	require.NoError(t, h.SignIn(ctx, srcs, "guarded", browser(t, o.ts)))
	st, err = h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)

	f = h.Connect(ctx, srcs, nil)
	defer f.Close()
	require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	res, err := f.Call(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Content), "signed in")
	require.NoError(t, f.Close())

	require.NoError(t, h.SignOut(ctx, srcs, "guarded"))
	st, err = h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st)
	o.mu.Lock()
	assert.Equal(t, 1, o.revoked, "the issuer was asked to revoke")
	o.mu.Unlock()
}

func TestOAuthRefusals(t *testing.T) {
	o := newOAuthMCP(t)
	ctx := context.Background()
	srcs := append(userSrc(`{"mcpServers": {
	  "guarded": {"type": "http", "url": "`+o.ts.URL+`/mcp", "oauth": {}},
	  "helped":  {"type": "http", "url": "`+o.ts.URL+`/mcp", "headersHelper": ["/bin/token"]},
	  "local":   {"command": "/bin/true"}}}`),
		definition.Source{Tier: ports.TierProject, Origin: "/ws/.mcp.json",
			Data: []byte(`{"mcpServers": {"proj": {"type": "http", "url": "` + o.ts.URL + `/mcp", "oauth": {}}}}`)})

	t.Run("no OAuth client in the deployment", func(t *testing.T) {
		cfg := oauthConfig(t, o.ts)
		cfg.OAuth = nil
		h, cleanup, err := Headless(StateDir(t.TempDir()), nil, cfg)
		require.NoError(t, err)
		defer cleanup()
		err = h.SignIn(ctx, srcs, "guarded", browser(t, o.ts))
		assert.Equal(t, ReasonOAuthSignInUnavailable, refusal.ReasonOf(err))
	})
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.ts))
	require.NoError(t, err)
	defer cleanup()
	for _, tt := range []struct{ name, server, reason string }{
		{"unknown server", "ghost", ReasonUnknownServer},
		{"a stdio server", "local", ReasonNotOAuth},
		{"an http server whose headers come from a helper", "helped", ReasonNotOAuth},
		{"a project server not approved", "proj", ReasonNotUsable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opened := false
			err := h.SignIn(ctx, srcs, tt.server, func(string) error { opened = true; return nil })
			assert.Equal(t, tt.reason, refusal.ReasonOf(err))
			assert.False(t, opened, "nothing is opened")
		})
	}
	t.Run("oauth over http is refused by name", func(t *testing.T) {
		plain := userSrc(`{"mcpServers": {"cleartext": {"type": "http", "url": "http://127.0.0.1:1/mcp", "oauth": {}}}}`)
		r, ok := h.Evaluate(ctx, plain).Server("cleartext")
		require.True(t, ok)
		assert.Equal(t, StateRefused, r.State)
		assert.Equal(t, oauth.ReasonURLInvalid, r.Reason)
		opened := false
		err := h.SignIn(ctx, plain, "cleartext", func(string) error { opened = true; return nil })
		assert.Equal(t, ReasonNotUsable, refusal.ReasonOf(err))
		assert.False(t, opened)
	})
	t.Run("no store in a Custom deployment", func(t *testing.T) {
		_, err := Custom(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, oauthConfig(t, o.ts))
		assert.Equal(t, ReasonOAuthStoreMissing, refusal.ReasonOf(err))
	})
}

// TestOAuthPastedRedirect signs in by pasting the redirect, as a user whose
// browser runs on another machine does.
func TestOAuthPastedRedirect(t *testing.T) {
	o := newOAuthMCP(t)
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.ts))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := oauthSrcs(o.ts.URL)
	p, err := h.BeginSignIn(ctx, srcs, "guarded")
	require.NoError(t, err)
	defer p.Close()

	c := o.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(p.URL())
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, p.Complete(ctx, resp.Header.Get("Location")))
	st, err := h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)

	_, err = h.BeginSignIn(ctx, srcs, "ghost")
	assert.Equal(t, ReasonUnknownServer, refusal.ReasonOf(err))
}
