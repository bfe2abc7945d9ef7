package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewSecretsNeverReported: the secrets of this flows — a DPoP
// proof key, a proof, a workload's JWT (an assertion), the IdP's ID token
// and the ID-JAG it is exchanged for — appear in no error and no Report,
// whatever fails after they exist.
func TestNewSecretsNeverReported(t *testing.T) {
	e := dpopEnv(t)
	s := e.as.server("srv")
	dpopSignIn(t, e, s)
	rec := siStored(t, e, "srv")
	b, err := e.store.Get(context.Background(), proofKeyKey(storeKey("srv", e.as.MCP())))
	require.NoError(t, err)
	var stored storedProofKey
	require.NoError(t, json.Unmarshal(b, &stored))
	a, req := tokAuth(t, e.c, s)
	h, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	secrets := []string{stored.D, h.Get("DPoP"), rec.AccessToken, rec.RefreshToken}

	var errs []error
	collect := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// The proof key: a nonce refused, a refresh downgraded, a key gone.
	r := tokRefusal(a, http.StatusUnauthorized, `DPoP error="use_dpop_nonce"`)
	r.DPoPNonce = "bad nonce"
	_, err = a.Refused(context.Background(), r)
	collect(err)
	e.as.set(func(f *fakeAS) { f.downgrade = true })
	_, err = e.c.refresh(context.Background(), rec)
	collect(err)
	e.as.set(func(f *fakeAS) { f.downgrade = false })
	require.NoError(t, e.store.Delete(context.Background(), proofKeyKey(storeKey("srv", e.as.MCP()))))
	_, err = a.Headers(context.Background(), req)
	collect(err)
	rep, _ := e.c.Discover(context.Background(), s)

	// A workload's JWT refused by the server, and one refused before.
	jwt := e.as.workloadJWTFor(t, "https://idp.example", []string{e.as.URL()}, time.Hour)
	secrets = append(secrets, jwt)
	e.as.set(func(f *fakeAS) { f.workloadKey = mustKey(t) })
	collect(e.c.SignInWorkloadIdentity(context.Background(), s, WorkloadIdentity{TokenFile: writeToken(t, t.TempDir(), jwt)}))
	collect(e.c.SignInWorkloadIdentity(context.Background(), s, WorkloadIdentity{TokenFile: writeToken(t, t.TempDir(), jwt), Issuer: "https://other"}))

	// The ID token, and the ID-JAG the IdP gives for it, refused at the
	// MCP server's authorization server.
	x := xaa(e)
	secrets = append(secrets, x.SubjectToken)
	var jag string
	e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		jag = r.PostForm.Get("assertion")
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": r.PostForm.Get("assertion")})
	})
	collect(e.c.SignInEnterpriseManaged(context.Background(), s, x))
	require.NotEmpty(t, jag, "the exchange happened")
	secrets = append(secrets, jag)

	require.GreaterOrEqual(t, len(errs), 5)
	repJSON, err := json.Marshal(rep)
	require.NoError(t, err)
	for _, sec := range secrets {
		require.NotEmpty(t, sec)
		for _, err := range errs {
			assert.NotContains(t, err.Error(), sec)
			assert.NotContains(t, err.Error(), base64.RawURLEncoding.EncodeToString([]byte(sec)))
		}
		assert.NotContains(t, string(repJSON), sec)
	}
	for _, err := range errs {
		requireNoCanary(t, err)
	}
}
