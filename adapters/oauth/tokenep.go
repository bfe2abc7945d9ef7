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
// x/oauth2 does the request: its client_credentials token source sends any
// grant, since its EndpointParams may set grant_type. Its auth style is
// always set explicitly (its auto-detection would send the secret a second
// way after a refusal); the http.Client it gets through the context is the
// origin's, with every redirect refused. Its errors, which embed URLs and
// bodies, never leave this function: each becomes a refusal naming server
// and ep's origin only.
//
// Every answer's body is bounded by Options.MaxResponseBytes.
//
// Errors: Config ReasonURLInvalid when ep is not https; Config
// ReasonClientKeyInvalid when the private_key_jwt assertion cannot be
// signed; the ClientFunc's refusal or Transient ReasonUnavailable;
// Transient "canceled"/"deadline_exceeded"; Refused ReasonRedirectRefused
// for any 3xx; Transient ReasonUnavailable for a network failure, 429 or
// 5xx; for an error answer (any other status, or an error code in a 2xx)
// the refusal of tokenErrorReason; Protocol
// ReasonTokenResponseInvalid for an answer x/oauth2 cannot read (or over
// the bound) or without an access token. Safe for concurrent use.
func (c *Client) tokenRequest(ctx context.Context, server string, ep *url.URL, auth clientAuth, aud string, params url.Values) (tok *oauth2.Token, code string, err error) {
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
	cl := *hc
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	base := cl.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cl.Transport = boundedTransport{rt: base, max: c.maxBody}

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

	tok, err = cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, &cl))
	if err == nil {
		return tok, "", nil
	}
	var re *oauth2.RetrieveError
	var ue *url.Error
	switch {
	case ctx.Err() != nil:
		return nil, "", ctxRefusal(ctx.Err(), server, origin)
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
	}
	return refusal.AuthRefused, ReasonTokenRefused
}

// maxExpiresIn bounds expires_in (ten years, in seconds).
const maxExpiresIn = 10 * 365 * 24 * 3600

// fillToken checks tok, a token endpoint's answer, and writes it into the
// token fields of r at now: the access token, the expiry from expires_in,
// the refresh token (kept when the answer has none) and the scope. Errors:
// Class Protocol, ReasonTokenResponseInvalid when the token type is not
// Bearer (case-insensitive) or expires_in is not a non-negative integer of
// at most ten years (a JSON answer must give it as a number). Nothing is
// written then.
func fillToken(tok *oauth2.Token, r *record, now time.Time, server, origin string) error {
	if tok.AccessToken == "" || !strings.EqualFold(tok.TokenType, "bearer") {
		return refuse(refusal.Protocol, ReasonTokenResponseInvalid, server, origin)
	}
	secs, ok := expiresIn(tok.Extra("expires_in"))
	if !ok {
		return refuse(refusal.Protocol, ReasonTokenResponseInvalid, server, origin)
	}
	r.AccessToken = tok.AccessToken
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
	return nil
}

// expiresIn reads an expires_in value as x/oauth2's Token.Extra returns
// it: a float64 from a JSON answer, an int64 (or float64) from a
// form-encoded one, "" when a form has none, nil when a JSON answer has
// none or null. secs is -1 when absent; ok is false when it is anything
// but an integer from 0 to ten years (a JSON string among them).
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
		return -1, x == ""
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
