package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Reasons of DPoP (RFC 9449, MCP SEP-1932).
const (
	// ReasonDPoPDowngrade (Refused): the authorization server advertises
	// DPoP and was sent a proof, but answered with a token of another type
	// (Bearer): a token that was meant to be bound to a key and is not
	// would be usable by anyone who steals it. Nothing is stored; a
	// refresh that is downgraded keeps the credential.
	ReasonDPoPDowngrade = "dpop_downgrade"
	// ReasonDPoPNonceRefused (AuthRefused): the authorization server or
	// the MCP server asked for a DPoP nonce (use_dpop_nonce) again after
	// the one retry with the nonce it supplied, or supplied none the client
	// can use.
	ReasonDPoPNonceRefused = "dpop_nonce_refused"
	// ReasonDPoPProofRefused (AuthRefused): the authorization server
	// refused the DPoP proof (invalid_dpop_proof).
	ReasonDPoPProofRefused = "dpop_proof_refused"
	// ReasonProofKeyMissing (AuthRequired): the stored credential is bound
	// to a DPoP proof key the token store no longer holds (or holds
	// another one): the tokens cannot be used without it, so the user must
	// sign in again.
	ReasonProofKeyMissing = "dpop_key_missing"
)

// Token types of a token endpoint's answer (RFC 6750, RFC 9449 §5).
const (
	tokenTypeBearer = "Bearer"
	tokenTypeDPoP   = "DPoP"
)

// dpopAlg is the only JWS algorithm of the proofs this package signs.
const dpopAlg = "ES256"

// Bounds of DPoP values read from a server.
const (
	// maxNonce bounds a DPoP-Nonce value; a longer one is not used.
	maxNonce = 512
	// maxNonces bounds how many authorization servers' nonces a Client
	// keeps; when full, one is forgotten.
	maxNonces = 256
)

// proofKey is one server's DPoP proof key (ECDSA P-256, RFC 9449 §4.1),
// with what every proof repeats precomputed: the base64url protected
// header (typ dpop+jwt, alg ES256, the public JWK) and the key's RFC 7638
// thumbprint. It is never printed, logged or exported; only its stored
// form leaves memory, into the token store.
type proofKey struct {
	priv   *ecdsa.PrivateKey
	header string // base64url of the protected header, with the trailing "."
	jkt    string // base64url SHA-256 JWK thumbprint
}

// storedProofKey is the token store layout of a proof key: the private
// scalar, from which the public key is derived again.
type storedProofKey struct {
	Version int    `json:"v"`
	Curve   string `json:"crv"`
	D       string `json:"d"`
}

// newProofKey returns a fresh P-256 proof key from crypto/rand.
func newProofKey() (*proofKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.New("cannot generate a proof key")
	}
	return newProofKeyFrom(priv)
}

// newProofKeyFrom precomputes the header and thumbprint of priv, which must
// be a P-256 key.
func newProofKeyFrom(priv *ecdsa.PrivateKey) (*proofKey, error) {
	pub, err := priv.PublicKey.Bytes() // 0x04 || X || Y, 32 bytes each
	if err != nil || len(pub) != 65 {
		return nil, errors.New("not a P-256 key")
	}
	x := base64.RawURLEncoding.EncodeToString(pub[1:33])
	y := base64.RawURLEncoding.EncodeToString(pub[33:])
	// RFC 7638 §3.2: the required members in lexicographic order, no
	// white space.
	thumb := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	hdr := `{"typ":"dpop+jwt","alg":"` + dpopAlg + `","jwk":{"kty":"EC","crv":"P-256","x":"` + x + `","y":"` + y + `"}}`
	return &proofKey{
		priv:   priv,
		header: base64.RawURLEncoding.EncodeToString([]byte(hdr)) + ".",
		jkt:    base64.RawURLEncoding.EncodeToString(thumb[:]),
	}, nil
}

// marshal returns the stored form of k.
func (k *proofKey) marshal() ([]byte, error) {
	d, err := k.priv.Bytes()
	if err != nil {
		return nil, errors.New("cannot encode the proof key")
	}
	return json.Marshal(storedProofKey{Version: 1, Curve: "P-256", D: base64.RawURLEncoding.EncodeToString(d)})
}

// parseProofKey reads the stored form of a proof key. Errors carry nothing
// of b. It never panics.
func parseProofKey(b []byte) (*proofKey, error) {
	var s storedProofKey
	if json.Unmarshal(b, &s) != nil || s.Version != 1 || s.Curve != "P-256" {
		return nil, errors.New("not a stored proof key")
	}
	d, err := base64.RawURLEncoding.DecodeString(s.D)
	if err != nil {
		return nil, errors.New("not a stored proof key")
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, errors.New("not a stored proof key")
	}
	return newProofKeyFrom(priv)
}

// proof returns a DPoP proof (RFC 9449 §4.2) for one request: a JWS
// signed with k, typ dpop+jwt, alg ES256, the public JWK in its header,
// and the claims jti (128 random bits), htm, htu, iat (now), nonce when not
// "" and ath when not "" (the base64url SHA-256 of the access token it
// accompanies, see athOf). htu must already be the target URI without
// query or fragment, and nonce a value validNonce accepts: neither is
// escaped. Errors carry nothing of the key. Safe for concurrent use.
func (k *proofKey) proof(htm, htu string, now time.Time, nonce, ath string) (string, error) {
	var jti [16]byte
	_, _ = rand.Read(jti[:]) // documented never to return an error
	payload := make([]byte, 0, 96+len(htu)+len(nonce)+len(ath))
	payload = append(payload, `{"jti":"`...)
	payload = base64.RawURLEncoding.AppendEncode(payload, jti[:])
	payload = append(payload, `","htm":`...)
	payload = strconv.AppendQuote(payload, htm)
	payload = append(payload, `,"htu":`...)
	payload = appendJSONString(payload, htu)
	payload = append(payload, `,"iat":`...)
	payload = strconv.AppendInt(payload, now.Unix(), 10)
	if nonce != "" {
		payload = append(payload, `,"nonce":"`...)
		payload = append(payload, nonce...)
		payload = append(payload, '"')
	}
	if ath != "" {
		payload = append(payload, `,"ath":"`...)
		payload = append(payload, ath...)
		payload = append(payload, '"')
	}
	payload = append(payload, '}')

	n := len(k.header) + base64.RawURLEncoding.EncodedLen(len(payload))
	out := make([]byte, 0, n+1+86)
	out = append(out, k.header...)
	out = base64.RawURLEncoding.AppendEncode(out, payload)
	digest := sha256.Sum256(out)
	r, s, err := ecdsa.Sign(rand.Reader, k.priv, digest[:])
	if err != nil {
		return "", errors.New("cannot sign a proof")
	}
	var sig [64]byte // JWS ES256: R || S, 32 bytes each (RFC 7518 §3.4)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	out = append(out, '.')
	out = base64.RawURLEncoding.AppendEncode(out, sig[:])
	return string(out), nil
}

// appendJSONString appends s as a JSON string. s is a URL this package
// built (printable ASCII); anything else is escaped all the same.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// athOf returns the ath claim of a proof sent with accessToken: its
// base64url SHA-256 (RFC 9449 §4.2).
func athOf(accessToken string) string {
	sum := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// validNonce reports whether v can be a DPoP nonce (RFC 9449 §8.1:
// 1*NQCHAR, that is printable ASCII without '"' or '\'), at most maxNonce
// bytes. A value that is not one is never put into a proof.
func validNonce(v string) bool {
	if v == "" || len(v) > maxNonce {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// htuOf returns the htu of a request to raw (an absolute URL): its scheme
// and host lower case, its escaped path, without query or fragment (RFC
// 9449 §4.2). ok is false when raw is not an absolute URL with a host.
func htuOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "", false
	}
	return htuOfURL(u), true
}

// htuOfURL is htuOf of a parsed absolute URL.
func htuOfURL(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.EscapedPath()
}

// nonceCache keeps the latest DPoP nonce of each authorization server
// origin (RFC 9449 §8); it is bounded by maxNonces and safe for concurrent
// use. A nonce is never stored beyond the process.
type nonceCache struct {
	mu sync.Mutex
	m  map[string]string
}

// get returns the nonce of origin, "" when there is none.
func (n *nonceCache) get(origin string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[origin]
}

// set keeps v as the nonce of origin when validNonce accepts it, and
// reports whether it did and v differs from the nonce kept before.
func (n *nonceCache) set(origin, v string) (changed bool) {
	if !validNonce(v) {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]string{}
	}
	old, ok := n.m[origin]
	if !ok && len(n.m) >= maxNonces {
		for k := range n.m {
			delete(n.m, k)
			break
		}
	}
	n.m[origin] = v
	return old != v
}

// proofKeyKey is the TokenStore key of the DPoP proof key of the credential
// key key (storeKey): beside it, never it.
func proofKeyKey(key string) string { return key + ".dpop" }

// useDPoP reports whether a sign-in to s with the authorization server of
// ep binds its tokens to a proof key: the server advertises ES256 in
// dpop_signing_alg_values_supported and s does not turn DPoP off.
func useDPoP(s Server, ep *endpoints) bool {
	return ep.dpop && !s.DisableDPoP
}

// loadProofKey reads the proof key stored for the credential rec and
// checks that it is the one rec is bound to. It returns Class AuthRequired
// ReasonProofKeyMissing when none is stored or another one is; Transient
// ReasonStoreUnavailable (or the ctx refusal) when the store fails. The
// parsed key is cached by thumbprint, so a credential read again does not
// parse it again.
func (c *Client) loadProofKey(ctx context.Context, rec *record) (*proofKey, error) {
	if k := c.keys.get(rec.DPoPJKT); k != nil {
		return k, nil
	}
	b, err := c.store.Get(ctx, proofKeyKey(storeKey(rec.Server, rec.Resource)))
	switch {
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, ports.ErrCorrupt):
		return nil, refusal.New(refusal.AuthRequired, ReasonProofKeyMissing, rec.Server)
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctxRefusal(ctx.Err(), rec.Server, "")
		}
		return nil, refusal.New(refusal.Transient, ReasonStoreUnavailable, rec.Server)
	}
	k, err := parseProofKey(b)
	if err != nil || k.jkt != rec.DPoPJKT {
		return nil, refusal.New(refusal.AuthRequired, ReasonProofKeyMissing, rec.Server)
	}
	c.keys.put(k)
	return k, nil
}

// saveProofKey stores k as the proof key of the credential of server at
// resource. Errors as save's.
func (c *Client) saveProofKey(ctx context.Context, server, resource string, k *proofKey) error {
	b, err := k.marshal()
	if err != nil {
		return refusal.New(refusal.Internal, "encode_failed", server)
	}
	key := proofKeyKey(storeKey(server, resource))
	err = c.store.Set(ctx, key, b)
	if errors.Is(err, ports.ErrCorrupt) {
		if err = c.store.Delete(ctx, key); err == nil {
			err = c.store.Set(ctx, key, b)
		}
	}
	if err != nil {
		return c.storeError(ctx, err, server)
	}
	c.keys.put(k)
	return nil
}

// keyCache keeps parsed proof keys by thumbprint (parsing one derives its
// public key, tens of microseconds), bounded by maxNonces. Safe for
// concurrent use.
type keyCache struct {
	mu sync.Mutex
	m  map[string]*proofKey
}

func (kc *keyCache) get(jkt string) *proofKey {
	if jkt == "" {
		return nil
	}
	kc.mu.Lock()
	defer kc.mu.Unlock()
	return kc.m[jkt]
}

func (kc *keyCache) put(k *proofKey) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.m == nil {
		kc.m = map[string]*proofKey{}
	}
	if _, ok := kc.m[k.jkt]; !ok && len(kc.m) >= maxNonces {
		for j := range kc.m {
			delete(kc.m, j)
			break
		}
	}
	kc.m[k.jkt] = k
}

func (kc *keyCache) drop(jkt string) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	delete(kc.m, jkt)
}
