package oauth

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons of headless sign-ins.
const (
	// ReasonClientCredentialsInvalid (Config): a headless sign-in was given
	// no client id (neither ClientCredentials.ClientID nor Server.ClientID),
	// or not exactly one of a secret and a private key.
	ReasonClientCredentialsInvalid = "client_credentials_invalid"
	// ReasonCrossAppInvalid (Config): a cross-app sign-in was given no
	// subject token, or an IdP token endpoint that is not an absolute https
	// URL (or, under Options.AllowLoopbackHTTP, an http loopback one).
	ReasonCrossAppInvalid = "cross_app_invalid"
	// ReasonTokenExchangeRefused (AuthRefused): the IdP refused the token
	// exchange (RFC 8693) of the subject token for an authorization grant.
	ReasonTokenExchangeRefused = "token_exchange_refused"
	// ReasonTokenExchangeInvalid (Protocol): the IdP's token exchange answer
	// is not a JSON object with an access_token whose issued_token_type is
	// the ID-JAG type.
	ReasonTokenExchangeInvalid = "token_exchange_response_invalid"
)

// Token types of the cross-app flow (RFC 8693 §3, Identity Assertion
// Authorization Grant).
const (
	// TokenTypeIDToken is the default subject token type of CrossApp.
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	// TokenTypeIDJAG is the token type requested from the IdP: an Identity
	// Assertion JWT Authorization Grant.
	TokenTypeIDJAG = "urn:ietf:params:oauth:token-type:id-jag"
)

// ClientCredentials is a confidential client's identity at an
// authorization server, for a headless sign-in: a client id with either a
// client secret or a private key; with neither, the client a former
// headless sign-in stored for the server is used. It comes from the host (a flag, a PEM
// file, a host port, the environment of the host process), never from a
// definition. Its secret and key are kept in the token store with the
// client registration, for renewals and revocation, and never appear in an
// error, log or projection.
type ClientCredentials struct {
	// ClientID is the client id; "" means Server.ClientID.
	ClientID string
	// Secret is the client secret: the client authenticates with
	// client_secret_basic, or client_secret_post when the authorization
	// server supports only that.
	Secret string
	// PrivateKeyPEM is a PEM private key (PKCS #8, SEC 1 EC, or PKCS #1
	// RSA): the client authenticates with private_key_jwt (RFC 7523 §2.2),
	// signing a short-lived assertion whose iss and sub are the client id
	// and whose aud is the authorization server's issuer.
	PrivateKeyPEM []byte
	// KeyID, when not "", is the kid header of the assertions.
	KeyID string
	// Alg is the JWS algorithm of the assertions ("ES256", "RS256",
	// "PS256", "EdDSA", ...); "" means the first algorithm of the server's
	// token_endpoint_auth_signing_alg_values_supported that fits the key,
	// else the usual one of the key's type.
	Alg string
}

// EnterpriseManaged is what an enterprise-managed sign-in (MCP
// "Enterprise-Managed Authorization", SEP-990: the Identity Assertion
// Authorization Grant, also called cross-app access) needs besides the
// server: the user's identity assertion from the enterprise IdP, where to
// exchange it, and the client at the MCP server's authorization server.
type EnterpriseManaged struct {
	// IdPTokenEndpoint is the IdP's token endpoint (absolute https).
	IdPTokenEndpoint string
	// SubjectToken is the user's ID token (or other assertion) from the
	// IdP; SubjectTokenType its RFC 8693 type, "" meaning
	// TokenTypeIDToken.
	SubjectToken     string
	SubjectTokenType string
	// IdPClientID and IdPClientSecret are this client at the IdP; a
	// secret, when given, is sent with client_secret_basic, else the
	// client id in the body.
	IdPClientID     string
	IdPClientSecret string
	// Client is this client at the MCP server's authorization server.
	Client ClientCredentials
}

// CrossApp is the former name of EnterpriseManaged.
//
// Deprecated: use EnterpriseManaged, the name the MCP specification gives
// the flow.
type CrossApp = EnterpriseManaged

// SignInClientCredentials signs in to s with no user: the client
// credentials grant (OAuth 2.1 §4.2) at the token endpoint discovery finds,
// with the RFC 8707 resource and the scope (headlessScope; omitted when
// empty), the client
// authenticated with cc. The tokens are stored as a sign-in's are, the
// client registration (with its secret or key) beside them; when the
// access token expires it is renewed by the same grant, once across
// processes like a refresh.
//
// Errors: Config ReasonClientCredentialsInvalid; Config
// ReasonClientKeyInvalid for an unreadable key or an Alg that does not fit
// it; the errors of discovery (a *DiscoveryError); Unsupported ReasonClientAuthUnsupported when
// the server supports no method for this secret or key (or not the key's
// algorithm); those of Client.tokenRequest (AuthRefused
// ReasonClientAuthRefused for a refused client, ...), fillToken and the
// store. Safe for concurrent use.
func (c *Client) SignInClientCredentials(ctx context.Context, s Server, cc ClientCredentials) (err error) {
	ctx, end := c.step(ctx, StepSignIn)
	defer func() { end(err) }()
	if err := c.credentialsShape(s, cc); err != nil {
		return err
	}
	ep, err := c.discover(ctx, s, "")
	if err != nil {
		return err
	}
	cr, auth, err := c.confidentialClient(ctx, s, ep, cc)
	if err != nil {
		return err
	}
	if err := c.migrate(ctx, s, ep); err != nil {
		return err
	}
	key, err := c.signInKey(s, ep)
	if err != nil {
		return err
	}
	scope := c.headlessScope(s, ep)
	params := url.Values{"grant_type": {grantClientCredentials}, "resource": {ep.indicator}}
	if scope != "" {
		params.Set("scope", scope)
	}
	tok, _, err := c.tokenRequest(ctx, s.ID, ep.token, auth, ep.issuer, params, key)
	if err != nil {
		return err
	}
	rec := c.newCredential(ctx, s, ep, auth.id)
	rec.Requested = scopeList(scope)
	rec.Grant = grantClientCredentials
	rec.Scope = scope
	if err := fillToken(tok, rec, c.now(), s.ID, c.urls.origin(ep.token.String()), key); err != nil {
		return err
	}
	if err := c.saveClient(ctx, cr); err != nil {
		return err
	}
	return c.saveLocked(ctx, rec, key)
}

// SignInEnterpriseManaged signs in to s with the user's identity from an
// enterprise IdP, without a browser (MCP Enterprise-Managed Authorization,
// SEP-990): it exchanges x.SubjectToken at the IdP (RFC 8693:
// requested_token_type TokenTypeIDJAG, audience the issuer of s's
// authorization server, resource the resource indicator of s, scope as
// SignInClientCredentials) for an Identity Assertion JWT Authorization
// Grant (ID-JAG), then presents it at s's token endpoint with the
// JWT-bearer grant (RFC 7523 §2.1), the client authenticated with x.Client
// (and a DPoP proof when the authorization server advertises DPoP). The
// tokens and the client registration are stored as
// SignInClientCredentials stores them; the grant and the subject token are
// not stored, so an expired access token without a refresh token needs a
// new sign-in.
//
// Errors: Config ReasonCrossAppInvalid; those of SignInClientCredentials
// before the request; Transient/Refused ones of the IdP request as
// Client.do says; AuthRefused ReasonTokenExchangeRefused for a 4xx from
// the IdP; Protocol ReasonTokenExchangeInvalid for any other answer that is
// not 200 with an ID-JAG; then those of Client.tokenRequest, fillToken and
// the store. Safe for concurrent use.
func (c *Client) SignInEnterpriseManaged(ctx context.Context, s Server, x EnterpriseManaged) (err error) {
	ctx, end := c.step(ctx, StepSignIn)
	defer func() { end(err) }()
	if x.SubjectToken == "" {
		return refuse(refusal.Config, ReasonCrossAppInvalid, s.ID, "")
	}
	if _, _, err := c.urls.canonical(x.IdPTokenEndpoint, s.ID); err != nil {
		return refuse(refusal.Config, ReasonCrossAppInvalid, s.ID, "")
	}
	idp, err := url.Parse(x.IdPTokenEndpoint)
	if err != nil {
		return refuse(refusal.Config, ReasonCrossAppInvalid, s.ID, "")
	}
	if err := c.credentialsShape(s, x.Client); err != nil {
		return err
	}
	ep, err := c.discover(ctx, s, "")
	if err != nil {
		return err
	}
	cr, auth, err := c.confidentialClient(ctx, s, ep, x.Client)
	if err != nil {
		return err
	}
	if err := c.migrate(ctx, s, ep); err != nil {
		return err
	}
	key, err := c.signInKey(s, ep)
	if err != nil {
		return err
	}
	scope := c.headlessScope(s, ep)
	grant, err := c.exchangeForGrant(ctx, s.ID, idp, x, ep, scope)
	if err != nil {
		return err
	}
	params := url.Values{"grant_type": {grantJWTBearer}, "assertion": {grant}, "resource": {ep.indicator}}
	if scope != "" {
		params.Set("scope", scope)
	}
	tok, _, err := c.tokenRequest(ctx, s.ID, ep.token, auth, ep.issuer, params, key)
	if err != nil {
		return err
	}
	rec := c.newCredential(ctx, s, ep, auth.id)
	rec.Requested = scopeList(scope)
	if err := fillToken(tok, rec, c.now(), s.ID, c.urls.origin(ep.token.String()), key); err != nil {
		return err
	}
	if err := c.saveClient(ctx, cr); err != nil {
		return err
	}
	return c.saveLocked(ctx, rec, key)
}

// SignInCrossApp is SignInEnterpriseManaged.
//
// Deprecated: use SignInEnterpriseManaged, the name the MCP specification
// gives the flow.
func (c *Client) SignInCrossApp(ctx context.Context, s Server, x CrossApp) error {
	return c.SignInEnterpriseManaged(ctx, s, x)
}

// exchangeForGrant is the RFC 8693 token exchange at the IdP: this step is
// not in golang.org/x/oauth2. It returns the ID-JAG. Errors are
// SignInCrossApp's for this step.
func (c *Client) exchangeForGrant(ctx context.Context, server string, idp *url.URL, x EnterpriseManaged, ep *endpoints, scope string) (string, error) {
	subjectType := x.SubjectTokenType
	if subjectType == "" {
		subjectType = TokenTypeIDToken
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {TokenTypeIDJAG},
		"audience":             {ep.issuer},
		"resource":             {ep.indicator},
		"subject_token":        {x.SubjectToken},
		"subject_token_type":   {subjectType},
	}
	if scope != "" {
		form.Set("scope", scope)
	}
	auth := clientAuth{method: AuthNone, id: x.IdPClientID} // no client_id at all when ""
	if x.IdPClientSecret != "" {
		auth = clientAuth{method: AuthClientSecretBasic, id: x.IdPClientID, secret: x.IdPClientSecret}
	}
	resp, err := c.postFormAuth(ctx, server, idp, form, auth, "")
	if err != nil {
		return "", err
	}
	origin := c.urls.origin(idp.String())
	switch {
	case resp.status >= 400 && resp.status < 500:
		return "", refuse(refusal.AuthRefused, ReasonTokenExchangeRefused, server, origin)
	case resp.status != 200:
		return "", refuse(refusal.Protocol, ReasonTokenExchangeInvalid, server, origin)
	}
	grant, ok := parseExchange(resp.body)
	if !ok {
		return "", refuse(refusal.Protocol, ReasonTokenExchangeInvalid, server, origin)
	}
	return grant, nil
}

// parseExchange reads an RFC 8693 §2.2.1 answer that must carry an ID-JAG:
// one JSON object whose access_token is a non-empty string and whose
// issued_token_type is TokenTypeIDJAG. ok is false otherwise. It never
// panics.
func parseExchange(body []byte) (grant string, ok bool) {
	var a struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	if err := decodeObject(&response{body: body}, &a, "", ""); err != nil {
		return "", false
	}
	if a.AccessToken == "" || a.IssuedTokenType != TokenTypeIDJAG {
		return "", false
	}
	return a.AccessToken, true
}

// credentialsShape checks what can be checked of cc before discovery: not
// both a secret and a key, and without either (the stored client is
// meant) no client id other than the stored one can be asked for later;
// Config ReasonClientCredentialsInvalid otherwise.
func (c *Client) credentialsShape(s Server, cc ClientCredentials) error {
	if cc.Secret != "" && len(cc.PrivateKeyPEM) > 0 {
		return refuse(refusal.Config, ReasonClientCredentialsInvalid, s.ID, "")
	}
	if cc.Secret != "" || len(cc.PrivateKeyPEM) > 0 {
		if cc.ClientID == "" && s.ClientID == "" {
			return refuse(refusal.Config, ReasonClientCredentialsInvalid, s.ID, "")
		}
	}
	return nil
}

// confidentialClient returns the registration and the authentication of
// cc at the authorization server of ep: client_secret_basic (else
// client_secret_post) for a secret, private_key_jwt for a key, each only
// when the server's token_endpoint_auth_methods_supported allows it (an
// absent list allows a secret with client_secret_basic, RFC 8414's
// default, and a key). With neither a secret nor a key, the confidential
// client a former headless sign-in stored for this server and issuer is
// used (when cc or s names a client id, only if it is that one). Errors:
// Config ReasonClientCredentialsInvalid (no client id, or nothing given and
// nothing stored), Config ReasonClientKeyInvalid, Unsupported
// ReasonClientAuthUnsupported, the store's.
func (c *Client) confidentialClient(ctx context.Context, s Server, ep *endpoints, cc ClientCredentials) (*clientRecord, clientAuth, error) {
	id := cc.ClientID
	if id == "" {
		id = s.ClientID
	}
	if cc.Secret == "" && len(cc.PrivateKeyPEM) == 0 {
		stored, err := c.loadClient(ctx, s.ID, ep.resource, ep.issuer)
		if err != nil {
			return nil, clientAuth{}, err
		}
		if stored == nil || stored.Kind != clientPreregistered || stored.Method == AuthNone || (id != "" && stored.ClientID != id) {
			return nil, clientAuth{}, refuse(refusal.Config, ReasonClientCredentialsInvalid, s.ID, "")
		}
		cc = ClientCredentials{ClientID: stored.ClientID, Secret: stored.ClientSecret, PrivateKeyPEM: []byte(stored.PrivateKeyPEM),
			KeyID: stored.KeyID, Alg: stored.Alg}
		id = stored.ClientID
	}
	hasKey := len(cc.PrivateKeyPEM) > 0
	cr := &clientRecord{Kind: clientPreregistered, Server: s.ID, Resource: ep.resource, Issuer: ep.issuer, ClientID: id}
	asOrigin := c.urls.origin(ep.issuer)
	if !hasKey {
		m, ok := secretMethod(ep.authMethods)
		if !ok {
			return nil, clientAuth{}, refuse(refusal.Unsupported, ReasonClientAuthUnsupported, s.ID, asOrigin)
		}
		cr.Method, cr.ClientSecret = m, cc.Secret
		return cr, clientAuth{method: m, id: id, secret: cc.Secret}, nil
	}
	if len(ep.authMethods) > 0 && !slices.Contains(ep.authMethods, AuthPrivateKeyJWT) {
		return nil, clientAuth{}, refuse(refusal.Unsupported, ReasonClientAuthUnsupported, s.ID, asOrigin)
	}
	key, err := signingKeyFor(cc, ep.signingAlgs)
	if err != nil {
		if _, bad := parseSigningKey(cc.PrivateKeyPEM, cc.Alg, cc.KeyID); bad != nil {
			return nil, clientAuth{}, refuse(refusal.Config, ReasonClientKeyInvalid, s.ID, "")
		}
		return nil, clientAuth{}, refuse(refusal.Unsupported, ReasonClientAuthUnsupported, s.ID, asOrigin)
	}
	cr.Method, cr.PrivateKeyPEM, cr.Alg, cr.KeyID = AuthPrivateKeyJWT, string(key.pem), string(key.alg), key.kid
	return cr, clientAuth{method: AuthPrivateKeyJWT, id: id, key: key}, nil
}

// signingKeyFor parses cc's key with cc.Alg, or when that is "" with the
// first of the advertised algs that fits it (the key's usual one when none
// are advertised), and checks the algorithm is advertised when any are.
func signingKeyFor(cc ClientCredentials, algs []string) (*signingKey, error) {
	if cc.Alg == "" && len(algs) > 0 {
		for _, a := range algs {
			if k, err := parseSigningKey(cc.PrivateKeyPEM, a, cc.KeyID); err == nil {
				return k, nil
			}
		}
		return nil, errNoAlg
	}
	k, err := parseSigningKey(cc.PrivateKeyPEM, cc.Alg, cc.KeyID)
	if err != nil {
		return nil, err
	}
	if len(algs) > 0 && !slices.Contains(algs, string(k.alg)) {
		return nil, errNoAlg
	}
	return k, nil
}

// errNoAlg: no advertised algorithm fits the key.
var errNoAlg = errors.New("no advertised algorithm fits the key")

// headlessScope is the scope a headless sign-in asks for: the scopes an
// interactive sign-in would ask for (ep.request, see signInScopes: a
// pending step-up taken in, which this sign-in now answers), without the
// offline_access an interactive sign-in adds (a headless grant needs no
// refresh token; it is kept when s.Scopes names it), space-separated.
func (c *Client) headlessScope(s Server, ep *endpoints) string {
	c.began(storeKey(s.ID, ep.resource), ep.request)
	out := make([]string, 0, len(ep.request))
	for _, sc := range ep.request {
		if sc != "offline_access" || slices.Contains(s.Scopes, sc) {
			out = append(out, sc)
		}
	}
	return strings.Join(out, " ")
}

// newRecord returns the credential of s from ep's authorization server for
// clientID, without tokens yet.
func newRecord(s Server, ep *endpoints, clientID string) *record {
	rec := &record{Server: s.ID, Resource: ep.resource, Issuer: ep.issuer, TokenEndpoint: ep.token.String(), ClientID: clientID,
		Requested: slices.Clone(ep.request)}
	if ep.indicator != ep.resource {
		rec.Indicator = ep.indicator
	}
	if ep.revocation != nil {
		rec.RevocationEndpoint = ep.revocation.String()
	}
	return rec
}
