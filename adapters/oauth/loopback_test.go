package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// newLoopbackEnv returns a testEnv on a plain-http fake at 127.0.0.1 whose
// Client has Options.AllowLoopbackHTTP set to allow.
func newLoopbackEnv(t testing.TB, allow bool) *testEnv {
	as := newFakeASHTTP(t)
	e := &testEnv{as: as, store: portstest.NewTokenStore(), locker: portstest.NewLocker(), now: &fakeNow{t: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)}}
	c, err := New(Options{
		Client: func(_ context.Context, u *url.URL) (*http.Client, error) {
			return as.ts.Client(), nil
		},
		Store: e.store, Locker: e.locker, Now: e.now.Now, LockTimeout: 5 * time.Second,
		AllowLoopbackHTTP: allow,
	})
	require.NoError(t, err)
	e.c = c
	return e
}

func TestLoopbackHTTPRule(t *testing.T) {
	on := urlRule{loopbackHTTP: true}
	for _, tt := range []struct{ in, canon, origin string }{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080"},
		{"HTTP://LocalHost:80/mcp/", "http://localhost/mcp", "http://localhost:80"},
		{"http://[::1]:9/a?b=c", "http://[::1]:9/a?b=c", "http://[::1]:9"},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", "https://mcp.example.com:443"},
		{"https://127.0.0.1:443/", "https://127.0.0.1", "https://127.0.0.1:443"},
	} {
		t.Run("accepted "+tt.in, func(t *testing.T) {
			canon, origin, err := on.canonical(tt.in, "s")
			require.NoError(t, err)
			assert.Equal(t, tt.canon, canon)
			assert.Equal(t, tt.origin, origin)
			again, _, err := on.canonical(canon, "s")
			require.NoError(t, err)
			assert.Equal(t, canon, again)
		})
	}
	for _, bad := range []string{
		"http://127.0.0.2/mcp", "http://localhost.example.com/mcp", "http://0.0.0.0/mcp", "http://[::2]/mcp",
		"http://example.com/mcp", "http://2130706433/mcp", "http://[::ffff:127.0.0.1]/mcp", "http://127.1/mcp",
		"http://u:" + canary + "@127.0.0.1/mcp", "http://127.0.0.1/mcp#" + canary, "ws://127.0.0.1/mcp",
	} {
		t.Run("refused "+bad, func(t *testing.T) {
			_, _, err := on.canonical(bad, "s")
			assert.Equal(t, ReasonURLInvalid, refusal.ReasonOf(err))
			requireNoCanary(t, err)
		})
	}
	t.Run("off by default", func(t *testing.T) {
		for _, in := range []string{"http://127.0.0.1:8080/mcp", "http://localhost/mcp", "http://[::1]/mcp"} {
			_, _, err := urlRule{}.canonical(in, "s")
			assert.Equal(t, ReasonURLInvalid, refusal.ReasonOf(err), in)
			_, err = urlRule{}.link(in, "s")
			assert.Equal(t, ReasonInsecureEndpoint, refusal.ReasonOf(err), in)
		}
	})
}

// TestLoopbackHTTPSignIn runs a whole sign-in, a request's headers and a
// refresh against the plain-http fake with the option on: the scheme stays
// http in the resource indicator, the stored credential and its key.
func TestLoopbackHTTPSignIn(t *testing.T) {
	e := newLoopbackEnv(t, true)
	require.True(t, strings.HasPrefix(e.as.MCP(), "http://127.0.0.1:"), e.as.MCP())
	s := e.as.server("srv")
	p := siBegin(t, e, s)
	require.True(t, strings.HasPrefix(p.URL(), e.as.URL()+"/authorize?"))
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))

	assert.Equal(t, e.as.MCP(), siLastAuth(e).Get("resource"))
	assert.Equal(t, e.as.MCP(), siLastToken(e).Get("resource"))
	r := siStored(t, e, "srv")
	assert.Equal(t, e.as.MCP(), r.Resource)
	assert.Equal(t, e.as.URL()+"/token", r.TokenEndpoint)
	httpsKey := storeKey("srv", strings.Replace(e.as.MCP(), "http://", "https://", 1))
	_, err := e.store.Get(context.Background(), httpsKey)
	assert.ErrorIs(t, err, ports.ErrNotFound, "the https form of the URL has no credential")

	a, err := e.c.Authenticator(s)
	require.NoError(t, err)
	origin := "http://" + strings.TrimPrefix(e.as.URL(), "http://")
	req := ports.AuthRequest{ServerID: "srv", Origin: origin, Method: http.MethodPost}
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, r.AccessToken, bearer(t, h))
	retry, err := a.Refused(context.Background(), ports.AuthRefusal{ServerID: "srv", Origin: origin, Status: http.StatusUnauthorized})
	require.NoError(t, err)
	assert.True(t, retry)
	assert.Equal(t, 2, e.as.count("/token"), "the refresh went to the http loopback token endpoint")
}

func TestLoopbackHTTPRefusedWithoutOption(t *testing.T) {
	e := newLoopbackEnv(t, false)
	_, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
	siRequire(t, err, refusal.Config, ReasonURLInvalid)
	assert.Equal(t, 0, e.as.count(prPath), "nothing is sent")
	_, err = e.c.Authenticator(e.as.server("srv"))
	siRequire(t, err, refusal.Config, ReasonURLInvalid)
}

// TestLoopbackHTTPOnlyLoopback: with the option on, a link in metadata to
// an http URL on another host is refused as before.
func TestLoopbackHTTPOnlyLoopback(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mut    func(f *fakeAS)
		reason string
	}{
		{"authorization server", func(f *fakeAS) {
			m := f.defaultResourceMeta()
			m["authorization_servers"] = []string{"http://as.example.com"}
			f.resourceMeta = m
		}, ReasonInsecureEndpoint},
		{"token endpoint", func(f *fakeAS) {
			m := f.defaultServerMeta()
			m["token_endpoint"] = "http://as.example.com/token"
			f.serverMeta = m
		}, ReasonInsecureEndpoint},
		{"issuer on 127.0.0.2", func(f *fakeAS) {
			m := f.defaultResourceMeta()
			m["authorization_servers"] = []string{strings.Replace(f.URL(), "127.0.0.1", "127.0.0.2", 1)}
			f.resourceMeta = m
		}, ReasonInsecureEndpoint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newLoopbackEnv(t, true)
			e.as.set(tt.mut)
			_, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
			siRequire(t, err, refusal.Refused, tt.reason)
			assert.Equal(t, 0, e.as.count("/register"))
		})
	}
}

// TestLoopbackHTTPLocalhost: a server URL naming localhost is its own
// resource (the metadata must say localhost), and the indicator sent is it.
func TestLoopbackHTTPLocalhost(t *testing.T) {
	e := newLoopbackEnv(t, true)
	port := strings.TrimPrefix(e.as.URL(), "http://127.0.0.1:")
	mcp := fmt.Sprintf("http://localhost:%s/mcp", port)
	e.as.set(func(f *fakeAS) {
		m := f.defaultResourceMeta()
		m["resource"] = mcp
		f.resourceMeta = m
	})
	p := siBegin(t, e, Server{ID: "srv", URL: mcp})
	u, err := url.Parse(p.URL())
	require.NoError(t, err)
	assert.Equal(t, mcp, u.Query().Get("resource"))
}
