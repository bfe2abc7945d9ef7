package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"
)

// fakeClients is the part of fakeAS about client authentication, the
// headless grants and an enterprise IdP (at /idp/token, issuer
// URL()+"/idp"). Its fields are guarded by the fakeAS's mu.
type fakeClients struct {
	// authMethods, signingAlgs and cimd are advertised in the server
	// metadata when non-nil / true.
	authMethods []string
	signingAlgs []string
	cimd        bool
	// regMethod, when set, is the token_endpoint_auth_method a
	// registration answers with, with a fresh client secret.
	regMethod     string
	lastRegMethod string
	// secrets are the confidential clients' secrets, keys their public
	// keys (private_key_jwt); a client in neither is public.
	secrets map[string]string
	keys    map[string]crypto.PublicKey
	// clock is the time assertions are checked at.
	clock func() time.Time
	// lastMethod is how the last token request's client authenticated.
	lastMethod string
	// lastAssertion is the last client assertion (its claims checked).
	lastAssertion *jwt.Claims
	// idpKey signs the ID-JAGs the IdP issues; subjectToken is the only
	// subject token it takes; xaaClient is the client id an ID-JAG names.
	idpKey       *ecdsa.PrivateKey
	subjectToken string
	xaaClient    string
	lastExchange url.Values
}

func newFakeClients(t testing.TB) fakeClients {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return fakeClients{
		secrets: map[string]string{}, keys: map[string]crypto.PublicKey{}, clock: time.Now,
		idpKey: k, subjectToken: "idt-" + canary, xaaClient: "xaa-client",
	}
}

// clientMeta adds the client authentication metadata to m.
func (f *fakeAS) clientMeta(m map[string]any) {
	if f.authMethods != nil {
		m["token_endpoint_auth_methods_supported"] = f.authMethods
	}
	if f.signingAlgs != nil {
		m["token_endpoint_auth_signing_alg_values_supported"] = f.signingAlgs
	}
	if f.cimd {
		m["client_id_metadata_document_supported"] = true
	}
}

// authenticate authenticates the client of a token request the ways RFC
// 6749 §2.3.1 and RFC 7523 §2.2 say, and returns its id. A confidential
// client must prove itself; a request that does not is answered 401
// invalid_client and ok is false.
func (f *fakeAS) authenticate(w http.ResponseWriter, r *http.Request) (clientID string, ok bool) {
	form := r.PostForm
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := func() (string, bool) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client", "error_description": "no " + canary})
		return "", false
	}
	method := AuthNone
	clientID = form.Get("client_id")
	switch {
	case r.Header.Get("Authorization") != "":
		user, pass, okb := r.BasicAuth()
		if !okb || form.Has("client_secret") {
			return fail()
		}
		id, err1 := url.QueryUnescape(user)
		secret, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil || f.secrets[id] == "" || f.secrets[id] != secret {
			return fail()
		}
		method, clientID = AuthClientSecretBasic, id
	case form.Has("client_assertion"):
		if form.Get("client_assertion_type") != assertionTypeJWTBearer {
			return fail()
		}
		tok, err := jwt.ParseSigned(form.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.RS256, jose.PS256, jose.EdDSA})
		if err != nil {
			return fail()
		}
		var unverified jwt.Claims
		if tok.UnsafeClaimsWithoutVerification(&unverified) != nil || f.keys[unverified.Subject] == nil {
			return fail()
		}
		var c jwt.Claims
		if tok.Claims(f.keys[unverified.Subject], &c) != nil {
			return fail()
		}
		if c.ValidateWithLeeway(jwt.Expected{Issuer: unverified.Subject, Subject: unverified.Subject,
			AnyAudience: jwt.Audience{f.ts.URL}, Time: f.clock()}, 0) != nil || c.ID == "" || c.Expiry == nil {
			return fail()
		}
		if clientID != "" && clientID != c.Subject {
			return fail()
		}
		method, clientID, f.lastAssertion = AuthPrivateKeyJWT, c.Subject, &c
	case form.Has("client_secret"):
		if f.secrets[clientID] == "" || f.secrets[clientID] != form.Get("client_secret") {
			return fail()
		}
		method = AuthClientSecretPost
	default:
		if f.secrets[clientID] != "" || f.keys[clientID] != nil {
			return fail()
		}
	}
	if f.authMethods != nil && !slices.Contains(f.authMethods, method) {
		return fail()
	}
	f.lastMethod = method
	return clientID, true
}

// issueHeadless answers a headless grant with an access token, and a
// refresh token when refresh, bound to the DPoP key of thumbprint jkt when
// not "".
func (f *fakeAS) issueHeadless(w http.ResponseWriter, refresh bool, jkt string) {
	f.mu.Lock()
	f.seq++
	access := fmt.Sprintf("cc-%s-%d", canary, f.seq)
	f.access[access] = true
	f.bound[access] = jkt
	body := map[string]any{"access_token": access, "token_type": f.tokenType(jkt), "expires_in": f.expiresIn}
	if refresh {
		rt := fmt.Sprintf("rt-%s-%d", canary, f.seq)
		f.refreshes[rt] = true
		body["refresh_token"] = rt
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

// jwtBearer serves the RFC 7523 grant of an ID-JAG: signed by the IdP,
// typ oauth-id-jag+jwt, aud this issuer, resource the MCP endpoint and
// client_id the authenticated client.
func (f *fakeAS) jwtBearer(w http.ResponseWriter, form url.Values, clientID, jkt string) {
	bad := func() {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": canary})
	}
	tok, err := jwt.ParseSigned(form.Get("assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(tok.Headers) != 1 || tok.Headers[0].ExtraHeaders["typ"] != "oauth-id-jag+jwt" {
		bad()
		return
	}
	var c jwt.Claims
	var extra struct {
		ClientID string `json:"client_id"`
		Resource string `json:"resource"`
	}
	f.mu.Lock()
	key, now := &f.idpKey.PublicKey, f.clock()
	f.mu.Unlock()
	if tok.Claims(key, &c, &extra) != nil ||
		c.ValidateWithLeeway(jwt.Expected{Issuer: f.URL() + "/idp", AnyAudience: jwt.Audience{f.URL()}, Time: now}, 0) != nil ||
		extra.ClientID != clientID || extra.Resource != f.MCP() {
		bad()
		return
	}
	f.issueHeadless(w, false, jkt)
}

// idpToken is the IdP's token endpoint: the RFC 8693 exchange of its
// subject token for an ID-JAG.
func (f *fakeAS) idpToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	form := r.PostForm
	f.mu.Lock()
	f.lastExchange = form
	want, key, xaa, now := f.subjectToken, f.idpKey, f.xaaClient, f.clock()
	f.mu.Unlock()
	if form.Get("grant_type") != grantTokenExchange || form.Get("subject_token") != want ||
		form.Get("subject_token_type") != TokenTypeIDToken || form.Get("requested_token_type") != TokenTypeIDJAG ||
		form.Get("audience") != f.URL() || form.Get("resource") != f.MCP() {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request", "error_description": canary})
		return
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("oauth-id-jag+jwt"))
	if err != nil {
		http.Error(w, "signer", http.StatusInternalServerError)
		return
	}
	jag, err := jwt.Signed(sig).Claims(jwt.Claims{
		Issuer: f.URL() + "/idp", Subject: "user-" + canary, Audience: jwt.Audience{form.Get("audience")},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute)), ID: "jti-" + canary,
	}).Claims(map[string]any{"client_id": xaa, "resource": form.Get("resource")}).Serialize()
	if err != nil {
		http.Error(w, "sign", http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": TokenTypeIDJAG, "token_type": "N_A"})
}

// testKeyPEM returns a fresh P-256 key as PKCS #8 PEM, and its public key.
func testKeyPEM(t testing.TB) ([]byte, crypto.PublicKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), &k.PublicKey
}
