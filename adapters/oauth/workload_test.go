package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// writeToken writes jwt to a token file in a temporary directory.
func writeToken(t *testing.T, dir, jwt string) string {
	t.Helper()
	p := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(p, []byte(jwt+"\n"), 0o600))
	return p
}

// TestWorkloadIdentity is the conformance suite's wif-jwt-bearer against
// the TLS fake: the JWT-bearer grant with the workload's JWT as the
// assertion, its checks made before anything is sent, the JWT never
// stored, and the renewal reading the token file again.
func TestWorkloadIdentity(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	dir := t.TempDir()
	good := e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL()}, 10*time.Minute)
	file := writeToken(t, dir, good)
	w := WorkloadIdentity{TokenFile: file, ClientID: "wl-client", Issuer: "https://idp.example"}
	require.NoError(t, e.c.SignInWorkloadIdentity(context.Background(), s, w))

	form := siLastToken(e)
	assert.Equal(t, grantJWTBearer, form.Get("grant_type"))
	assert.Equal(t, good, form.Get("assertion"))
	assert.Equal(t, e.as.MCP(), form.Get("resource"))
	assert.Equal(t, "wl-client", form.Get("client_id"))
	assert.Equal(t, 1, e.as.workloads)
	rec := siStored(t, e, "srv")
	assert.Equal(t, grantJWTBearer, rec.Grant)
	assert.Equal(t, file, rec.WorkloadFile)
	for _, k := range []string{storeKey("srv", e.as.MCP()), clientKey("srv", e.as.MCP(), e.as.URL())} {
		b, err := e.store.Get(context.Background(), k)
		if err == nil {
			assert.NotContains(t, string(b), good, "the JWT is never stored")
		}
	}

	// The access token expires: the file (rotated by the platform) is read
	// again, and the grant made again with its JWT.
	e.now.Add(2 * time.Hour)
	rotated := e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL() + "/token"}, 10*time.Minute)
	writeToken(t, dir, rotated)
	a, req := tokAuth(t, e.c, s)
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	assert.NotEqual(t, rec.AccessToken, bearer(t, h))
	assert.Equal(t, rotated, siLastToken(e).Get("assertion"))
	assert.Equal(t, 2, e.as.workloads)

	// A file that now holds an expired JWT is not sent.
	e.now.Add(2 * time.Hour)
	tokens := e.as.count("/token")
	_, err = a.Headers(context.Background(), req)
	tokRequire(t, err, refusal.AuthRequired, ReasonWorkloadTokenExpired)
	assert.Equal(t, tokens, e.as.count("/token"))
}

// TestWorkloadJWTChecked: a JWT that is not for this authorization server,
// has expired, names another issuer than the host expects, or is not a
// JWT at all is refused by name before anything reaches the token
// endpoint, and its text is in no error.
func TestWorkloadJWTChecked(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	dir := t.TempDir()
	seg := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	for _, tt := range []struct {
		name   string
		jwt    string
		issuer string
		class  refusal.Class
		reason string
	}{
		{"another audience", e.as.workloadJWTFor(t, "https://idp.example", []string{"https://other.example"}, time.Hour), "", refusal.Refused, ReasonWorkloadAudienceMismatch},
		{"the audience's prefix", e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL() + ".evil"}, time.Hour), "", refusal.Refused, ReasonWorkloadAudienceMismatch},
		{"expired", e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL()}, -time.Minute), "", refusal.AuthRequired, ReasonWorkloadTokenExpired},
		{"expiring now", e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL()}, 5*time.Second), "", refusal.AuthRequired, ReasonWorkloadTokenExpired},
		{"another issuer", e.as.workloadJWTFor(t, "https://evil.example", []string{e.as.URL()}, time.Hour), "https://idp.example", refusal.Refused, ReasonWorkloadIssuerMismatch},
		{"no issuer", seg(`{"alg":"ES256"}`) + "." + seg(`{"aud":"`+e.as.URL()+`","exp":9999999999}`) + ".c2ln", "", refusal.Config, ReasonWorkloadTokenInvalid},
		{"no expiry", seg(`{"alg":"ES256"}`) + "." + seg(`{"iss":"i","aud":"`+e.as.URL()+`"}`) + ".c2ln", "", refusal.Config, ReasonWorkloadTokenInvalid},
		{"alg none", seg(`{"alg":"none"}`) + "." + seg(`{"iss":"i","aud":"`+e.as.URL()+`","exp":9999999999}`) + ".c2ln", "", refusal.Config, ReasonWorkloadTokenInvalid},
		{"not a JWT", "opaque-" + canary, "", refusal.Config, ReasonWorkloadTokenInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tokens := e.as.count("/token")
			err := e.c.SignInWorkloadIdentity(context.Background(), s,
				WorkloadIdentity{TokenFile: writeToken(t, dir, tt.jwt), Issuer: tt.issuer})
			tokRequire(t, err, tt.class, tt.reason)
			assert.NotContains(t, err.Error(), tt.jwt)
			assert.Equal(t, tokens, e.as.count("/token"), "nothing sent")
		})
	}
	t.Run("no source, two sources, a missing file", func(t *testing.T) {
		for _, w := range []WorkloadIdentity{{}, {TokenFile: "x", Command: []string{"y"}}, {Command: []string{""}}} {
			tokRequire(t, e.c.SignInWorkloadIdentity(context.Background(), s, w), refusal.Config, ReasonWorkloadIdentityInvalid)
		}
		err := e.c.SignInWorkloadIdentity(context.Background(), s, WorkloadIdentity{TokenFile: filepath.Join(dir, canary, "none")})
		tokRequire(t, err, refusal.Config, ReasonWorkloadTokenUnavailable)
		assert.NotContains(t, err.Error(), dir, "the path is not reported")
	})
	t.Run("a refused grant is not retried", func(t *testing.T) {
		jwt := e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL()}, time.Hour)
		e.as.set(func(f *fakeAS) { f.workloadKey = mustKey(t) }) // the server no longer trusts it
		tokens := e.as.count("/token")
		err := e.c.SignInWorkloadIdentity(context.Background(), s, WorkloadIdentity{TokenFile: writeToken(t, dir, jwt)})
		require.Error(t, err)
		assert.Equal(t, tokens+1, e.as.count("/token"), "one request, no retry, no other grant")
	})
}

// TestWorkloadCommand: a command's JWT is used once and the command is
// never stored; its failure, or silence, is refused by name without its
// argv or output.
func TestWorkloadCommand(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	jwt := e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL()}, time.Hour)
	require.NoError(t, e.c.SignInWorkloadIdentity(context.Background(), s,
		WorkloadIdentity{Command: []string{"/bin/sh", "-c", `printf '%s\n' "$1"`, "sh", jwt}}))
	assert.Equal(t, jwt, siLastToken(e).Get("assertion"))
	rec := siStored(t, e, "srv")
	assert.Empty(t, rec.WorkloadFile)
	b, err := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "/bin/sh")
	assert.False(t, rec.renewable(), "a command's sign-in is not renewed from storage")

	for _, argv := range [][]string{
		{"/bin/sh", "-c", "echo " + canary + " >&2; exit 3"},
		{"/bin/sh", "-c", "true"},
		{"/nonexistent/" + canary},
	} {
		err := e.c.SignInWorkloadIdentity(context.Background(), s, WorkloadIdentity{Command: argv})
		tokRequire(t, err, refusal.Config, ReasonWorkloadTokenUnavailable)
		assert.NotContains(t, err.Error(), argv[0])
	}
}

// mustKey returns a fresh P-256 key.
func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// TestWorkloadDPoP: a workload's tokens are DPoP-bound too where the
// authorization server advertises it.
func TestWorkloadDPoP(t *testing.T) {
	e := dpopEnv(t)
	s := e.as.server("srv")
	jwt := e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL()}, time.Hour)
	require.NoError(t, e.c.SignInWorkloadIdentity(context.Background(), s, WorkloadIdentity{TokenFile: writeToken(t, t.TempDir(), jwt)}))
	assert.Equal(t, tokenTypeDPoP, siStored(t, e, "srv").TokenType)
	_, err := e.store.Get(context.Background(), proofKeyKey(storeKey("srv", e.as.MCP())))
	assert.NotErrorIs(t, err, ports.ErrNotFound)
}

// FuzzParseJWT: parseJWT never panics; what it accepts has three
// base64url parts and an algorithm other than none, and checkWorkloadJWT
// never lets through a JWT without an issuer, an audience naming the
// server, or a future expiry.
func FuzzParseJWT(f *testing.F) {
	seg := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	f.Add(seg(`{"alg":"ES256"}`) + "." + seg(`{"iss":"i","aud":"https://as","exp":4102444800}`) + ".c2ln")
	f.Add(seg(`{"alg":"ES256"}`) + "." + seg(`{"iss":"i","aud":["https://as/","x"],"exp":4102444800,"nbf":1}`) + ".c2ln")
	f.Add(seg(`{"alg":"none"}`) + "." + seg(`{}`) + ".")
	f.Add("a.b.c")
	f.Add(strings.Repeat(".", 3))
	f.Fuzz(func(t *testing.T, raw string) {
		c, aud, ok := parseJWT(raw)
		if !ok {
			return
		}
		require.Len(t, strings.Split(raw, "."), 3)
		err := checkWorkloadJWT(raw, "https://as", "https://as/token", "", time.Unix(1_700_000_000, 0), "srv")
		if err != nil {
			return
		}
		require.NotEmpty(t, c.Issuer)
		require.NotNil(t, c.Expiry)
		require.Greater(t, *c.Expiry, float64(1_700_000_000))
		named := false
		for _, a := range aud {
			a = strings.TrimSuffix(a, "/")
			named = named || a == "https://as" || a == "https://as/token"
		}
		require.True(t, named)
	})
}
