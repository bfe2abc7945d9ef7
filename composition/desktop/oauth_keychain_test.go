package desktop_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/desktop"
	"github.com/mcpward/mcpward/composition/headless"
	"github.com/mcpward/mcpward/composition/internal/oauthtest"
	"github.com/mcpward/mcpward/composition/signin"
)

// sessionBus is the session bus the test binary started with, read before
// TestMain disables it.
var sessionBus = os.Getenv("DBUS_SESSION_BUS_ADDRESS")

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

// TestOAuthDesktopKeychain signs in with the desktop profile on a real
// Secret Service: the credential lives in the keychain (no token file is
// written), connections use it, and signing out removes it. It runs under
// scripts/keyring-session.sh (make test-keychain).
func TestOAuthDesktopKeychain(t *testing.T) {
	if os.Getenv("MCPWARD_TEST_SECRET_SERVICE") != "1" {
		t.Skip("needs a real Secret Service: run under scripts/keyring-session.sh (make test-keychain)")
	}
	// TestMain disables the session bus for every other test; this one
	// needs the real one scripts/keyring-session.sh started.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", sessionBus)
	o := oauthtest.New(t, whoamiHandler())
	pool := x509.NewCertPool()
	pool.AddCert(o.TS.Certificate())
	dir := t.TempDir()
	ctx := context.Background()
	h, cleanup, err := desktop.Open(ctx, desktop.Config{Dir: dir, Config: composition.Config{
		Egress: oauthtest.Egress(t),
		HTTP:   &httptransport.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1},
		OAuth:  &composition.OAuthConfig{},
	}})
	require.NoError(t, err)
	defer cleanup()
	srcs := oauthtest.Sources(o.TS.URL)

	require.NoError(t, h.SignIn(ctx, srcs, "guarded", oauthtest.Browser(o.TS)))
	st, err := signin.State(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)
	entries, err := os.ReadDir(filepath.Join(dir, headless.StoreSubdir, "tokens"))
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		assert.Empty(t, entries, "no token file in the desktop profile")
	}

	f := h.Connect(ctx, srcs, nil)
	require.Equal(t, composition.StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	res, err := f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Content), "signed in")
	require.NoError(t, f.Close())

	require.NoError(t, h.SignOut(ctx, srcs, "guarded"))
	st, err = signin.State(ctx, h, srcs, "guarded")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedOut, st, "the keychain item is gone")
}
