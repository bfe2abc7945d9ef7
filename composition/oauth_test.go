package composition

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition/internal/oauthtest"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// oauthMCP is the OAuth-guarded server of the sign-in tests
// (internal/oauthtest), guarding an MCP server with one tool, whoami.
type oauthMCP = oauthtest.Server

func newOAuthMCP(t testing.TB) *oauthMCP { return oauthtest.New(t, whoamiHandler()) }

// whoamiHandler is the Streamable HTTP handler of an MCP server whose
// tool whoami says "signed in".
func whoamiHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says who is signed in."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// oauthJSON writes v as a JSON response with status.
var oauthJSON = oauthtest.JSON

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
func browser(_ testing.TB, ts *httptest.Server) func(string) error { return oauthtest.Browser(ts) }

func TestOAuthSignInConnectSignOut(t *testing.T) {
	o := newOAuthMCP(t)
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {"guarded": {"type": "http", "url": "` + o.TS.URL + `/mcp", "oauth": {}}}}`)

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

	require.NoError(t, h.SignIn(ctx, srcs, "guarded", browser(t, o.TS)))
	st, err = h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)

	f = h.Connect(ctx, srcs, nil)
	defer f.Close()
	require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	res, err := f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Content), "signed in")
	require.NoError(t, f.Close())

	require.NoError(t, h.SignOut(ctx, srcs, "guarded"))
	st, err = h.SignInState(ctx, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st)
	o.Mu.Lock()
	assert.Equal(t, 1, o.Revoked, "the issuer was asked to revoke")
	o.Mu.Unlock()
}

func TestOAuthRefusals(t *testing.T) {
	o := newOAuthMCP(t)
	ctx := context.Background()
	srcs := append(userSrc(`{"mcpServers": {
	  "guarded": {"type": "http", "url": "`+o.TS.URL+`/mcp", "oauth": {}},
	  "helped":  {"type": "http", "url": "`+o.TS.URL+`/mcp", "headersHelper": ["/bin/token"]},
	  "local":   {"command": "/bin/true"}}}`),
		definition.Source{Tier: ports.TierProject, Origin: "/ws/.mcp.json",
			Data: []byte(`{"mcpServers": {"proj": {"type": "http", "url": "` + o.TS.URL + `/mcp", "oauth": {}}}}`)})

	t.Run("no OAuth client in the deployment", func(t *testing.T) {
		cfg := oauthConfig(t, o.TS)
		cfg.OAuth = nil
		h, cleanup, err := Headless(StateDir(t.TempDir()), nil, cfg)
		require.NoError(t, err)
		defer cleanup()
		err = h.SignIn(ctx, srcs, "guarded", browser(t, o.TS))
		assert.Equal(t, ReasonOAuthSignInUnavailable, refusal.ReasonOf(err))
	})
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
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
		_, err := Custom(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, oauthConfig(t, o.TS))
		assert.Equal(t, ReasonOAuthStoreMissing, refusal.ReasonOf(err))
	})
}

// TestOAuthPastedRedirect signs in by pasting the redirect, as a user whose
// browser runs on another machine does.
func TestOAuthPastedRedirect(t *testing.T) {
	o := newOAuthMCP(t)
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := oauthSrcs(o.TS.URL)
	p, err := h.BeginSignIn(ctx, srcs, "guarded")
	require.NoError(t, err)
	defer p.Close()

	c := o.TS.Client()
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
