package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

func TestClientCredentialsSecret(t *testing.T) {
	for _, method := range []string{AuthClientSecretBasic, AuthClientSecretPost} {
		t.Run(method, func(t *testing.T) {
			e := newEnv(t)
			secret := "cc-secret-" + canary
			e.as.set(func(f *fakeAS) {
				f.authMethods = []string{method}
				f.secrets["svc"] = secret
			})
			s := e.as.server("srv")
			require.NoError(t, e.c.SignInClientCredentials(context.Background(), s, ClientCredentials{ClientID: "svc", Secret: secret}))
			var used string
			e.as.set(func(f *fakeAS) { used = f.lastMethod })
			assert.Equal(t, method, used)
			form := siLastToken(e)
			assert.Equal(t, grantClientCredentials, form.Get("grant_type"))
			assert.Equal(t, e.as.MCP(), form.Get("resource"))
			assert.Equal(t, "mcp.read mcp.write", form.Get("scope"), "scopes_supported when the definition names none")
			rec := siStored(t, e, "srv")
			assert.Equal(t, grantClientCredentials, rec.Grant)
			assert.Equal(t, "svc", rec.ClientID)
			cr := clStoredClient(t, e, "srv")
			require.NotNil(t, cr)
			assert.True(t, cr.ClientSecret == secret && cr.Method == method, "the secret is kept with the client")

			// Expired: renewed by the same grant, once.
			a, req := tokAuth(t, e.c, s)
			h, err := a.Headers(context.Background(), req)
			require.NoError(t, err)
			first := h.Get("Authorization")
			e.now.Add(2 * time.Hour)
			h, err = a.Headers(context.Background(), req)
			require.NoError(t, err)
			assert.NotEqual(t, first, h.Get("Authorization"), "a new token")
			assert.Equal(t, 2, e.as.count("/token"))
			assert.Equal(t, grantClientCredentials, siLastToken(e).Get("grant_type"))

			// Refused by the server: renewed too.
			retry, err := a.Refused(context.Background(), tokRefusal(a, 401, ""))
			require.NoError(t, err)
			assert.True(t, retry)
			assert.Equal(t, 3, e.as.count("/token"))
		})
	}
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	e := newEnv(t)
	keyPEM, pub := testKeyPEM(t)
	e.as.set(func(f *fakeAS) {
		f.authMethods = []string{AuthPrivateKeyJWT}
		f.signingAlgs = []string{"ES256"}
		f.keys["svc"] = pub
	})
	s := e.as.server("srv")
	s.Scopes = []string{"mcp.read"}
	require.NoError(t, e.c.SignInClientCredentials(context.Background(), s, ClientCredentials{ClientID: "svc", PrivateKeyPEM: keyPEM, KeyID: "k1"}))
	var claims *jwt.Claims
	e.as.set(func(f *fakeAS) { claims = f.lastAssertion })
	require.NotNil(t, claims, "the assertion was verified")
	assert.Equal(t, "svc", claims.Issuer)
	assert.Equal(t, jwt.Audience{e.as.URL()}, claims.Audience, "aud is the issuer")
	assert.True(t, e.now.Now().Add(assertionLifetime).Equal(claims.Expiry.Time()), "exp is a minute on")
	form := siLastToken(e)
	assert.Empty(t, form.Get("client_secret"))
	assert.Equal(t, "mcp.read", form.Get("scope"))
	cr := clStoredClient(t, e, "srv")
	require.NotNil(t, cr)
	assert.True(t, cr.PrivateKeyPEM == string(keyPEM) && cr.Alg == "ES256" && cr.KeyID == "k1", "the key is kept with the client")

	// Renewal signs a fresh assertion from the stored key.
	e.now.Add(2 * time.Hour)
	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	var renewed *jwt.Claims
	e.as.set(func(f *fakeAS) { renewed = f.lastAssertion })
	assert.NotEqual(t, claims.ID, renewed.ID, "a fresh jti")

	// A later headless sign-in with nothing given uses the stored key.
	require.NoError(t, e.c.SignInClientCredentials(context.Background(), s, ClientCredentials{}))
	e.as.set(func(f *fakeAS) { renewed = f.lastAssertion })
	assert.Equal(t, "svc", renewed.Subject)
	err = e.c.SignInClientCredentials(context.Background(), s, ClientCredentials{ClientID: "other"})
	siRequire(t, err, refusal.Config, ReasonClientCredentialsInvalid)

	// Sign-out deletes the tokens, then revokes with a signed assertion;
	// the client and its key stay.
	var revoked url.Values
	e.as.handle("/revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		revoked = r.PostForm
		w.WriteHeader(http.StatusOK)
	})
	require.NoError(t, e.c.SignOut(context.Background(), s))
	require.NotNil(t, revoked, "a revocation was sent")
	assert.Equal(t, assertionTypeJWTBearer, revoked.Get("client_assertion_type"))
	assert.True(t, strings.Count(revoked.Get("client_assertion"), ".") == 2, "a signed assertion")
	assert.NotNil(t, clStoredClient(t, e, "srv"), "the client is kept")
	st, err := e.c.Status(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, SignedOut, st)
}

func TestClientCredentialsRefusals(t *testing.T) {
	ecPEM, _ := testKeyPEM(t)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	rsaPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)})
	tests := []struct {
		name    string
		methods []string
		algs    []string
		cc      ClientCredentials
		class   refusal.Class
		reason  string
	}{
		{"no client id", nil, nil, ClientCredentials{Secret: "s-" + canary}, refusal.Config, ReasonClientCredentialsInvalid},
		{"no secret or key", nil, nil, ClientCredentials{ClientID: "svc"}, refusal.Config, ReasonClientCredentialsInvalid},
		{"both secret and key", nil, nil, ClientCredentials{ClientID: "svc", Secret: "s-" + canary, PrivateKeyPEM: ecPEM}, refusal.Config, ReasonClientCredentialsInvalid},
		{"key not PEM", nil, nil, ClientCredentials{ClientID: "svc", PrivateKeyPEM: []byte("not a key " + canary)}, refusal.Config, ReasonClientKeyInvalid},
		{"alg does not fit the key", nil, nil, ClientCredentials{ClientID: "svc", PrivateKeyPEM: ecPEM, Alg: "RS256"}, refusal.Config, ReasonClientKeyInvalid},
		{"alg not advertised", []string{AuthPrivateKeyJWT}, []string{"RS256"}, ClientCredentials{ClientID: "svc", PrivateKeyPEM: ecPEM}, refusal.Unsupported, ReasonClientAuthUnsupported},
		{"rsa alg advertised", []string{AuthPrivateKeyJWT}, []string{"PS256"}, ClientCredentials{ClientID: "svc", PrivateKeyPEM: rsaPEM}, refusal.AuthRefused, ReasonClientAuthRefused},
		{"secret where only keys are", []string{AuthPrivateKeyJWT}, nil, ClientCredentials{ClientID: "svc", Secret: "s-" + canary}, refusal.Unsupported, ReasonClientAuthUnsupported},
		{"key where only secrets are", []string{AuthClientSecretBasic}, nil, ClientCredentials{ClientID: "svc", PrivateKeyPEM: ecPEM}, refusal.Unsupported, ReasonClientAuthUnsupported},
		{"wrong secret", nil, nil, ClientCredentials{ClientID: "svc", Secret: "wrong-" + canary}, refusal.AuthRefused, ReasonClientAuthRefused},
		{"unknown key", nil, nil, ClientCredentials{ClientID: "svc", PrivateKeyPEM: ecPEM}, refusal.AuthRefused, ReasonClientAuthRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) {
				f.authMethods, f.signingAlgs = tt.methods, tt.algs
				f.secrets["svc"] = "right-" + canary
			})
			err := e.c.SignInClientCredentials(context.Background(), e.as.server("srv"), tt.cc)
			siRequire(t, err, tt.class, tt.reason)
			clRequireClean(t, err)
			_, gerr := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
			assert.Error(t, gerr, "nothing stored")
			assert.Nil(t, clStoredClient(t, e, "srv"))
		})
	}
}

func TestClientCredentialsRenewalRefused(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) { f.secrets["svc"] = "s-" + canary })
	s := e.as.server("srv")
	require.NoError(t, e.c.SignInClientCredentials(context.Background(), s, ClientCredentials{ClientID: "svc", Secret: "s-" + canary}))
	e.as.set(func(f *fakeAS) { f.secrets["svc"] = "rotated-" + canary })
	e.now.Add(2 * time.Hour)
	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	tokRequire(t, err, refusal.AuthRefused, ReasonClientAuthRefused)
	clRequireClean(t, err)
	assert.NotNil(t, tokStored(t, e, s), "the credential is kept")
}

// xaa returns a CrossApp that the fake accepts.
func xaa(e *testEnv) EnterpriseManaged {
	var subject, client string
	e.as.set(func(f *fakeAS) {
		subject, client = f.subjectToken, f.xaaClient
		f.secrets[client] = "xaa-secret-" + canary
	})
	return EnterpriseManaged{
		IdPTokenEndpoint: e.as.URL() + "/idp/token", SubjectToken: subject, IdPClientID: "idp-client",
		Client: ClientCredentials{ClientID: client, Secret: "xaa-secret-" + canary},
	}
}

func TestCrossApp(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) { f.authMethods = []string{AuthClientSecretBasic} })
	s := e.as.server("srv")
	x := xaa(e)
	require.NoError(t, e.c.SignInEnterpriseManaged(context.Background(), s, x))
	var exch map[string][]string
	var used string
	e.as.set(func(f *fakeAS) { exch, used = f.lastExchange, f.lastMethod })
	assert.Equal(t, []string{"idp-client"}, exch["client_id"])
	assert.Equal(t, []string{"mcp.read mcp.write"}, exch["scope"])
	assert.Equal(t, AuthClientSecretBasic, used)
	assert.Equal(t, grantJWTBearer, siLastToken(e).Get("grant_type"))
	rec := siStored(t, e, "srv")
	assert.True(t, strings.HasPrefix(rec.AccessToken, "cc-"), "the access token of the bearer grant")
	assert.Empty(t, rec.Grant, "not renewable without the user's assertion")
	raw, err := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(raw), x.SubjectToken), "the subject token is not stored")
	assert.False(t, strings.Contains(string(raw), "eyJ"), "the grant is not stored")
	a, req := tokAuth(t, e.c, s)
	_, err = a.Headers(context.Background(), req)
	require.NoError(t, err)
}

func TestCrossAppRefusals(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(e *testEnv, x *CrossApp)
		class  refusal.Class
		reason string
	}{
		{"no subject token", func(_ *testEnv, x *CrossApp) { x.SubjectToken = "" }, refusal.Config, ReasonCrossAppInvalid},
		{"idp not https", func(e *testEnv, x *CrossApp) {
			x.IdPTokenEndpoint = strings.Replace(x.IdPTokenEndpoint, "https:", "http:", 1)
		}, refusal.Config, ReasonCrossAppInvalid},
		{"no client secret", func(_ *testEnv, x *CrossApp) { x.Client.Secret = "" }, refusal.Config, ReasonClientCredentialsInvalid},
		{"subject refused", func(_ *testEnv, x *CrossApp) { x.SubjectToken = "other-" + canary }, refusal.AuthRefused, ReasonTokenExchangeRefused},
		{"not an ID-JAG", func(e *testEnv, _ *CrossApp) {
			e.as.handle("/idp/token", func(w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-" + canary, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
			})
		}, refusal.Protocol, ReasonTokenExchangeInvalid},
		{"idp redirects", func(e *testEnv, _ *CrossApp) {
			e.as.handle("/idp/token", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, e.as.URL()+"/elsewhere?"+canary, http.StatusTemporaryRedirect)
			})
		}, refusal.Refused, ReasonRedirectRefused},
		{"idp down", func(e *testEnv, _ *CrossApp) {
			e.as.handle("/idp/token", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, canary, 503) })
		}, refusal.Transient, ReasonUnavailable},
		{"grant for another client", func(e *testEnv, _ *CrossApp) {
			e.as.set(func(f *fakeAS) { f.xaaClient = "someone-else" })
		}, refusal.AuthRefused, ReasonTokenRefused},
		{"wrong client secret", func(_ *testEnv, x *CrossApp) { x.Client.Secret = "wrong-" + canary }, refusal.AuthRefused, ReasonClientAuthRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			x := xaa(e)
			tt.edit(e, &x)
			err := e.c.SignInEnterpriseManaged(context.Background(), e.as.server("srv"), x)
			siRequire(t, err, tt.class, tt.reason)
			clRequireClean(t, err)
			assert.Zero(t, e.as.count("/elsewhere"))
			_, gerr := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
			assert.Error(t, gerr, "nothing stored")
		})
	}
}

func TestParseSigningKey(t *testing.T) {
	ecPEM, _ := testKeyPEM(t)
	k384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	sec1, err := x509.MarshalECPrivateKey(k384)
	require.NoError(t, err)
	ec384PEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})
	tests := []struct {
		name    string
		pem     []byte
		alg     string
		wantAlg string
		ok      bool
	}{
		{"pkcs8 p256", ecPEM, "", "ES256", true},
		{"sec1 p384", ec384PEM, "", "ES384", true},
		{"explicit fitting alg", ecPEM, "ES256", "ES256", true},
		{"alg of another curve", ecPEM, "ES384", "", false},
		{"hmac alg", ecPEM, "HS256", "", false},
		{"none alg", ecPEM, "none", "", false},
		{"two blocks", append(append([]byte{}, ecPEM...), ecPEM...), "", "", false},
		{"public key block", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1}}), "", "", false},
		{"garbage in a key block", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")}), "", "", false},
		{"empty", nil, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := parseSigningKey(tt.pem, tt.alg, "")
			if !tt.ok {
				require.Error(t, err)
				assert.NotContains(t, err.Error(), "PRIVATE")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAlg, string(k.alg))
			_, err = k.assertion("c", "https://as.example", time.Now())
			require.NoError(t, err)
		})
	}
}

func TestParseExchange(t *testing.T) {
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"id-jag", `{"access_token":"g","issued_token_type":"` + TokenTypeIDJAG + `","token_type":"N_A"}`, true},
		{"other type", `{"access_token":"g","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`, false},
		{"no type", `{"access_token":"g"}`, false},
		{"empty token", `{"access_token":"","issued_token_type":"` + TokenTypeIDJAG + `"}`, false},
		{"token not a string", `{"access_token":1,"issued_token_type":"` + TokenTypeIDJAG + `"}`, false},
		{"array", `[]`, false},
		{"not json", `access_token=g`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := parseExchange([]byte(tt.body))
			assert.Equal(t, tt.ok, ok)
			if ok {
				assert.Equal(t, "g", g)
			}
		})
	}
}

func FuzzParseExchange(f *testing.F) {
	f.Add([]byte(`{"access_token":"g","issued_token_type":"` + TokenTypeIDJAG + `"}`))
	f.Add([]byte(`{"access_token":null}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		g, ok := parseExchange(body)
		if ok && g == "" {
			t.Fatal("an empty grant accepted")
		}
	})
}

func FuzzParseSigningKey(f *testing.F) {
	ecPEM, _ := testKeyPEM(f)
	f.Add(ecPEM, "")
	f.Add(ecPEM, "ES384")
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, alg string) {
		k, err := parseSigningKey(data, alg, "")
		if err != nil {
			if strings.Contains(err.Error(), "PRIVATE") {
				t.Fatal("an error names the key")
			}
			return
		}
		if _, err := k.assertion("c", "https://as.example", time.Now()); err != nil {
			t.Fatal("a parsed key cannot sign")
		}
	})
}

func TestTokenResponseBounded(t *testing.T) {
	e := newEnv(t)
	c, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) { return e.as.ts.Client(), nil },
		Store: e.store, Locker: e.locker, Now: e.now.Now, MaxResponseBytes: 4096})
	require.NoError(t, err)
	e.as.set(func(f *fakeAS) { f.secrets["svc"] = "s" })
	e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"access_token": strings.Repeat("a", 8192) + canary, "token_type": "Bearer"})
	})
	err = c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{ClientID: "svc", Secret: "s"})
	siRequire(t, err, refusal.Protocol, ReasonTokenResponseInvalid)
}

func TestTokenResponseShapes(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		expiry                  time.Duration // 0: none
		ok                      bool
	}{
		{"json", "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":60}`, time.Minute, true},
		{"json without expiry", "application/json", `{"access_token":"a","token_type":"bearer"}`, 0, true},
		{"json string expiry", "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":"60"}`, time.Minute, true},
		{"json empty string expiry", "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":""}`, 0, false},
		{"json signed string expiry", "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":"+60"}`, 0, false},
		{"json fractional string expiry", "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":"60.5"}`, 0, false},
		{"json huge string expiry", "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":"99999999999"}`, 0, false},
		{"json huge expiry", "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":1e12}`, 0, false},
		{"form", "application/x-www-form-urlencoded", `access_token=a&token_type=bearer&expires_in=60`, time.Minute, true},
		{"form without expiry", "application/x-www-form-urlencoded", `access_token=a&token_type=bearer`, 0, true},
		{"form fractional expiry", "application/x-www-form-urlencoded", `access_token=a&token_type=bearer&expires_in=1.5`, 0, false},
		{"form negative expiry", "application/x-www-form-urlencoded", `access_token=a&token_type=bearer&expires_in=-5`, 0, false},
		{"form text expiry", "text/plain", `access_token=a&token_type=bearer&expires_in=soon`, 0, false},
		{"form no token type", "application/x-www-form-urlencoded", `access_token=a`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.secrets["svc"] = "s" })
			e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				_, _ = w.Write([]byte(tt.body))
			})
			err := e.c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{ClientID: "svc", Secret: "s"})
			if !tt.ok {
				siRequire(t, err, refusal.Protocol, ReasonTokenResponseInvalid)
				return
			}
			require.NoError(t, err)
			rec := siStored(t, e, "srv")
			if tt.expiry == 0 {
				assert.True(t, rec.Expiry.IsZero())
			} else {
				assert.True(t, e.now.Now().Add(tt.expiry).Equal(rec.Expiry), "expiry from the client's clock")
			}
		})
	}
}

// TestHeadlessOverLoopbackHTTP runs the headless sign-ins against a
// plain-http fake under Options.AllowLoopbackHTTP, as the conformance
// client meets them.
func TestHeadlessOverLoopbackHTTP(t *testing.T) {
	t.Run("client_secret_basic", func(t *testing.T) {
		e := newLoopbackEnv(t, true)
		e.as.set(func(f *fakeAS) {
			f.clock, f.authMethods = e.now.Now, []string{AuthClientSecretBasic}
			f.secrets["svc"] = "s-" + canary
		})
		require.NoError(t, e.c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{ClientID: "svc", Secret: "s-" + canary}))
		siStored(t, e, "srv")
	})
	t.Run("private_key_jwt", func(t *testing.T) {
		e := newLoopbackEnv(t, true)
		keyPEM, pub := testKeyPEM(t)
		e.as.set(func(f *fakeAS) {
			f.clock, f.authMethods, f.signingAlgs = e.now.Now, []string{AuthPrivateKeyJWT}, []string{"ES256"}
			f.keys["svc"] = pub
		})
		require.NoError(t, e.c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{ClientID: "svc", PrivateKeyPEM: keyPEM, Alg: "ES256"}))
		var claims *jwt.Claims
		e.as.set(func(f *fakeAS) { claims = f.lastAssertion })
		require.NotNil(t, claims)
		assert.Equal(t, jwt.Audience{e.as.URL()}, claims.Audience)
	})
	t.Run("cross-app", func(t *testing.T) {
		e := newLoopbackEnv(t, true)
		e.as.set(func(f *fakeAS) { f.clock, f.authMethods = e.now.Now, []string{AuthClientSecretBasic} })
		require.NoError(t, e.c.SignInEnterpriseManaged(context.Background(), e.as.server("srv"), xaa(e)))
		siStored(t, e, "srv")
	})
	t.Run("refused without the option", func(t *testing.T) {
		e := newLoopbackEnv(t, false)
		e.as.set(func(f *fakeAS) { f.secrets["svc"] = "s" })
		err := e.c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{ClientID: "svc", Secret: "s"})
		require.Error(t, err)
		assert.Zero(t, e.as.count("/token"))
	})
}

// TestSignInCrossAppAlias: the former names still sign in.
func TestSignInCrossAppAlias(t *testing.T) {
	e := newEnv(t)
	var x CrossApp = xaa(e)
	require.NoError(t, e.c.SignInCrossApp(context.Background(), e.as.server("srv"), x))
	assert.Equal(t, SignedIn, must(e.c.Status(context.Background(), e.as.server("srv"))))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
