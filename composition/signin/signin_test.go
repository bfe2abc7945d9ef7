package signin_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/headless"
	"github.com/mcpward/mcpward/composition/internal/oauthtest"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/composition/signin"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

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

// oauthConfig is a Config with OAuth on, admitting https to loopback and
// trusting o's certificate.
func oauthConfig(t *testing.T, o *oauthtest.Server) composition.Config {
	pool := x509.NewCertPool()
	pool.AddCert(o.TS.Certificate())
	return composition.Config{
		Egress: oauthtest.Egress(t),
		HTTP:   &httptransport.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1},
		OAuth:  &composition.OAuthConfig{},
	}
}

// canary is a secret the definitions carry; no error may show it.
const canary = "cnry-signin-7f3a"

// mixed is the guarded server, an HTTP server without oauth whose
// headers come from a helper, and a stdio server.
func mixed(base string) []definition.Source {
	return []definition.Source{{Tier: ports.TierUser, Origin: "/home/u/mcp.json", Data: []byte(`{"mcpServers": {
		"guarded": {"type": "http", "url": "` + base + `/mcp", "oauth": {}, "headers": {"X-Key": "` + canary + `"}},
		"helped": {"type": "http", "url": "https://helped.example.com/mcp?key=` + canary + `", "headersHelper": ["/usr/bin/print-token"]},
		"local": {"command": "local-mcp", "args": ["--token", "` + canary + `"]}
	}}`)}}
}

// TestSignInThroughTheHost drives every function of the package against a
// real authorization server: discovery, a sign-in the host drives itself
// (Begin, the browser's redirect pasted back), the state, a connection
// with the stored credential, and sign-out.
func TestSignInThroughTheHost(t *testing.T) {
	o := oauthtest.New(t, whoamiHandler())
	ctx := context.Background()
	h, cleanup, err := headless.Open(ctx, headless.Config{Dir: t.TempDir(), Config: oauthConfig(t, o)})
	require.NoError(t, err)
	defer cleanup()
	srcs := oauthtest.Sources(o.TS.URL)

	st, err := signin.State(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st)

	rep, err := signin.Discover(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	require.NotNil(t, rep)
	assert.Equal(t, "guarded", rep.Server)
	assert.Equal(t, o.TS.URL, rep.Issuer)

	s, err := signin.Begin(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	defer s.Close()
	redirect := follow(t, o, s.URL())
	require.NoError(t, s.Complete(ctx, redirect))

	st, err = signin.State(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)

	f := h.Connect(ctx, srcs, nil)
	require.Equal(t, composition.StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	res, err := f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Content), "signed in")
	require.NoError(t, f.Close())

	require.NoError(t, h.SignOut(ctx, srcs, "guarded"))
	st, err = signin.State(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st)

	// BeginWithOptions reaches the same client: a fresh sign-in, completed.
	s2, err := signin.BeginWithOptions(ctx, h, srcs, "guarded", oauth.SignInOptions{})
	require.NoError(t, err)
	defer s2.Close()
	require.NoError(t, s2.Complete(ctx, follow(t, o, s2.URL())))
	st, err = signin.State(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)
}

// follow plays the browser: it visits the authorization URL and returns
// the redirect to the loopback callback, without following it.
func follow(t *testing.T, o *oauthtest.Server, authURL string) string {
	t.Helper()
	c := o.TS.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(authURL)
	require.NoError(t, err)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	u, err := url.Parse(loc)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", u.Hostname(), "a loopback callback")
	return loc
}

// TestRefusals: every function refuses by name, before anything is sent,
// a Host without an OAuth client, a name that is not an OAuth server, and
// a Host whose OAuth client is not this package's; the headless sign-ins
// reach the client of the right server; nothing shows the canary.
func TestRefusals(t *testing.T) {
	o := oauthtest.New(t, whoamiHandler())
	ctx := context.Background()
	type call struct {
		name string
		f    func(h *composition.Host, srcs []definition.Source, name string) error
	}
	calls := []call{
		{"Begin", func(h *composition.Host, srcs []definition.Source, name string) error {
			_, err := signin.Begin(ctx, h, srcs, name)
			return err
		}},
		{"BeginWithOptions", func(h *composition.Host, srcs []definition.Source, name string) error {
			_, err := signin.BeginWithOptions(ctx, h, srcs, name, oauth.SignInOptions{})
			return err
		}},
		{"ClientCredentials", func(h *composition.Host, srcs []definition.Source, name string) error {
			return signin.ClientCredentials(ctx, h, srcs, name, oauth.ClientCredentials{})
		}},
		{"EnterpriseManaged", func(h *composition.Host, srcs []definition.Source, name string) error {
			return signin.EnterpriseManaged(ctx, h, srcs, name, oauth.EnterpriseManaged{})
		}},
		{"CrossApp", func(h *composition.Host, srcs []definition.Source, name string) error {
			return signin.CrossApp(ctx, h, srcs, name, oauth.CrossApp{})
		}},
		{"WorkloadIdentity", func(h *composition.Host, srcs []definition.Source, name string) error {
			return signin.WorkloadIdentity(ctx, h, srcs, name, oauth.WorkloadIdentity{TokenFile: "/nonexistent"})
		}},
		{"State", func(h *composition.Host, srcs []definition.Source, name string) error {
			_, err := signin.State(ctx, h, srcs, name)
			return err
		}},
		{"Discover", func(h *composition.Host, srcs []definition.Source, name string) error {
			_, err := signin.Discover(ctx, h, srcs, name)
			return err
		}},
		{"Host.SignIn", func(h *composition.Host, srcs []definition.Source, name string) error {
			return h.SignIn(ctx, srcs, name, func(string) error { return fmt.Errorf("nothing may be opened") })
		}},
		{"Host.SignOut", func(h *composition.Host, srcs []definition.Source, name string) error {
			return h.SignOut(ctx, srcs, name)
		}},
	}
	mem, cleanupMem, err := memory.Open(ctx, memory.Config{})
	require.NoError(t, err)
	defer cleanupMem()
	head, cleanupHead, err := headless.Open(ctx, headless.Config{Dir: t.TempDir(), Config: oauthConfig(t, o)})
	require.NoError(t, err)
	defer cleanupHead()
	tokens := portstest.NewTokenStore()
	foreign, err := composition.New(composition.Ports{Tokens: tokens, Locker: portstest.NewLocker(),
		Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog(), OAuth: foreignClient{}}, oauthConfig(t, o))
	require.NoError(t, err)
	srcs := mixed(o.TS.URL)

	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			for _, tt := range []struct {
				host   *composition.Host
				name   string
				reason string
			}{
				{mem, "guarded", composition.ReasonOAuthSignInUnavailable},
				{head, "nowhere", composition.ReasonUnknownServer},
				{head, "helped", composition.ReasonNotOAuth},
				{head, "local", composition.ReasonNotOAuth},
			} {
				err := c.f(tt.host, srcs, tt.name)
				var ref *refusal.Error
				require.ErrorAs(t, err, &ref, "%s", tt.name)
				assert.Equal(t, tt.reason, ref.Reason, tt.name)
				assert.Equal(t, tt.name, ref.Server)
				assert.NotContains(t, err.Error(), canary)
			}
			err := c.f(foreign, srcs, "guarded")
			switch c.name {
			case "Host.SignIn", "Host.SignOut":
				// The Host's own methods go through the interface.
				assert.ErrorIs(t, err, errForeign)
			default:
				assert.Equal(t, signin.ReasonForeignClient, refusal.ReasonOf(err))
			}
		})
	}

	// The headless sign-ins reach the OAuth client, for the right server.
	err = signin.ClientCredentials(ctx, head, srcs, "guarded", oauth.ClientCredentials{})
	assert.Equal(t, oauth.ReasonClientCredentialsInvalid, refusal.ReasonOf(err))
	err = signin.EnterpriseManaged(ctx, head, srcs, "guarded", oauth.EnterpriseManaged{})
	assert.Equal(t, oauth.ReasonCrossAppInvalid, refusal.ReasonOf(err))
	assert.NotContains(t, fmt.Sprint(err), canary)
	err = signin.CrossApp(ctx, head, srcs, "guarded", oauth.CrossApp{})
	assert.Equal(t, oauth.ReasonCrossAppInvalid, refusal.ReasonOf(err))
	err = signin.WorkloadIdentity(ctx, head, srcs, "guarded", oauth.WorkloadIdentity{})
	assert.Equal(t, oauth.ReasonWorkloadIdentityInvalid, refusal.ReasonOf(err))
	o.Mu.Lock()
	assert.Zero(t, o.Seq, "no authorization request was sent by a refusal")
	o.Mu.Unlock()
}

// errForeign is what foreignClient answers.
var errForeign = fmt.Errorf("foreign client")

// foreignClient is a host's own composition.OAuthClient.
type foreignClient struct{}

func (foreignClient) Authenticator(string, string, *definition.OAuth, func(*refusal.Error)) (ports.Authenticator, error) {
	return portstest.NewAuthenticator(nil, 0), nil
}
func (foreignClient) SignedIn(context.Context, string, string) bool { return false }
func (foreignClient) SaveChallenge(context.Context, string, string, int, string) bool {
	return false
}
func (foreignClient) SignIn(context.Context, string, string, *definition.OAuth, func(string) error) error {
	return errForeign
}
func (foreignClient) SignOut(context.Context, string, string, *definition.OAuth) error {
	return errForeign
}

// TestNew: no client without Config.OAuth; the stores are required; a
// Host asking for OAuth without a client is refused by name.
func TestNew(t *testing.T) {
	c, err := signin.New(portstest.NewTokenStore(), portstest.NewLocker(), composition.Config{})
	require.NoError(t, err)
	assert.Nil(t, c, "no OAuth asked for, no client")

	_, err = signin.New(nil, portstest.NewLocker(), composition.Config{OAuth: &composition.OAuthConfig{}})
	assert.Equal(t, composition.ReasonOAuthStoreMissing, refusal.ReasonOf(err))
	_, err = signin.New(portstest.NewTokenStore(), nil, composition.Config{OAuth: &composition.OAuthConfig{}})
	assert.Equal(t, composition.ReasonOAuthStoreMissing, refusal.ReasonOf(err))

	_, err = composition.New(composition.Ports{Tokens: portstest.NewTokenStore(), Locker: portstest.NewLocker(),
		Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, composition.Config{OAuth: &composition.OAuthConfig{}})
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.Equal(t, composition.ReasonOAuthClientMissing, refusal.ReasonOf(err))
}

// TestReasonWords: composition's words for what the OAuth client reports
// are adapters/oauth's own.
func TestReasonWords(t *testing.T) {
	assert.Equal(t, oauth.ReasonSignInRequired, composition.ReasonSignInRequired)
	assert.Equal(t, oauth.ReasonStepUpRequired, composition.ReasonStepUpRequired)
	assert.False(t, strings.Contains(signin.ReasonForeignClient, " "))
}
