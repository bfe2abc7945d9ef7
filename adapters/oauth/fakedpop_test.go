package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"
)

// fakeDPoP is the part of fakeAS about DPoP (RFC 9449) at its token
// endpoint, and the workload identity (JWT-bearer) grant. Its fields are
// guarded by the fakeAS's mu.
type fakeDPoP struct {
	// dpopAlgs, when not nil, is advertised as
	// dpop_signing_alg_values_supported; a token request with a valid
	// proof then gets tokens of type DPoP bound to the proof's key.
	dpopAlgs []string
	// asNonce, when set, is the nonce every proof must carry; a proof
	// without it is answered 400 use_dpop_nonce with asNonce in DPoP-Nonce.
	// nonceEvery answers every proof that way, with a new nonce each time.
	asNonce    string
	nonceEvery bool
	// downgrade answers a valid proof with a Bearer token.
	downgrade bool
	// bound maps every issued token to the thumbprint of the key it is
	// bound to ("" for Bearer).
	bound map[string]string
	// proofs are the claims of the valid proofs the token endpoint got, in
	// order; proofErrs the reasons of those it refused.
	proofs    []map[string]any
	proofErrs []string
	jtis      map[string]bool
	// workloadKey signs the workload JWTs the tests hand out; a JWT-bearer
	// grant whose assertion it verifies (aud this issuer) is a workload's.
	workloadKey *ecdsa.PrivateKey
	workloads   int // workload grants answered with tokens
}

func newFakeDPoP() fakeDPoP {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return fakeDPoP{bound: map[string]string{}, jtis: map[string]bool{}, workloadKey: k}
}

// tokenType is the token_type of tokens bound to jkt.
func (f *fakeAS) tokenType(jkt string) string {
	if jkt == "" || f.downgrade {
		return "Bearer"
	}
	return "DPoP"
}

// tokenProof checks the DPoP proof of a token request, when DPoP is
// advertised and one was sent, and returns its key's thumbprint ("" when
// none was sent). A bad proof is answered 400 invalid_dpop_proof, a proof
// without the required nonce 400 use_dpop_nonce; ok is false then.
func (f *fakeAS) tokenProof(w http.ResponseWriter, r *http.Request) (jkt string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	proofs := r.Header.Values("DPoP")
	if f.dpopAlgs == nil || len(proofs) == 0 {
		return "", true
	}
	fail := func(code, why string) (string, bool) {
		f.proofErrs = append(f.proofErrs, why)
		if code == "use_dpop_nonce" {
			w.Header().Set("DPoP-Nonce", f.asNonce)
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": code, "error_description": why + " " + canary})
		return "", false
	}
	if len(proofs) != 1 {
		return fail("invalid_dpop_proof", "more than one proof")
	}
	jkt, claims, err := verifyProof(proofs[0], http.MethodPost, f.URL()+"/token", f.clock(), "")
	if err != nil {
		return fail("invalid_dpop_proof", err.Error())
	}
	if f.jtis[claims["jti"].(string)] {
		return fail("invalid_dpop_proof", "jti replayed")
	}
	f.jtis[claims["jti"].(string)] = true
	if f.nonceEvery {
		f.seq++
		f.asNonce = fmt.Sprintf("nonce-%d", f.seq)
	}
	if f.asNonce != "" && claims["nonce"] != f.asNonce {
		return fail("use_dpop_nonce", "nonce")
	}
	f.proofs = append(f.proofs, claims)
	return jkt, true
}

// verifyProof checks a DPoP proof as a server does (RFC 9449 §4.3): one
// compact JWS with typ dpop+jwt, alg ES256, a public JWK in its header and
// a signature that key verifies; claims jti, htm, htu (no query or
// fragment, equal to htu), iat within a minute of now, and, when
// accessToken is not "", ath its hash. It returns the key's thumbprint and
// the claims.
func verifyProof(proof, htm, htu string, now time.Time, accessToken string) (string, map[string]any, error) {
	sig, err := jose.ParseSigned(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(sig.Signatures) != 1 {
		return "", nil, errors.New("not a JWS")
	}
	h := sig.Signatures[0].Protected
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.Algorithm != "ES256" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return "", nil, errors.New("bad header")
	}
	payload, err := sig.Verify(h.JSONWebKey.Key)
	if err != nil {
		return "", nil, errors.New("bad signature")
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", nil, errors.New("bad claims")
	}
	jti, _ := claims["jti"].(string)
	gotHTU, _ := claims["htu"].(string)
	iat, _ := claims["iat"].(float64)
	switch {
	case len(jti) < 16:
		return "", nil, errors.New("no jti")
	case claims["htm"] != htm:
		return "", nil, errors.New("htm")
	case gotHTU != htu || strings.ContainsAny(gotHTU, "?#"):
		return "", nil, fmt.Errorf("htu %q, want %q", gotHTU, htu)
	case math.Abs(float64(now.Unix())-iat) > 60:
		return "", nil, errors.New("iat")
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		if claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", nil, errors.New("ath")
		}
	} else if _, has := claims["ath"]; has {
		return "", nil, errors.New("ath at the token endpoint")
	}
	thumb, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", nil, errors.New("thumbprint")
	}
	return base64.RawURLEncoding.EncodeToString(thumb), claims, nil
}

// workloadJWTFor returns a workload JWT signed by the fake's workload key,
// with iss, aud and an expiry exp from now.
func (f *fakeAS) workloadJWTFor(t testing.TB, iss string, aud []string, exp time.Duration) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: f.workloadKey}, (&jose.SignerOptions{}).WithType("JWT"))
	require.NoError(t, err)
	f.mu.Lock()
	now := f.clock()
	f.mu.Unlock()
	raw, err := jwt.Signed(sig).Claims(jwt.Claims{
		Issuer: iss, Subject: "workload-" + canary, Audience: aud,
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(exp)), ID: "wl-" + canary,
	}).Serialize()
	require.NoError(t, err)
	return raw
}

// workloadGrant answers a JWT-bearer grant whose assertion the workload key
// signed (reporting true), as an authorization server trusting the
// workload's platform does: aud this issuer, not expired. It reports false,
// answering nothing, for any other assertion (an ID-JAG).
func (f *fakeAS) workloadGrant(w http.ResponseWriter, form url.Values, jkt string) bool {
	tok, err := jwt.ParseSigned(form.Get("assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return false
	}
	var c jwt.Claims
	f.mu.Lock()
	key, now := &f.workloadKey.PublicKey, f.clock()
	f.mu.Unlock()
	if tok.Claims(key, &c) != nil {
		return false
	}
	if c.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{f.URL(), f.URL() + "/token"}, Time: now}, 0) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": canary})
		return true
	}
	f.mu.Lock()
	f.workloads++
	f.mu.Unlock()
	f.issueHeadless(w, false, jkt)
	return true
}
