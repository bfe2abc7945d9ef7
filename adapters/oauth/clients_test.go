package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// seedClient stores cr as a client registration, as a former sign-in
// would have.
func seedClient(e *testEnv, cr *clientRecord) {
	cr.Version = clientRecordVersion
	b, err := json.Marshal(cr)
	if err != nil {
		panic(err)
	}
	if err := e.store.Set(context.Background(), clientKey(cr.Server, cr.Resource, cr.Issuer), b); err != nil {
		panic(err)
	}
}

// clRequireClean fails when err's text carries the canary, a PEM block,
// a JWT or a Basic credential.
func clRequireClean(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, bad := range []string{canary, "PRIVATE KEY", "eyJ", "Basic "} {
		if strings.Contains(msg, bad) {
			t.Fatalf("an error carries a secret-shaped value (%d bytes of text)", len(msg))
		}
	}
}

// clStoredClient returns the client registration stored for id at the
// fake, nil when none.
func clStoredClient(t testing.TB, e *testEnv, id string) *clientRecord {
	t.Helper()
	cr, err := e.c.loadClient(context.Background(), id, e.as.MCP(), e.as.URL())
	require.NoError(t, err)
	return cr
}

// clSignIn runs one loopback sign-in of s with o to its end.
func clSignIn(t testing.TB, e *testEnv, s Server, o SignInOptions) error {
	t.Helper()
	p, err := e.c.BeginSignInWithOptions(context.Background(), s, o)
	if err != nil {
		return err
	}
	defer p.Close()
	browse(t, e.as.ts, p.URL())
	return p.Wait(context.Background())
}

func TestRegistrationAuthMethod(t *testing.T) {
	tests := []struct {
		name      string
		supported []string
		answer    string // the method the registration answers with, "" for none with no secret
		asked     string
		used      string
	}{
		{"nothing advertised: public", nil, "", AuthNone, AuthNone},
		{"none advertised", []string{AuthNone, AuthClientSecretBasic}, "", AuthNone, AuthNone},
		{"basic only", []string{AuthClientSecretBasic}, AuthClientSecretBasic, AuthClientSecretBasic, AuthClientSecretBasic},
		{"post only", []string{AuthClientSecretPost}, AuthClientSecretPost, AuthClientSecretPost, AuthClientSecretPost},
		{"the answer's method wins", []string{AuthClientSecretBasic, AuthClientSecretPost}, AuthClientSecretPost, AuthClientSecretBasic, AuthClientSecretPost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.authMethods, f.regMethod = tt.supported, tt.answer })
			s := e.as.server("srv")
			require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
			var asked, used string
			e.as.set(func(f *fakeAS) { asked, used = f.lastRegMethod, f.lastMethod })
			assert.Equal(t, tt.asked, asked, "method asked for")
			assert.Equal(t, tt.used, used, "method of the code exchange")
			cr := clStoredClient(t, e, "srv")
			require.NotNil(t, cr, "the registration is stored")
			assert.Equal(t, tt.used, cr.Method)
			assert.Equal(t, tt.used != AuthNone, cr.ClientSecret != "", "a secret kept exactly when the method needs one")
			assert.Equal(t, cr.ClientID, siStored(t, e, "srv").ClientID)
			raw, err := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
			require.NoError(t, err)
			assert.False(t, strings.Contains(string(raw), "secret-"), "the secret lives in the client record only")

			// A refresh authenticates the same way.
			e.now.Add(2 * time.Hour)
			a, req := tokAuth(t, e.c, s)
			_, err = a.Headers(context.Background(), req)
			require.NoError(t, err)
			e.as.set(func(f *fakeAS) { used = f.lastMethod })
			assert.Equal(t, tt.used, used, "method of the refresh")
		})
	}
}

func TestRegistrationReusedAndKeptBySignOut(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) { f.authMethods, f.regMethod = []string{AuthClientSecretBasic}, AuthClientSecretBasic })
	s := e.as.server("srv")
	require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
	first := clStoredClient(t, e, "srv")
	require.NotNil(t, first)
	var auth string
	e.as.handle("/revoke", func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		assert.ErrorIs(t, mustGet(e, storeKey("srv", e.as.MCP())), ports.ErrNotFound, "tokens deleted before the revocation")
		w.WriteHeader(http.StatusOK)
	})
	require.NoError(t, e.c.SignOut(context.Background(), s))
	assert.True(t, strings.HasPrefix(auth, "Basic "), "the revocation authenticates the client")
	kept := clStoredClient(t, e, "srv")
	require.NotNil(t, kept, "sign-out keeps the registration")

	require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
	assert.Equal(t, 1, e.as.count("/register"), "the stored registration is reused")
	assert.Equal(t, first.ClientID, siStored(t, e, "srv").ClientID)
}

// mustGet returns the store's error for key.
func mustGet(e *testEnv, key string) error {
	_, err := e.store.Get(context.Background(), key)
	return err
}

func TestRegistrationAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer map[string]any
		class  refusal.Class
		reason string
	}{
		{"secret method without a secret", map[string]any{"client_id": "c", "token_endpoint_auth_method": AuthClientSecretBasic}, refusal.Protocol, ReasonMetadataInvalid},
		{"method not implemented", map[string]any{"client_id": "c", "client_secret": canary, "token_endpoint_auth_method": "tls_client_auth"}, refusal.Unsupported, ReasonClientAuthUnsupported},
		{"no client id", map[string]any{"client_secret": canary}, refusal.Protocol, ReasonMetadataInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.handle("/register", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusCreated, tt.answer) })
			_, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
			siRequire(t, err, tt.class, tt.reason)
			clRequireClean(t, err)
			assert.Nil(t, clStoredClient(t, e, "srv"))
		})
	}
}

func TestPreRegisteredClientSecret(t *testing.T) {
	e := newEnv(t)
	secret := "pre-secret-" + canary
	e.as.set(func(f *fakeAS) {
		f.authMethods = []string{AuthClientSecretBasic}
		f.secrets["pre"] = secret
	})
	s := e.as.server("srv")
	s.ClientID = "pre"

	_, err := e.c.BeginSignIn(context.Background(), s)
	siRequire(t, err, refusal.Config, ReasonClientSecretRequired)

	err = clSignIn(t, e, s, SignInOptions{ClientSecret: "wrong-" + canary})
	siRequire(t, err, refusal.AuthRefused, ReasonClientAuthRefused)
	clRequireClean(t, err)
	assert.Nil(t, clStoredClient(t, e, "srv"), "a refused secret is not stored")

	require.NoError(t, clSignIn(t, e, s, SignInOptions{ClientSecret: secret}))
	assert.Zero(t, e.as.count("/register"))
	cr := clStoredClient(t, e, "srv")
	require.NotNil(t, cr)
	assert.True(t, cr.ClientSecret == secret && cr.Method == AuthClientSecretBasic && cr.Kind == clientPreregistered)

	// A later sign-in uses the stored secret.
	require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
	var used string
	e.as.set(func(f *fakeAS) { used = f.lastMethod })
	assert.Equal(t, AuthClientSecretBasic, used)
}

func TestPreRegisteredSecretPost(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) {
		f.authMethods = []string{AuthClientSecretPost}
		f.secrets["pre"] = "s-" + canary
	})
	s := e.as.server("srv")
	s.ClientID = "pre"
	require.NoError(t, clSignIn(t, e, s, SignInOptions{ClientSecret: "s-" + canary}))
	var used string
	e.as.set(func(f *fakeAS) { used = f.lastMethod })
	assert.Equal(t, AuthClientSecretPost, used)

	e.as.set(func(f *fakeAS) { f.authMethods = []string{AuthPrivateKeyJWT} })
	_, err := e.c.BeginSignInWithOptions(context.Background(), s, SignInOptions{ClientSecret: "s-" + canary})
	siRequire(t, err, refusal.Unsupported, ReasonClientAuthUnsupported)
}

func TestSignInOptionsCallbackPort(t *testing.T) {
	e := newEnv(t)
	port := siFreePort(t)
	p, err := e.c.BeginSignInWithOptions(context.Background(), e.as.server("srv"), SignInOptions{CallbackPort: port})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, fmt.Sprintf("http://127.0.0.1:%d/callback", port), p.RedirectURI())
	_, err = e.c.BeginSignInWithOptions(context.Background(), e.as.server("srv"), SignInOptions{CallbackPort: 70000})
	siRequire(t, err, refusal.Config, ReasonCallbackPortInvalid)
}

func TestClientIDMetadataDocument(t *testing.T) {
	const doc = "https://client.example/mcpward.json"
	tests := []struct {
		name      string
		supported bool
		url       string
		clientID  string // "" means a registered one
		reason    string
	}{
		{"advertised", true, doc, doc, ""},
		{"not advertised: registration", false, doc, "", ""},
		{"not https", true, "http://client.example/x.json", "", ReasonURLInvalid},
		{"no path", true, "https://client.example/", "", ReasonURLInvalid},
		{"a query", true, "https://client.example/x.json?v=1", "", ReasonURLInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.cimd = tt.supported })
			s := e.as.server("srv")
			s.ClientMetadataURL = tt.url
			if tt.reason != "" {
				_, err := e.c.BeginSignIn(context.Background(), s)
				siRequire(t, err, refusal.Config, tt.reason)
				return
			}
			require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
			got := siLastAuth(e).Get("client_id")
			if tt.clientID != "" {
				assert.Equal(t, tt.clientID, got)
				assert.Zero(t, e.as.count("/register"))
				assert.Nil(t, clStoredClient(t, e, "srv"), "nothing to store")
			} else {
				assert.Equal(t, 1, e.as.count("/register"))
			}
			assert.Equal(t, got, siStored(t, e, "srv").ClientID)
		})
	}
}

func TestNewRegistrationAndForgetClient(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
	first := clStoredClient(t, e, "srv")
	require.NotNil(t, first)

	require.NoError(t, clSignIn(t, e, s, SignInOptions{NewRegistration: true}))
	assert.Equal(t, 2, e.as.count("/register"))
	second := clStoredClient(t, e, "srv")
	require.NotNil(t, second)
	assert.NotEqual(t, first.ClientID, second.ClientID, "the new registration replaces the stored one")

	require.NoError(t, e.c.ForgetClient(context.Background(), s))
	assert.Nil(t, clStoredClient(t, e, "srv"))
	st, err := e.c.Status(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, SignedIn, st, "the credential is kept")
	require.NoError(t, e.c.ForgetClient(context.Background(), s), "nothing stored is no error")

	e.store.Fail("Delete", errors.New("locked "+canary))
	siRequire(t, e.c.ForgetClient(context.Background(), s), refusal.Transient, ReasonStoreUnavailable)
}

func TestRefusedRegistrationForgotten(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) { f.regMethod = AuthClientSecretBasic })
	s := e.as.server("srv")
	require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
	require.NotNil(t, clStoredClient(t, e, "srv"))
	e.as.set(func(f *fakeAS) { clear(f.secrets) }) // the server forgot its clients
	err := clSignIn(t, e, s, SignInOptions{})
	siRequire(t, err, refusal.AuthRefused, ReasonClientAuthRefused)
	clRequireClean(t, err)
	assert.Nil(t, clStoredClient(t, e, "srv"), "the dead registration is forgotten")
	require.NoError(t, clSignIn(t, e, s, SignInOptions{}))
	assert.Equal(t, 2, e.as.count("/register"))
}
