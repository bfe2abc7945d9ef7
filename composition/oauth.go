package composition

import (
	"context"
	"time"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// OAuthConfig turns on mcpward's own OAuth client (adapters/oauth, wired
// in as the Host's OAuthClient by package composition/signin) for the
// HTTP definitions that ask for oauth: the Host can then sign the user in
// (Host.SignIn, signin.Begin) and every connection to such a server
// authenticates with the stored credential, refreshed under the
// deployment's Locker. Its
// requests (metadata, registration, tokens, revocation) go through the
// deployment's egress policy and TLS settings (Config.Egress, Config.HTTP),
// never through a proxy or a redirect.
type OAuthConfig struct {
	// ClientName is the client_name of a dynamic client registration; ""
	// means oauth.DefaultClientName.
	ClientName string
	// LockTimeout bounds the wait for a credential's refresh lock; 0 means
	// oauth.DefaultLockTimeout.
	LockTimeout time.Duration
	// AllowLoopbackHTTP is for tests and the MCP conformance client only
	// (no CLI flag sets it): OAuth then also works with http URLs on
	// exactly localhost, 127.0.0.1 and [::1] (oauth.Options.AllowLoopbackHTTP).
	// false means https everywhere, as the MCP authorization spec requires.
	AllowLoopbackHTTP bool
	// ClientMetadataURL, when set, is the https URL of this host's OAuth
	// client id metadata document: a sign-in to a server without a
	// pre-registered client id uses it as its client_id where the
	// authorization server supports such documents
	// (client_id_metadata_document_supported), instead of registering. A
	// definition's oauth.clientMetadataUrl wins over it. "" means dynamic
	// registration only (unless the definition names a document).
	ClientMetadataURL string
	// ApplicationType is the application_type a dynamic registration
	// declares (MCP SEP-837): "" or "native" for a host on the user's
	// device, whose redirect is the loopback listener; "web" only for a
	// host that runs on a web server. Anything else is refused when the
	// Host is built.
	ApplicationType string
	// RequestTimeout bounds every OAuth request (metadata, registration,
	// tokens, token exchange, revocation) from its start to the end of its
	// answer; 0 means oauth.DefaultRequestTimeout (30 s).
	RequestTimeout time.Duration
	// DisableDPoP, when not nil, turns DPoP (RFC 9449) off for each server
	// id it reports true for: a sign-in to it gets Bearer tokens even
	// where the authorization server advertises DPoP. nil (the default)
	// binds every sign-in's tokens to a proof key wherever the
	// authorization server offers it (ES256), so a stolen token is useless
	// without the key. A definition cannot turn it off.
	DisableDPoP func(serverID string) bool
}

// Reasons of the OAuth flow of a Host.
const (
	// ReasonOAuthStoreMissing: Config.OAuth is set but the deployment has
	// no token store or no locker (a Custom deployment without them). Class
	// Config; the deployment is not built.
	ReasonOAuthStoreMissing = "oauth_store_missing"
	// ReasonOAuthClientMissing: Config.OAuth is set but New was given no
	// OAuthClient (Ports.OAuth): the root package links no OAuth code of
	// its own. Build the Host with a profile that signs in (headless,
	// desktop, shared), or set Ports.OAuth to what signin.New returns.
	// Class Config; the deployment is not built.
	ReasonOAuthClientMissing = "oauth_client_missing"
	// ReasonSignInRequired: a connection to an OAuth server failed because
	// nobody signed in to it, or its credential can no longer be refreshed
	// (Class AuthRequired); a sign-in cures it. The word of
	// adapters/oauth's ReasonSignInRequired.
	ReasonSignInRequired = "oauth_sign_in_required"
	// ReasonStepUpRequired: the server refused the credential because it
	// wants more scope than was granted (Class AuthRequired); a new sign-in
	// asks for it. The word of adapters/oauth's ReasonStepUpRequired.
	ReasonStepUpRequired = "step_up_required"
	// ReasonNotOAuth: SignIn, SignOut or SignInState named a server that
	// cannot sign in with OAuth: not an HTTP server, or one whose headers
	// come from a headersHelper. Class Config. An HTTP definition without
	// "oauth" can: its server answers with a Bearer challenge (see
	// oauth.ReasonSignInRequired), and once signed in its connections
	// carry the stored credential unless its headers set Authorization.
	ReasonNotOAuth = "not_oauth"
	// ReasonNotUsable: SignIn named a server Evaluate does not allow (not
	// approved, refused, blocked, ...): nothing is sent for it. Class
	// Config; the Detail names its state.
	ReasonNotUsable = "not_usable"
)

// OAuthClient is the OAuth client a Host signs users in and authenticates
// connections with. Package composition/signin provides the one built on
// adapters/oauth (signin.New), which the headless, desktop and shared
// profiles wire in; the root package links no OAuth implementation, so a
// program whose profile offers no sign-in (memory) links none either.
//
// A server is named by its id, its materialized URL and its definition's
// oauth settings (nil for a definition without "oauth"). The URL may
// carry secrets: an implementation never prints it, nor any credential.
// Every method is safe for concurrent use; failures are *refusal.Error
// values whose Reason a host branches on.
type OAuthClient interface {
	// Authenticator returns the Authenticator of the connections to the
	// server: it adds the stored credential, refreshes it when it
	// expires, and decides on a refused one. It refuses, before anything
	// is sent, a URL it cannot serve (Class Config). onRefusal, when not
	// nil, is called with the Authenticator's refusal each time it
	// declines to retry a request the server refused for a reason of Class
	// AuthRequired or AuthRefused (a step-up, a moved authorization
	// server, a refresh token refused, ...): the transport reports every
	// refused credential as AuthRefused auth_refused, and this is how the
	// reason reaches the host.
	Authenticator(id, rawURL string, o *definition.OAuth, onRefusal func(*refusal.Error)) (ports.Authenticator, error)
	// SignedIn reports whether a credential for the server is stored
	// (fresh, or to be refreshed), reading the token store only; false
	// when it cannot tell.
	SignedIn(ctx context.Context, id, rawURL string) bool
	// SaveChallenge takes the WWW-Authenticate value of a 401 or 403
	// answer of the server. A Bearer challenge is kept as evidence for
	// the server's next discovery and sign-in (in the token store, so
	// other processes follow it too) and SaveChallenge reports true;
	// anything else is ignored (false). It sends nothing.
	SaveChallenge(ctx context.Context, id, rawURL string, status int, wwwAuthenticate string) bool
	// SignIn signs the user in to the server (see Host.SignIn).
	SignIn(ctx context.Context, id, rawURL string, o *definition.OAuth, open func(authURL string) error) error
	// SignOut deletes the server's stored credential, then asks its
	// issuer to revoke it (best effort; see Host.SignOut).
	SignOut(ctx context.Context, id, rawURL string, o *definition.OAuth) error
}

// newOAuth returns p.OAuth, the OAuthClient of the deployment, or nil
// when cfg.OAuth is nil (no sign-in is offered: an oauth definition is
// refused with ReasonOAuthSignInUnavailable). It returns a *refusal.Error
// of Class Config when cfg.OAuth is set and p has no token store or no
// locker (ReasonOAuthStoreMissing) or no OAuth client
// (ReasonOAuthClientMissing). It is a Wire provider.
func newOAuth(p Ports, cfg Config) (OAuthClient, error) {
	if cfg.OAuth == nil {
		return nil, nil
	}
	if p.Tokens == nil || p.Locker == nil {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonOAuthStoreMissing, Detail: "oauth needs a token store and a locker"}
	}
	oc := p.OAuth
	if oc == nil {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonOAuthClientMissing,
			Detail: "oauth is configured but the host was built without an OAuth client: use a profile that signs in, or signin.New"}
	}
	return oc, nil
}

// checkOAuth refuses, by name, an oauth definition the OAuth client cannot
// serve: its materialized URL must be an absolute https URL (Class Config,
// the client's reason, Detail saying so). It sends nothing.
func (a *Authentication) checkOAuth(name, rawURL string, o *definition.OAuth) *refusal.Error {
	if a.oauth == nil {
		return nil
	}
	if _, err := a.oauth.Authenticator(name, rawURL, o, nil); err != nil {
		reason := refusal.ReasonOf(err)
		if reason == "" { // a host's own client failing without a reason
			reason = ReasonOAuthSignInUnavailable
		}
		return &refusal.Error{Class: refusal.Config, Reason: reason, Server: name,
			Detail: "oauth needs an https URL without userinfo or fragment"}
	}
	return nil
}

// OAuthUse says what Host.OAuthTarget resolves a server for.
type OAuthUse int

// The uses of Host.OAuthTarget.
const (
	// OAuthUseSignIn: a sign-in. The server must be usable (Evaluate
	// allows it: approved where it needs approval), so nothing is sent for
	// a definition the user has not accepted.
	OAuthUseSignIn OAuthUse = iota + 1
	// OAuthUseAccount: a sign-out, a sign-in state or a discovery: any
	// OAuth-capable HTTP definition of that name, usable or not (signing
	// out only removes; the state reads the token store).
	OAuthUseAccount
)

// OAuthTarget is a server an OAuth operation is about, as
// Host.OAuthTarget resolved it: its id, materialized URL and oauth
// settings (with Config.OAuth.ClientMetadataURL filled in when the
// definition names no client metadata document), and the Host's
// OAuthClient. URL may carry secrets: never print it.
type OAuthTarget struct {
	Client   OAuthClient
	ServerID string
	URL      string
	OAuth    *definition.OAuth
}

// OAuthTarget resolves the server named name in srcs for an OAuth
// operation of the given use: what package signin hands the Host's
// OAuthClient. It refuses, with a *refusal.Error naming name and before
// anything is sent: ReasonOAuthSignInUnavailable when the Host has no
// OAuthClient (Config.OAuth nil, or the memory profile);
// ReasonUnknownServer; ReasonNotOAuth (not an HTTP server, or one whose
// headers come from a headersHelper); for OAuthUseSignIn, ReasonNotUsable;
// and ReasonNotConnectable when its target cannot be materialized.
func (h *Host) OAuthTarget(ctx context.Context, srcs []definition.Source, name string, use OAuthUse) (OAuthTarget, error) {
	if h.auth.oauth == nil {
		return OAuthTarget{}, oauthRefusal(name)
	}
	s, found := h.resolve(srcs).Server(name)
	if !found || s.Def == nil {
		return OAuthTarget{}, refusal.New(refusal.Config, ReasonUnknownServer, name)
	}
	if s.Def.Kind != definition.KindHTTP || (s.Def.OAuth == nil && s.Def.HeadersHelper != nil) {
		return OAuthTarget{}, refusal.New(refusal.Config, ReasonNotOAuth, name)
	}
	if use == OAuthUseSignIn {
		r, ok := h.Evaluate(ctx, srcs).Server(name)
		if !ok || !r.Usable() {
			return OAuthTarget{}, &refusal.Error{Class: refusal.Config, Reason: ReasonNotUsable, Server: name,
				Detail: "server is " + string(r.State) + " (" + r.Reason + ")"}
		}
	}
	t, _, ok := h.target(ctx, srcs, name)
	if !ok {
		return OAuthTarget{}, refusal.New(refusal.Config, ReasonNotConnectable, name)
	}
	var o *definition.OAuth
	if s.Def.OAuth != nil {
		c := *s.Def.OAuth
		c.Scopes = append([]string(nil), c.Scopes...)
		o = &c
	}
	if cimd := h.auth.clientMetadataURL; cimd != "" && (o == nil || o.ClientMetadataURL == "") {
		if o == nil {
			o = &definition.OAuth{}
		}
		o.ClientMetadataURL = cimd
	}
	return OAuthTarget{Client: h.auth.oauth, ServerID: name, URL: t.URL, OAuth: o}, nil
}

// SignIn signs the user in to the OAuth server named name: discovery,
// client registration when the definition names no client id, the
// authorization URL handed to open (the host opens a browser or prints it;
// it must return promptly), the redirect caught on a loopback listener,
// and the code exchange. The credential is stored only when all of that
// succeeded, replacing an older one. The server must be usable (approved
// where it needs approval), so nothing is sent for a definition the user
// has not accepted. Package signin has the other ways in (signin.Begin for
// a host that drives the redirect itself, client credentials, cross-app
// access) and the sign-in state.
//
// It refuses as OAuthTarget says for OAuthUseSignIn, and returns the
// *refusal.Error of the OAuth client for every failure of the flow (the
// adapters/oauth Reason... words); ctx bounds the wait for the redirect.
func (h *Host) SignIn(ctx context.Context, srcs []definition.Source, name string, open func(authURL string) error) error {
	t, err := h.OAuthTarget(ctx, srcs, name, OAuthUseSignIn)
	if err != nil {
		return err
	}
	return t.Client.SignIn(ctx, t.ServerID, t.URL, t.OAuth, open)
}

// SignOut deletes the stored credential of the OAuth server named name,
// then asks its issuer to revoke it (best effort: the user is signed out
// whatever the issuer answers). It needs no approval: signing out only
// removes. It refuses as OAuthTarget says for OAuthUseAccount.
func (h *Host) SignOut(ctx context.Context, srcs []definition.Source, name string) error {
	t, err := h.OAuthTarget(ctx, srcs, name, OAuthUseAccount)
	if err != nil {
		return err
	}
	return t.Client.SignOut(ctx, t.ServerID, t.URL, t.OAuth)
}
