// Package oauthtest is the OAuth-guarded MCP server the sign-in tests of
// composition, its profiles and the CLI run against: an authorization
// server (discovery, registration, PKCE authorization code, rotating
// refresh tokens, revocation) and a protected resource on one TLS server
// of httptest. The MCP server behind the guard is the caller's (the
// go-sdk is imported by tests only), so this package links nothing but
// the standard library and mcpward's core and ports.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/ports"
)

// Server is an MCP server behind OAuth and its authorization server on
// one TLS server: the MCP endpoint /mcp accepts only the access tokens
// /token issued. Its fields are read and set under Mu.
type Server struct {
	TS *httptest.Server

	Mu      sync.Mutex
	Tokens  map[string]bool
	Codes   map[string]string // code -> code_challenge
	Revoked int
	Seq     int
	// Refreshes are the live refresh tokens (each is spent by its use);
	// Refreshed counts refresh grants served, Spent those refused.
	Refreshes map[string]bool
	Refreshed int
	Spent     int
	// SignInExpiresIn is the expires_in of tokens from a code (0: 3600;
	// ExpiresAtOnce: 0, a token expired when it arrives); refreshed tokens
	// always get 3600.
	SignInExpiresIn int
	// AuthorizationServers, when not nil, replaces the authorization
	// servers the protected-resource metadata names (this Server's own
	// URL): the server "moved" (SEP-2352).
	AuthorizationServers []string
	// DPoP makes the authorization server advertise DPoP (ES256): a token
	// request with a valid proof gets a token bound to the proof's key
	// (token_type DPoP), which /mcp then takes only with the DPoP scheme
	// and a valid proof of that key for the request (RFC 9449 §4.3, §7.1).
	DPoP bool
	// SkipProofs makes /mcp take a DPoP-bound token (with the DPoP
	// scheme) without verifying its proof, only counting that there is
	// one: for a benchmark measuring the client's cost alone.
	SkipProofs bool
	// RSNonce, when set, is the nonce every proof at /mcp must carry; a
	// request without it is answered 401 use_dpop_nonce with RSNonce in
	// DPoP-Nonce.
	RSNonce string
	// Bound maps each DPoP-bound token (access or refresh) to its key's
	// thumbprint. Proofs counts the proofs /mcp accepted, NonceChallenges
	// the use_dpop_nonce answers it gave, and BoundAsBearer the requests
	// that carried a DPoP-bound token as a Bearer token (a client must
	// never).
	Bound                                  map[string]string
	Proofs, NonceChallenges, BoundAsBearer int
	jtis                                   map[string]bool
	// BeforeRefresh, when set, is called with each refresh request before
	// it is looked at (without Mu held); false drops the request unserved.
	// Set it under Mu.
	BeforeRefresh func(r *http.Request) bool
}

// ExpiresAtOnce is the SignInExpiresIn of a token that has expired when
// it arrives (expires_in 0).
const ExpiresAtOnce = -1

// New starts the Server guarding mcpHandler (the caller's MCP server over
// Streamable HTTP) at /mcp; t's cleanup closes it.
func New(t testing.TB, mcpHandler http.Handler) *Server {
	o := &Server{Tokens: map[string]bool{}, Codes: map[string]string{}, Refreshes: map[string]bool{},
		Bound: map[string]string{}, jtis: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		tok, bearer := strings.CutPrefix(auth, "Bearer ")
		if !bearer {
			tok, _ = strings.CutPrefix(auth, "DPoP ")
		}
		o.Mu.Lock()
		ok := o.Tokens[tok]
		jkt := o.Bound[tok]
		if ok && jkt != "" && bearer {
			o.BoundAsBearer++
			ok = false
		}
		nonce, skip := o.RSNonce, o.SkipProofs
		o.Mu.Unlock()
		if ok && jkt != "" && skip {
			ok = len(r.Header.Values("DPoP")) == 1
			jkt = ""
		}
		if ok && jkt != "" {
			proofJKT, claims, err := verifyProof(r.Header.Values("DPoP"), r.Method, o.TS.URL+"/mcp", tok)
			o.Mu.Lock()
			replay := err == nil && o.jtis[claims.JTI]
			if err == nil {
				o.jtis[claims.JTI] = true
			}
			o.Mu.Unlock()
			switch {
			case err != nil || replay || proofJKT != jkt:
				w.Header().Set("WWW-Authenticate", `DPoP error="invalid_dpop_proof", algs="ES256"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			case nonce != "" && claims.Nonce != nonce:
				o.Mu.Lock()
				o.NonceChallenges++
				o.Mu.Unlock()
				w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", algs="ES256"`)
				w.Header().Set("DPoP-Nonce", nonce)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			o.Mu.Lock()
			o.Proofs++
			o.Mu.Unlock()
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o.TS.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		o.Mu.Lock()
		servers := o.AuthorizationServers
		o.Mu.Unlock()
		if servers == nil {
			servers = []string{o.TS.URL}
		}
		JSON(w, http.StatusOK, map[string]any{"resource": o.TS.URL + "/mcp", "authorization_servers": servers})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		m := map[string]any{
			"issuer": o.TS.URL, "authorization_endpoint": o.TS.URL + "/authorize", "token_endpoint": o.TS.URL + "/token",
			"registration_endpoint": o.TS.URL + "/register", "revocation_endpoint": o.TS.URL + "/revoke",
			"code_challenge_methods_supported": []string{"S256"},
		}
		o.Mu.Lock()
		if o.DPoP {
			m["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		o.Mu.Unlock()
		JSON(w, http.StatusOK, m)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		JSON(w, http.StatusCreated, map[string]any{"client_id": "registered-client"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.Mu.Lock()
		o.Seq++
		code := fmt.Sprintf("code-%d", o.Seq)
		o.Codes[code] = q.Get("code_challenge")
		o.Mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"code": {code}, "state": {q.Get("state")}}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.Mu.Lock()
		hook := o.BeforeRefresh
		o.Mu.Unlock()
		if hook != nil && r.PostForm.Get("grant_type") == "refresh_token" && !hook(r) {
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		o.Mu.Lock()
		defer o.Mu.Unlock()
		jkt := ""
		if o.DPoP && len(r.Header.Values("DPoP")) > 0 {
			var err error
			if jkt, _, err = verifyProof(r.Header.Values("DPoP"), http.MethodPost, o.TS.URL+"/token", ""); err != nil {
				JSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_dpop_proof"})
				return
			}
		}
		if r.PostForm.Get("grant_type") == "refresh_token" {
			rt := r.PostForm.Get("refresh_token")
			if !o.Refreshes[rt] || r.PostForm.Get("resource") != o.TS.URL+"/mcp" || o.Bound[rt] != jkt {
				o.Spent++
				JSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(o.Refreshes, rt) // rotating: a refresh token is good once
			o.Refreshed++
			JSON(w, http.StatusOK, o.issue(3600, jkt))
			return
		}
		if ch, ok := o.Codes[r.PostForm.Get("code")]; !ok || ch != base64.RawURLEncoding.EncodeToString(sum[:]) ||
			r.PostForm.Get("resource") != o.TS.URL+"/mcp" {
			JSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(o.Codes, r.PostForm.Get("code"))
		exp := o.SignInExpiresIn
		switch exp {
		case 0:
			exp = 3600
		case ExpiresAtOnce:
			exp = 0
		}
		JSON(w, http.StatusOK, o.issue(exp, jkt))
	})
	mux.HandleFunc("/revoke", func(w http.ResponseWriter, r *http.Request) {
		o.Mu.Lock()
		o.Revoked++
		o.Mu.Unlock()
	})
	o.TS = httptest.NewTLSServer(mux)
	t.Cleanup(o.TS.Close)
	return o
}

// Issue mints an access token and a refresh token; o.Mu is held.
func (o *Server) Issue(expiresIn int) map[string]any { return o.issue(expiresIn, "") }

// issue is Issue, the tokens bound to the key of thumbprint jkt (DPoP)
// when it is not "".
func (o *Server) issue(expiresIn int, jkt string) map[string]any {
	o.Seq++
	tok := fmt.Sprintf("token-%d", o.Seq)
	o.Tokens[tok] = true
	o.Refreshes["rt-"+tok] = true
	typ := "Bearer"
	if jkt != "" {
		o.Bound[tok], o.Bound["rt-"+tok] = jkt, jkt
		typ = "DPoP"
	}
	return map[string]any{"access_token": tok, "token_type": typ, "expires_in": expiresIn, "refresh_token": "rt-" + tok}
}

// JSON writes v as a JSON response with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// callbackClient is the browser's request to the loopback callback: no
// proxy from the environment and no redirect followed (the callback
// answers; it never sends the browser on).
var callbackClient = &http.Client{
	Transport:     &http.Transport{Proxy: nil},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       30 * time.Second,
}

// Browser returns an open func that plays the user's browser: it follows
// the authorization server's redirect to the loopback callback.
func Browser(ts *httptest.Server) func(string) error {
	return func(authURL string) error {
		go func() {
			c := ts.Client()
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			resp, err := c.Get(authURL)
			if err != nil {
				return
			}
			resp.Body.Close()
			cb, err := callbackClient.Get(resp.Header.Get("Location"))
			if err == nil {
				cb.Body.Close()
			}
		}()
		return nil
	}
}

// Sources is the user-tier source of the guarded server "guarded" at base
// (the Server's URL), asking for oauth.
func Sources(base string) []definition.Source {
	return []definition.Source{{Tier: ports.TierUser, Origin: "/home/u/.claude.json",
		Data: []byte(`{"mcpServers": {"guarded": {"type": "http", "url": "` + base + `/mcp", "oauth": {}}}}`)}}
}

// Egress is the egress policy of the tests: the default, with loopback
// admitted over https too.
func Egress(t testing.TB) ports.EgressPolicy {
	p, err := egress.New(&egress.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Fatalf("egress policy: %v", err)
	}
	return p
}

// CertPool returns a pool trusting the certificate in the PEM file
// certFile (a child process's view of the Server's certificate).
func CertPool(t testing.TB, certFile string) *x509.CertPool {
	b, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatalf("certificate: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatal("certificate: no PEM certificate")
	}
	return pool
}

// WriteCert writes the Server's certificate as PEM to path.
func (o *Server) WriteCert(t testing.TB, path string) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.TS.Certificate().Raw}), 0o600); err != nil {
		t.Fatalf("certificate: %v", err)
	}
}

// proofClaims are the claims of a DPoP proof the Server reads.
type proofClaims struct {
	JTI   string  `json:"jti"`
	HTM   string  `json:"htm"`
	HTU   string  `json:"htu"`
	IAT   float64 `json:"iat"`
	ATH   string  `json:"ath"`
	Nonce string  `json:"nonce"`
}

// verifyProof checks the one DPoP proof of headers as a server does (RFC
// 9449 §4.3): a compact JWS with typ dpop+jwt, alg ES256 and a P-256 public
// JWK in its header that verifies its signature; htm, htu (without query)
// and iat within a minute; ath the hash of accessToken when that is not
// "", none otherwise. It returns the key's RFC 7638 thumbprint and the
// claims.
func verifyProof(headers []string, htm, htu, accessToken string) (string, proofClaims, error) {
	fail := func(why string) (string, proofClaims, error) { return "", proofClaims{}, errors.New(why) }
	if len(headers) != 1 {
		return fail("not one proof")
	}
	parts := strings.Split(headers[0], ".")
	if len(parts) != 3 {
		return fail("not a compact JWS")
	}
	raw := make([][]byte, 3)
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			return fail("not base64url")
		}
		raw[i] = b
	}
	var hdr struct {
		Typ, Alg string
		JWK      struct{ Kty, Crv, X, Y, D string }
	}
	if json.Unmarshal(raw[0], &hdr) != nil || hdr.Typ != "dpop+jwt" || hdr.Alg != "ES256" ||
		hdr.JWK.Kty != "EC" || hdr.JWK.Crv != "P-256" || hdr.JWK.D != "" {
		return fail("bad header")
	}
	x, errX := base64.RawURLEncoding.DecodeString(hdr.JWK.X)
	y, errY := base64.RawURLEncoding.DecodeString(hdr.JWK.Y)
	if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
		return fail("bad key")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil || len(raw[2]) != 64 {
		return fail("bad key or signature")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(raw[2][:32]), new(big.Int).SetBytes(raw[2][32:])) {
		return fail("signature")
	}
	var c proofClaims
	if json.Unmarshal(raw[1], &c) != nil || len(c.JTI) < 16 || c.HTM != htm || c.HTU != htu ||
		math.Abs(float64(time.Now().Unix())-c.IAT) > 60 {
		return fail("bad claims")
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		if c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return fail("ath")
		}
	} else if c.ATH != "" {
		return fail("ath at the token endpoint")
	}
	thumb := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + hdr.JWK.X + `","y":"` + hdr.JWK.Y + `"}`))
	return base64.RawURLEncoding.EncodeToString(thumb[:]), c, nil
}
