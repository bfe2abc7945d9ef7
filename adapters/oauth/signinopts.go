package oauth

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// ReasonClientSecretRequired (Config): the server's client is a
// pre-registered one (Server.ClientID) and the authorization server
// accepts no public client, but no client secret was given at sign-in and
// none is stored: sign in again with SignInOptions.ClientSecret.
const ReasonClientSecretRequired = "client_secret_required"

// SignInOptions are what the host gives one interactive sign-in besides the
// definition's Server. The zero value means no options.
type SignInOptions struct {
	// ClientSecret is the secret of the pre-registered client
	// Server.ClientID (ignored without one). Once the sign-in succeeds it is
	// kept in the token store with the client, for refreshes and
	// revocation, and later sign-ins may omit it. It never appears in an
	// error, log or projection.
	ClientSecret string
	// CallbackPort, when not 0, replaces Server.CallbackPort: the loopback
	// port of the redirect listener, for a client whose redirect URI is
	// registered with a fixed port.
	CallbackPort int
	// NewRegistration makes a sign-in that would reuse a stored dynamic
	// registration register anew (when the authorization server forgot
	// the client); the new registration replaces the stored one.
	NewRegistration bool
}

// chosenClient is the client a sign-in uses: how it authenticates, and the
// registration to store once its code is exchanged (nil when there is none
// to store, or it is stored already).
type chosenClient struct {
	auth clientAuth
	save *clientRecord
	// registered: auth is a stored dynamic registration, forgotten when
	// the token endpoint refuses it (invalid_client).
	registered bool
}

// BeginSignInWithOptions discovers s's endpoints (using the challenge
// recorded for s, see RecordChallenge), opens the loopback redirect
// listener on 127.0.0.1, chooses the client and prepares the authorization
// URL (PKCE S256, state, RFC 8707 resource, the scopes of signInScopes,
// which take in a pending step-up). The caller must Close the returned
// SignIn. Only a dynamic registration is stored before a redirect has been
// exchanged for tokens.
//
// The client, in this order:
//   - s.ClientID, pre-registered: with o.ClientSecret, or the secret a
//     former sign-in stored for it, it authenticates with
//     client_secret_basic (client_secret_post when the server supports
//     only that); without a secret it is public (none);
//   - s.ClientMetadataURL, when the authorization server advertises
//     client_id_metadata_document_supported: the URL is the client_id, a
//     public client;
//   - else the client registered before for this server, issuer and
//     server identity (stored in the token store), when its redirect
//     port is free and fits the port asked for and its secret (if any)
//     has not expired, unless o.NewRegistration; else a new dynamic
//     registration (RFC 7591) for this listener's redirect URI, stored at
//     once. A registration's method and secret are the ones its answer
//     names.
//
// The listener's port is o.CallbackPort, else s.CallbackPort, else the
// stored registration's, else any free one.
//
// Errors: Config ReasonCallbackPortInvalid for a port outside 0..65535; the
// errors of discovery, each as a *DiscoveryError carrying the Report beside
// the refusal (ReportOf); Config ReasonURLInvalid for a ClientMetadataURL that
// is not https; Config ReasonClientSecretRequired, Unsupported
// ReasonClientAuthUnsupported (no method fits); Transient
// ReasonCallbackUnavailable when the listener cannot be opened; the errors
// of Client.register (Unsupported ReasonRegistrationUnavailable, Refused
// ReasonRegistrationRefused, Protocol ReasonMetadataInvalid, ...) and of
// the store. On any error no listener is left open. Safe for concurrent
// use.
func (c *Client) BeginSignInWithOptions(ctx context.Context, s Server, o SignInOptions) (*SignIn, error) {
	ctx, end := c.step(ctx, StepSignIn)
	p, err := c.beginSignIn(ctx, s, o, end)
	if err != nil {
		end(err)
		return nil, err
	}
	return p, nil
}

// beginSignIn is BeginSignInWithOptions but for beginning its step: the
// SignIn ends it with end.
func (c *Client) beginSignIn(ctx context.Context, s Server, o SignInOptions, end func(error)) (*SignIn, error) {
	port := s.CallbackPort
	if o.CallbackPort != 0 {
		port = o.CallbackPort
	}
	if port < 0 || port > 65535 {
		return nil, refuse(refusal.Config, ReasonCallbackPortInvalid, s.ID, "")
	}
	ep, err := c.discover(ctx, s, "")
	if err != nil {
		return nil, err
	}
	if err := c.migrate(ctx, s, ep); err != nil {
		return nil, err
	}
	key, err := c.signInKey(s, ep)
	if err != nil {
		return nil, err
	}
	ln, ch, err := c.signInClient(ctx, s, o, port, ep)
	if err != nil {
		return nil, err
	}
	return c.begin(s, ep, ln, ch, key, end), nil
}

// signInKey returns a new proof key for a sign-in to s at ep's
// authorization server when its tokens are to be DPoP-bound (useDPoP),
// else nil. Errors: Class Internal "dpop_key_failed" when no key can be
// made.
func (c *Client) signInKey(s Server, ep *endpoints) (*proofKey, error) {
	if !useDPoP(s, ep) {
		return nil, nil
	}
	k, err := newProofKey()
	if err != nil {
		return nil, refuse(refusal.Internal, "dpop_key_failed", s.ID, "")
	}
	return k, nil
}

// SignInWithOptions runs a whole sign-in for s with o:
// BeginSignInWithOptions, open(URL), Wait, Close. Errors are those of
// SignInWith (a discovery failure is a *DiscoveryError).
func (c *Client) SignInWithOptions(ctx context.Context, s Server, o SignInOptions, open func(authURL string) error) error {
	if open == nil {
		return refuse(refusal.Config, "oauth_options_invalid", s.ID, "")
	}
	p, err := c.BeginSignInWithOptions(ctx, s, o)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := open(p.URL()); err != nil {
		if re := refusalOf(err); re != nil {
			err = stampServer(re, s.ID)
		} else {
			err = refuse(refusal.Transient, ReasonSignInOpenFailed, s.ID, "")
		}
		p.endStep(err)
		return err
	}
	err = p.Wait(ctx)
	p.endStep(err) // the outcome's, or how the wait ended
	return err
}

// signInClient opens the redirect listener and chooses the client, as
// BeginSignInWithOptions says. On error the listener is closed.
func (c *Client) signInClient(ctx context.Context, s Server, o SignInOptions, port int, ep *endpoints) (net.Listener, chosenClient, error) {
	resource, secret := ep.resource, o.ClientSecret
	var ch chosenClient
	switch {
	case s.ClientID != "":
		stored, err := c.loadClient(ctx, s.ID, resource, ep.issuer)
		if err != nil {
			return nil, ch, err
		}
		if secret == "" && stored != nil && stored.Kind == clientPreregistered && stored.ClientID == s.ClientID {
			secret = stored.ClientSecret
		}
		if secret == "" {
			if !publicOK(ep.authMethods) {
				return nil, ch, refuse(refusal.Config, ReasonClientSecretRequired, s.ID, "")
			}
			ch.auth = clientAuth{method: AuthNone, id: s.ClientID}
			break
		}
		m, ok := secretMethod(ep.authMethods)
		if !ok {
			return nil, ch, refuse(refusal.Unsupported, ReasonClientAuthUnsupported, s.ID, c.urls.origin(ep.issuer))
		}
		ch.auth = clientAuth{method: m, id: s.ClientID, secret: secret}
		ch.save = &clientRecord{Kind: clientPreregistered, Server: s.ID, Resource: resource, Issuer: ep.issuer,
			ClientID: s.ClientID, Method: m, ClientSecret: secret}
	case s.ClientMetadataURL != "" && ep.cimd:
		if !cimdURL(s.ClientMetadataURL, s.ID) {
			return nil, ch, refuse(refusal.Config, ReasonURLInvalid, s.ID, "")
		}
		ch.auth = clientAuth{method: AuthNone, id: s.ClientMetadataURL}
	default:
		stored, err := c.loadClient(ctx, s.ID, resource, ep.issuer)
		if err != nil {
			return nil, ch, err
		}
		if stored != nil && stored.Kind == clientRegistered && stored.Method != AuthPrivateKeyJWT && !o.NewRegistration &&
			!stored.expired(c.now()) {
			if p := redirectPort(stored.RedirectURI); p != 0 && (port == 0 || port == p) {
				if ln, err := listen(p); err == nil {
					ch.auth, _ = stored.auth()
					ch.registered = true
					return ln, ch, nil
				}
			}
		}
		ln, err := listen(port)
		if err != nil {
			return nil, ch, refuse(refusal.Transient, ReasonCallbackUnavailable, s.ID, "")
		}
		redirectURI := "http://" + ln.Addr().String() + callbackPath
		cr, err := c.register(ctx, s, resource, ep, redirectURI)
		if err == nil {
			err = c.saveClient(ctx, cr)
		}
		if err != nil {
			_ = ln.Close()
			return nil, ch, err
		}
		ch.auth, _ = cr.auth()
		ch.registered = true
		return ln, ch, nil
	}
	ln, err := listen(port)
	if err != nil {
		return nil, ch, refuse(refusal.Transient, ReasonCallbackUnavailable, s.ID, "")
	}
	return ln, ch, nil
}

// listen opens the redirect listener on loopbackHost:port.
func listen(port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort(loopbackHost, strconv.Itoa(port)))
}

// redirectPort returns the port of a stored loopback redirect URI
// (http://127.0.0.1:PORT/callback), 0 when it is not one.
func redirectPort(raw string) int {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Hostname() != loopbackHost || u.EscapedPath() != callbackPath {
		return 0
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil || p < 1 || p > 65535 {
		return 0
	}
	return p
}

// cimdURL reports whether raw can be a client id metadata document URL: an
// absolute https URL (as canonicalURL checks it) with a path other than
// "/", and no query.
func cimdURL(raw, server string) bool {
	if _, _, err := canonicalURL(raw, server); err != nil {
		return false
	}
	u, err := url.Parse(raw)
	return err == nil && strings.Trim(u.EscapedPath(), "/") != "" && u.RawQuery == "" && !u.ForceQuery
}
