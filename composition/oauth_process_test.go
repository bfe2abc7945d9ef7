package composition

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/composition/internal/oauthtest"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
)

// Environment of a TestOAuthChildConnect process.
const (
	childStateEnv = "MCPWARD_OAUTH_CHILD_STATE"
	childURLEnv   = "MCPWARD_OAUTH_CHILD_URL"
	childCertEnv  = "MCPWARD_OAUTH_CHILD_CERT"
)

// oauthSrcs is the user-tier source of the guarded server at base.
func oauthSrcs(base string) []definition.Source {
	return userSrc(`{"mcpServers": {"guarded": {"type": "http", "url": "` + base + `/mcp", "oauth": {}}}}`)
}

// childConfig is oauthConfig for a process that only has the server's
// certificate (PEM) at certFile.
func childConfig(t *testing.T, certFile string) Config {
	b, err := os.ReadFile(certFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(b))
	policy, err := egress.New(&egress.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	require.NoError(t, err)
	return Config{
		Egress: policy,
		HTTP:   &httptransport.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1},
		OAuth:  &OAuthConfig{},
	}
}

// TestOAuthChildConnect is the child of TestOAuthRefreshAcrossProcesses:
// it connects the guarded server from the shared state directory and
// calls whoami. It does nothing unless started by that test.
func TestOAuthChildConnect(t *testing.T) {
	dir := os.Getenv(childStateEnv)
	if dir == "" {
		t.Skip("run by TestOAuthRefreshAcrossProcesses")
	}
	h, cleanup, err := Headless(StateDir(dir), nil, childConfig(t, os.Getenv(childCertEnv)))
	require.NoError(t, err)
	defer cleanup()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := h.Connect(ctx, oauthSrcs(os.Getenv(childURLEnv)), nil)
	defer f.Close()
	sr := f.Servers()[0]
	require.Equal(t, StateConnected, sr.State, "%s %s", sr.Class, sr.Reason)
	res, err := f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	require.Contains(t, string(res.Content), "signed in")
}

// TestOAuthRefreshAcrossProcesses signs in, lets the access token expire,
// and starts several processes on the same state directory at once (file
// tokens, flock locks): exactly one refreshes, the others adopt its token,
// and every one connects. The authorization server rotates refresh tokens,
// so a second refresh with the spent token would be refused (invalid_grant)
// and sign that process out.
func TestOAuthRefreshAcrossProcesses(t *testing.T) {
	if os.Getenv(childStateEnv) != "" {
		t.Skip("a child")
	}
	o := newOAuthMCP(t)
	o.SignInExpiresIn = oauthtest.ExpiresAtOnce
	dir := t.TempDir()
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.TS.Certificate().Raw}), 0o600))

	h, cleanup, err := Headless(StateDir(dir), nil, childConfig(t, certFile))
	require.NoError(t, err)
	require.NoError(t, h.SignIn(context.Background(), oauthSrcs(o.TS.URL), "guarded", browser(t, o.TS)))
	cleanup()

	const n = 4
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestOAuthChildConnect$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), childStateEnv+"="+dir, childURLEnv+"="+o.TS.URL, childCertEnv+"="+certFile)
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "child %d:\n%s", i, outs[i])
		assert.Contains(t, outs[i], "--- PASS: TestOAuthChildConnect", "child %d ran", i)
	}
	o.Mu.Lock()
	defer o.Mu.Unlock()
	assert.Equal(t, 1, o.Refreshed, "one refresh for %d processes", n)
	assert.Zero(t, o.Spent, "no spent refresh token was sent")
	assert.False(t, strings.Contains(fmt.Sprint(outs), "token-"), "no token in any output")
}
