package composition

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/refusal"
)

// TestChallengeWithoutOAuthKey: an HTTP definition without "oauth" whose
// server answers 401 with a Bearer challenge fails as
// oauth.ReasonSignInRequired after the one request any definition without
// authentication sends; SignIn then works for it without the key, and its
// connections carry the stored credential.
func TestChallengeWithoutOAuthKey(t *testing.T) {
	o := newOAuthMCP(t)
	var unauthenticated atomic.Int32
	inner := o.TS.Config.Handler
	o.TS.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" && r.Header.Get("Authorization") == "" {
			unauthenticated.Add(1)
		}
		inner.ServeHTTP(w, r)
	})
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {"plain": {"type": "http", "url": "` + o.TS.URL + `/mcp"}}}`)

	r, ok := h.Evaluate(ctx, srcs).Server("plain")
	require.True(t, ok)
	assert.Equal(t, AuthStatic, r.Auth)

	f := h.Connect(ctx, srcs, nil)
	sr := f.Servers()[0]
	assert.Equal(t, StateFailed, sr.State)
	assert.Equal(t, refusal.AuthRequired, sr.Class)
	assert.Equal(t, oauth.ReasonSignInRequired, sr.Reason)
	require.NoError(t, f.Close())
	assert.Equal(t, int32(1), unauthenticated.Load(), "one request, as without any authentication")

	require.NoError(t, h.SignIn(ctx, srcs, "plain", browser(t, o.TS)))
	st, err := h.SignInState(ctx, srcs, "plain")
	require.NoError(t, err)
	assert.Equal(t, oauth.SignedIn, st)

	f = h.Connect(ctx, srcs, nil)
	defer f.Close()
	require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	res, err := f.CallServerTool(ctx, "plain", "whoami", nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Content), "signed in")
	assert.Equal(t, int32(1), unauthenticated.Load(), "signed in, nothing goes out unauthenticated")
	require.NoError(t, f.Close())

	// The same name and URL with its own Authorization header: the header
	// goes out, never the stored credential, and the refusal is not a
	// sign-in to do.
	own := userSrc(`{"mcpServers": {"plain": {"type": "http", "url": "` + o.TS.URL + `/mcp", "headers": {"Authorization": "Bearer mine"}}}}`)
	f = h.Connect(ctx, own, nil)
	sr = f.Servers()[0]
	assert.Equal(t, StateFailed, sr.State)
	assert.Equal(t, httptransport.ReasonAuthRequired, sr.Reason)
}

// TestChallengeNotBearer: without a Bearer challenge, or in a deployment
// without Config.OAuth, a 401 stays httptransport.ReasonAuthRequired; a
// definition setting its own Authorization header never gets the stored
// credential.
func TestChallengeNotBearer(t *testing.T) {
	for _, tt := range []struct {
		name, header string
		oauthOn      bool
		want         string
	}{
		{"basic challenge", `Basic realm="x"`, true, httptransport.ReasonAuthRequired},
		{"no challenge", "", true, httptransport.ReasonAuthRequired},
		{"bearer without OAuth in the deployment", `Bearer realm="x"`, false, httptransport.ReasonAuthRequired},
		{"bearer", `Bearer realm="x"`, true, oauth.ReasonSignInRequired},
		{"bearer second of two", `Basic realm="x", Bearer scope="a"`, true, oauth.ReasonSignInRequired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOAuthMCP(t)
			o.TS.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.header != "" {
					w.Header().Set("WWW-Authenticate", tt.header)
				}
				w.WriteHeader(http.StatusUnauthorized)
			})
			cfg := oauthConfig(t, o.TS)
			if !tt.oauthOn {
				cfg.OAuth = nil
			}
			h, cleanup, err := Headless(StateDir(t.TempDir()), nil, cfg)
			require.NoError(t, err)
			defer cleanup()
			f := h.Connect(context.Background(), userSrc(`{"mcpServers": {"plain": {"type": "http", "url": "`+o.TS.URL+`/mcp"}}}`), nil)
			defer f.Close()
			sr := f.Servers()[0]
			assert.Equal(t, refusal.AuthRequired, sr.Class)
			assert.Equal(t, tt.want, sr.Reason)
		})
	}
}

// TestDiscoverOAuth: doctor's discovery of a server without "oauth" that
// answered with a Bearer challenge follows the challenge's link; a stdio
// server is refused before anything is sent.
func TestDiscoverOAuth(t *testing.T) {
	o := newOAuthMCP(t)
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {"plain": {"type": "http", "url": "` + o.TS.URL + `/mcp"}, "local": {"command": "/bin/true"}}}`)
	require.NoError(t, h.Connect(ctx, srcs, &ConnectOptions{Names: []string{"plain"}}).Close())

	rep, err := h.DiscoverOAuth(ctx, srcs, "plain")
	require.NoError(t, err)
	require.NotNil(t, rep)
	assert.Equal(t, o.TS.URL, rep.Issuer)
	require.NotEmpty(t, rep.Steps)
	assert.Equal(t, oauth.CheckChallenge, rep.Steps[0].Check, "the recorded challenge is followed: %+v", rep.Steps)
	for _, st := range rep.Steps {
		assert.NotContains(t, st.URL, "?")
	}

	rep, err = h.DiscoverOAuth(ctx, srcs, "local")
	assert.Equal(t, ReasonNotOAuth, refusal.ReasonOf(err))
	assert.Nil(t, rep)
}

// TestSignInOptionsAndRefusals: BeginSignInWithOptions listens on the
// callback port it is given; the headless sign-ins refuse, before
// anything is sent, what SignIn refuses.
func TestSignInOptionsAndRefusals(t *testing.T) {
	o := newOAuthMCP(t)
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {"plain": {"type": "http", "url": "` + o.TS.URL + `/mcp"}, "local": {"command": "/bin/true"}}}`)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	p, err := h.BeginSignInWithOptions(ctx, srcs, "plain", oauth.SignInOptions{CallbackPort: port})
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/callback", p.RedirectURI())
	require.NoError(t, p.Close())

	for _, name := range []string{"local", "ghost"} {
		err := h.SignInClientCredentials(ctx, srcs, name, oauth.ClientCredentials{ClientID: "bot", Secret: "s"})
		assert.Contains(t, []string{ReasonNotOAuth, ReasonUnknownServer}, refusal.ReasonOf(err))
		err = h.SignInEnterpriseManaged(ctx, srcs, name, oauth.EnterpriseManaged{SubjectToken: "t"})
		assert.Contains(t, []string{ReasonNotOAuth, ReasonUnknownServer}, refusal.ReasonOf(err))
		err = h.SignInWorkloadIdentity(ctx, srcs, name, oauth.WorkloadIdentity{TokenFile: "/nonexistent"})
		assert.Contains(t, []string{ReasonNotOAuth, ReasonUnknownServer}, refusal.ReasonOf(err))
	}
}

// TestStepUpReason: a call the server refuses for insufficient_scope,
// naming a scope the credential lacks, fails as Class AuthRequired,
// oauth.ReasonStepUpRequired (the transport alone would say auth_refused).
func TestStepUpReason(t *testing.T) {
	o := newOAuthMCP(t)
	inner := o.TS.Config.Handler
	o.TS.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" && r.Header.Get("Authorization") != "" && r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if bytes.Contains(b, []byte(`"tools/call"`)) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="notes:write"`)
				w.WriteHeader(http.StatusForbidden)
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, oauthConfig(t, o.TS))
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	// One server with "oauth", one without (signed in from its challenge).
	for name, def := range map[string]string{"keyed": `"oauth": {}`, "plain": `"headers": {}`} {
		srcs := userSrc(`{"mcpServers": {"` + name + `": {"type": "http", "url": "` + o.TS.URL + `/mcp", ` + def + `}}}`)
		require.NoError(t, h.SignIn(ctx, srcs, name, browser(t, o.TS)))
		f := h.Connect(ctx, srcs, nil)
		require.Equal(t, StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
		_, err = f.CallServerTool(ctx, name, "whoami", nil)
		assert.Equal(t, refusal.AuthRequired, refusal.ClassOf(err), def)
		assert.Equal(t, oauth.ReasonStepUpRequired, refusal.ReasonOf(err), def)
		require.NoError(t, f.Close())
	}
}

// TestClientMetadataURL: where the authorization server supports client id
// metadata documents, the definition's oauth.clientMetadataUrl, else the
// host's OAuthConfig.ClientMetadataURL, is the sign-in's client_id.
func TestClientMetadataURL(t *testing.T) {
	o := newOAuthMCP(t)
	inner := o.TS.Config.Handler
	o.TS.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-authorization-server" {
			oauthJSON(w, http.StatusOK, map[string]any{
				"issuer": o.TS.URL, "authorization_endpoint": o.TS.URL + "/authorize", "token_endpoint": o.TS.URL + "/token",
				"code_challenge_methods_supported": []string{"S256"}, "client_id_metadata_document_supported": true,
			})
			return
		}
		inner.ServeHTTP(w, r)
	})
	cfg := oauthConfig(t, o.TS)
	cfg.OAuth.ClientMetadataURL = "https://host.example.com/client.json"
	h, cleanup, err := Headless(StateDir(t.TempDir()), nil, cfg)
	require.NoError(t, err)
	defer cleanup()
	ctx := context.Background()
	srcs := userSrc(`{"mcpServers": {
	  "plain": {"type": "http", "url": "` + o.TS.URL + `/mcp"},
	  "own":   {"type": "http", "url": "` + o.TS.URL + `/mcp", "oauth": {"clientMetadataUrl": "https://own.example.com/client.json"}}}}`)
	for name, want := range map[string]string{"plain": "https://host.example.com/client.json", "own": "https://own.example.com/client.json"} {
		p, err := h.BeginSignIn(ctx, srcs, name)
		require.NoError(t, err, name)
		u, err := url.Parse(p.URL())
		require.NoError(t, err)
		assert.Equal(t, want, u.Query().Get("client_id"), name)
		require.NoError(t, p.Close())
	}
}
