package oauth

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons of token endpoint refusals taken from the OAuth error code of the
// answer (RFC 6749 §5.2). The code only selects one of these fixed words;
// its description, URI and the rest of the body are never read.
const (
	// ReasonClientAuthRefused (AuthRefused): the token endpoint refused the
	// client's authentication (invalid_client): a wrong or expired client
	// secret, key or assertion.
	ReasonClientAuthRefused = "client_auth_refused"
	// ReasonClientUnauthorized (AuthRefused): the client may not use this
	// grant (unauthorized_client).
	ReasonClientUnauthorized = "client_unauthorized"
	// ReasonGrantUnsupported (Unsupported): the authorization server does
	// not support the grant (unsupported_grant_type).
	ReasonGrantUnsupported = "grant_type_unsupported"
	// ReasonScopeRefused (AuthRefused): the requested scope was refused
	// (invalid_scope).
	ReasonScopeRefused = "scope_refused"
	// ReasonResourceRefused (Refused): the authorization server refused the
	// RFC 8707 resource (invalid_target).
	ReasonResourceRefused = "resource_refused"
)

// Token endpoint client authentication methods (RFC 8414
// token_endpoint_auth_methods_supported, RFC 7591 token_endpoint_auth_method).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// Grant types and token types this package sends.
const (
	grantAuthorizationCode = "authorization_code"
	grantRefreshToken      = "refresh_token"
	grantClientCredentials = "client_credentials"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"     // RFC 7523 §2.1
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange" // RFC 8693 §2.1
	assertionTypeJWTBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// clientAuth is how a client authenticates at a token endpoint: its id, its
// method, and the secret or key the method needs. It is never printed.
type clientAuth struct {
	method string // one of the Auth* methods
	id     string
	secret string      // client_secret_basic, client_secret_post
	key    *signingKey // private_key_jwt
}

// tokenRequest sends one grant (params, which must hold grant_type) to the
// token endpoint ep through golang.org/x/oauth2, authenticating as auth
// (a private_key_jwt assertion is for the issuer aud), and returns the
// answer's tokens, or the OAuth error code of a refusal (only of a 400 or
// 401, or a 2xx carrying one; "" otherwise).
//
// With key, every attempt carries a fresh DPoP proof of key (RFC 9449 §5:
// htm POST, htu the endpoint without query, the authorization server's
// latest nonce when it gave one). An answer's DPoP-Nonce is kept for the
// endpoint's origin, and a refusal with use_dpop_nonce that brings a new
// nonce is retried once with it (§8), with a fresh proof and assertion.
//
// x/oauth2 does the request: its client_credentials token source sends any
// grant, since its EndpointParams may set grant_type. Its auth style is
// always set explicitly (its auto-detection would send the secret a second
// way after a refusal); the http.Client it gets through the context is the
// origin's, with every redirect refused. Its errors, which embed URLs and
// bodies, never leave this function: each becomes a refusal naming server
// and ep's origin only.
//
// Every attempt is bounded by Options.RequestTimeout, and its answer's
// body by Options.MaxResponseBytes.
//
// Errors: Config ReasonURLInvalid when ep is not https; Config
// ReasonClientKeyInvalid when the private_key_jwt assertion cannot be
// signed; the ClientFunc's refusal or Transient ReasonUnavailable;
// Transient "canceled"/"deadline_exceeded"; Refused ReasonRedirectRefused
// for any 3xx; Transient ReasonUnavailable for a network failure, 429 or
// 5xx; AuthRefused ReasonDPoPNonceRefused for use_dpop_nonce after the
// retry (or without a usable nonce); for another error answer (any other
// status, or an error code in a 2xx) the refusal of tokenErrorReason;
// Protocol ReasonTokenResponseInvalid for an answer x/oauth2 cannot read
// (or over the bound) or without an access token. Safe for concurrent use.
func (c *Client) tokenRequest(ctx context.Context, server string, ep *url.URL, auth clientAuth, aud string, params url.Values, key *proofKey) (tok *oauth2.Token, code string, err error) {
	_, origin, err := c.urls.canonical(ep.String(), server)
	if err != nil {
		return nil, "", err
	}
	hc, err := c.client(ctx, ep)
	if err != nil || hc == nil {
		if re := refusalOf(err); re != nil {
			return nil, "", stampServer(re, server)
		}
		return nil, "", refuse(refusal.Transient, ReasonUnavailable, server, origin)
	}
	htu := htuOfURL(ep)
	for attempt := 0; ; attempt++ {
		var nonce string
		tok, code, err = c.tokenAttempt(ctx, server, origin, ep, hc, auth, aud, params, key, htu, &nonce)
		changed := key != nil && c.nonces.set(origin, nonce)
		if code != "use_dpop_nonce" || key == nil {
			return tok, code, err
		}
		if attempt > 0 || !changed {
			return nil, code, refuse(refusal.AuthRefused, ReasonDPoPNonceRefused, server, origin)
		}
	}
}

// tokenAttempt is one request of tokenRequest; the DPoP-Nonce of its
// answer, if any, is written to *nonce.
func (c *Client) tokenAttempt(ctx context.Context, server, origin string, ep *url.URL, hc *http.Client, auth clientAuth, aud string,
	params url.Values, key *proofKey, htu string, nonce *string) (tok *oauth2.Token, code string, err error) {
	cl := *hc
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	base := cl.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	var rt http.RoundTripper = boundedTransport{rt: base, max: c.maxBody}
	if key != nil {
		proof, err := key.proof(http.MethodPost, htu, c.now(), c.nonces.get(origin), "")
		if err != nil {
			return nil, "", refuse(refusal.Internal, "dpop_proof_failed", server, "")
		}
		rt = dpopTransport{rt: rt, proof: proof, nonce: nonce}
	}
	cl.Transport = rt

	cfg := clientcredentials.Config{ClientID: auth.id, TokenURL: ep.String(), EndpointParams: url.Values{}}
	for k, v := range params {
		cfg.EndpointParams[k] = v
	}
	switch auth.method {
	case AuthClientSecretBasic:
		cfg.AuthStyle = oauth2.AuthStyleInHeader
		cfg.ClientSecret = auth.secret
	case AuthClientSecretPost:
		cfg.AuthStyle = oauth2.AuthStyleInParams
		cfg.ClientSecret = auth.secret
	case AuthPrivateKeyJWT:
		cfg.AuthStyle = oauth2.AuthStyleInParams
		assertion, err := auth.key.assertion(auth.id, aud, c.now())
		if err != nil {
			return nil, "", refuse(refusal.Config, ReasonClientKeyInvalid, server, "")
		}
		cfg.EndpointParams.Set("client_assertion_type", assertionTypeJWTBearer)
		cfg.EndpointParams.Set("client_assertion", assertion)
	default: // none: the client id in the body, nothing else
		cfg.AuthStyle = oauth2.AuthStyleInParams
	}

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	tok, err = cfg.Token(context.WithValue(actx, oauth2.HTTPClient, &cl))
	if err == nil {
		return tok, "", nil
	}
	var re *oauth2.RetrieveError
	var ue *url.Error
	switch {
	case actx.Err() != nil:
		return nil, "", ctxRefusal(actx.Err(), server, origin)
	case errors.As(err, &re):
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		switch {
		case status >= 300 && status < 400:
			return nil, "", refuse(refusal.Refused, ReasonRedirectRefused, server, origin)
		case status == http.StatusTooManyRequests || status >= 500:
			return nil, "", refuse(refusal.Transient, ReasonUnavailable, server, origin)
		}
		// The error code is believed only where RFC 6749 §5.2 puts it: in
		// a 400 or 401 answer (or a 2xx that carries one anyway).
		code := re.ErrorCode
		if status != http.StatusBadRequest && status != http.StatusUnauthorized && (status < 200 || status > 299) {
			code = ""
		}
		class, reason := tokenErrorReason(code)
		return nil, code, refuse(class, reason, server, origin)
	case errors.As(err, &ue):
		if errors.Is(err, errRedirect) {
			return nil, "", refuse(refusal.Refused, ReasonRedirectRefused, server, origin)
		}
		if r := refusalOf(err); r != nil {
			return nil, "", stampServer(r, server)
		}
		return nil, "", refuse(refusal.Transient, ReasonUnavailable, server, origin)
	}
	return nil, "", refuse(refusal.Protocol, ReasonTokenResponseInvalid, server, origin)
}

// dpopTransport is rt with the DPoP header proof on the request, and the
// DPoP-Nonce of the answer written to *nonce.
type dpopTransport struct {
	rt    http.RoundTripper
	proof string
	nonce *string
}

// RoundTrip implements http.RoundTripper; it does not modify r.
func (d dpopTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	out := r.Clone(r.Context())
	out.Header.Set("DPoP", d.proof)
	resp, err := d.rt.RoundTrip(out)
	if err == nil {
		*d.nonce = resp.Header.Get("DPoP-Nonce")
	}
	return resp, err
}

// tokenErrorReason maps an OAuth error code of a token endpoint answer to a
// fixed class and reason; an unknown code, or none, is AuthRefused
// ReasonTokenRefused.
func tokenErrorReason(code string) (refusal.Class, string) {
	switch code {
	case "invalid_client":
		return refusal.AuthRefused, ReasonClientAuthRefused
	case "unauthorized_client":
		return refusal.AuthRefused, ReasonClientUnauthorized
	case "unsupported_grant_type":
		return refusal.Unsupported, ReasonGrantUnsupported
	case "invalid_scope":
		return refusal.AuthRefused, ReasonScopeRefused
	case "invalid_target":
		return refusal.Refused, ReasonResourceRefused
	case "use_dpop_nonce":
		return refusal.AuthRefused, ReasonDPoPNonceRefused
	case "invalid_dpop_proof":
		return refusal.AuthRefused, ReasonDPoPProofRefused
	}
	return refusal.AuthRefused, ReasonTokenRefused
}

// maxExpiresIn bounds expires_in (ten years, in seconds).
const maxExpiresIn = 10 * 365 * 24 * 3600

// Bounds of the tokens a token endpoint may issue (checked at receipt,
// before anything is stored).
const (
	// MaxAccessTokenBytes bounds an access token: the usual limit of one
	// request header line at HTTP servers and proxies (8 KiB), which an
	// Authorization header carrying it must pass.
	MaxAccessTokenBytes = 8 << 10
	// MaxRefreshTokenBytes bounds a refresh token, so that a credential
	// with both still fits every token store (ports.MaxValueLen).
	MaxRefreshTokenBytes = 6 << 10
)

// fillToken checks tok, a token endpoint's answer, and writes it into the
// token fields of r at now: the access token, the expiry from expires_in,
// when it was received, the refresh token (kept when the answer has none),
// the scope, and, with key, the token type DPoP and key's thumbprint.
//
// Errors (nothing is written then): Class Protocol ReasonTokenMalformed
// when the access token is empty or holds a byte an Authorization header
// cannot carry after its scheme (anything but visible ASCII, 0x21-0x7e:
// a space, CR, LF, NUL, ESC, ...), or the refresh token holds a byte
// outside 0x20-0x7e (RFC 6749 Appendix A.17); Class Refused
// ReasonTokenTooLarge when the access token is over MaxAccessTokenBytes
// or the refresh token over MaxRefreshTokenBytes; Class Refused
// ReasonDPoPDowngrade when a proof of key was sent and the token type is
// not DPoP; Class Protocol ReasonTokenResponseInvalid when the token type
// is not Bearer without key (case-insensitive, RFC 6749 §7.1), or
// expires_in is not a non-negative integer of at most ten years (a JSON
// number, or a string of decimal digits, which some servers send).
func fillToken(tok *oauth2.Token, r *record, now time.Time, server, origin string, key *proofKey) error {
	if err := checkToken(tok.AccessToken, MaxAccessTokenBytes, 0x21, server, origin); err != nil {
		return err
	}
	if tok.RefreshToken != "" {
		if err := checkToken(tok.RefreshToken, MaxRefreshTokenBytes, 0x20, server, origin); err != nil {
			return err
		}
	}
	switch {
	case key != nil && !strings.EqualFold(tok.TokenType, tokenTypeDPoP):
		return &refusal.Error{Class: refusal.Refused, Reason: ReasonDPoPDowngrade, Server: server, Origin: origin,
			Detail: "the authorization server advertises DPoP but issued a token of another type"}
	case key == nil && !strings.EqualFold(tok.TokenType, tokenTypeBearer):
		return refuse(refusal.Protocol, ReasonTokenResponseInvalid, server, origin)
	}
	secs, ok := expiresIn(tok.Extra("expires_in"))
	if !ok {
		return refuse(refusal.Protocol, ReasonTokenResponseInvalid, server, origin)
	}
	r.AccessToken = tok.AccessToken
	r.Received = now
	r.Expiry = time.Time{}
	if secs >= 0 {
		r.Expiry = now.Add(time.Duration(secs) * time.Second)
	}
	if tok.RefreshToken != "" {
		r.RefreshToken = tok.RefreshToken
	}
	if s, _ := tok.Extra("scope").(string); s != "" {
		r.Scope = s
	}
	r.TokenType, r.DPoPJKT = "", ""
	if key != nil {
		r.TokenType, r.DPoPJKT = tokenTypeDPoP, key.jkt
	}
	return nil
}

// checkToken checks a token the answer issued: not empty, at most max
// bytes, every byte from lowest to 0x7e. Errors as fillToken's.
func checkToken(t string, max int, lowest byte, server, origin string) error {
	if len(t) > max {
		return &refusal.Error{Class: refusal.Refused, Reason: ReasonTokenTooLarge, Server: server, Origin: origin,
			Detail: "the authorization server issued a token larger than mcpward sends or stores"}
	}
	if t == "" {
		return refuse(refusal.Protocol, ReasonTokenMalformed, server, origin)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c < lowest || c > 0x7e {
			return refuse(refusal.Protocol, ReasonTokenMalformed, server, origin)
		}
	}
	return nil
}

// expiresIn reads an expires_in value as x/oauth2's Token.Extra returns
// it: a float64 from a JSON number, a string from a JSON string, an int64
// (or float64) from a form-encoded answer, "" when a form has none, nil
// when a JSON answer has none or null. secs is -1 when absent; ok is false
// when it is anything but an integer from 0 to ten years (a string must be
// 1 to 10 decimal digits).
func expiresIn(v any) (secs int64, ok bool) {
	var f float64
	switch x := v.(type) {
	case nil:
		return -1, true
	case float64:
		f = x
	case int64:
		if x < 0 || x > maxExpiresIn {
			return 0, false
		}
		return x, true
	case string:
		if x == "" {
			return -1, true
		}
		if len(x) > 10 {
			return 0, false
		}
		var n int64
		for i := 0; i < len(x); i++ {
			if x[i] < '0' || x[i] > '9' {
				return 0, false
			}
			n = n*10 + int64(x[i]-'0')
		}
		if n > maxExpiresIn {
			return 0, false
		}
		return n, true
	default:
		return 0, false
	}
	if f < 0 || f > maxExpiresIn || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

// postFormAuth POSTs form to u (an https URL) with the client
// authenticated as auth says, as a token endpoint would take it
// (client_secret_basic in the Authorization header with the id and secret
// form-encoded, RFC 6749 §2.3.1; the others in the body; aud is the
// issuer a private_key_jwt assertion is for). Errors: Config
// ReasonClientKeyInvalid when no assertion can be signed; those of
// Client.do.
func (c *Client) postFormAuth(ctx context.Context, server string, u *url.URL, form url.Values, auth clientAuth, aud string) (*response, error) {
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	switch auth.method {
	case AuthClientSecretBasic:
	case AuthClientSecretPost:
		f.Set("client_id", auth.id)
		f.Set("client_secret", auth.secret)
	case AuthPrivateKeyJWT:
		assertion, err := auth.key.assertion(auth.id, aud, c.now())
		if err != nil {
			return nil, refuse(refusal.Config, ReasonClientKeyInvalid, server, "")
		}
		f.Set("client_id", auth.id)
		f.Set("client_assertion_type", assertionTypeJWTBearer)
		f.Set("client_assertion", assertion)
	default:
		if auth.id != "" {
			f.Set("client_id", auth.id)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(f.Encode()))
	if err != nil {
		return nil, refuse(refusal.Config, ReasonURLInvalid, server, "")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if auth.method == AuthClientSecretBasic {
		req.SetBasicAuth(url.QueryEscape(auth.id), url.QueryEscape(auth.secret))
	}
	return c.do(ctx, server, req)
}

// errTooLarge ends the read of a body over the bound.
var errTooLarge = errors.New("oauth: response too large")

// boundedTransport is rt with every response body failing once more than
// max bytes of it are read.
type boundedTransport struct {
	rt  http.RoundTripper
	max int64
}

// RoundTrip implements http.RoundTripper.
func (b boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(r)
	if err == nil {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: b.max}
	}
	return resp, err
}

// boundedBody is a body that fails with errTooLarge past left bytes.
type boundedBody struct {
	io.ReadCloser
	left int64
}

// Read implements io.Reader.
func (b *boundedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}
