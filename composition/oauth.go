package composition

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// OAuthConfig turns on mcpward's own OAuth client (adapters/oauth) for the
// HTTP definitions that ask for oauth: the Host can then sign the user in
// (Host.SignIn) and every connection to such a server authenticates with
// the stored credential, refreshed under the deployment's Locker. Its
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
}

// Reasons of the OAuth flow of a Host.
const (
	// ReasonOAuthStoreMissing: Config.OAuth is set but the deployment has
	// no token store or no locker (a Custom deployment without them). Class
	// Config; the deployment is not built.
	ReasonOAuthStoreMissing = "oauth_store_missing"
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

// newOAuth returns the OAuth client of the deployment, or nil when
// cfg.OAuth is nil (no sign-in is offered: an oauth definition is refused
// with ReasonOAuthSignInUnavailable). Its requests use f's admitted
// per-origin clients; its credentials live in tokens, refreshes are
// serialized with locker. It returns a *refusal.Error of Class Config,
// ReasonOAuthStoreMissing, when tokens or locker is nil. It is a Wire
// provider.
func newOAuth(tokens ports.TokenStore, locker ports.Locker, f *httptransport.Factory, cfg Config) (*oauth.Client, error) {
	if cfg.OAuth == nil {
		return nil, nil
	}
	if tokens == nil || locker == nil || f == nil {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonOAuthStoreMissing, Detail: "oauth needs a token store and a locker"}
	}
	return oauth.New(oauth.Options{
		Client: func(ctx context.Context, u *url.URL) (*http.Client, error) {
			return f.Client(ctx, u, "")
		},
		Store:       tokens,
		Locker:      locker,
		Now:         cfg.Now,
		LockTimeout: cfg.OAuth.LockTimeout,
		ClientName:  cfg.OAuth.ClientName,

		AllowLoopbackHTTP: cfg.OAuth.AllowLoopbackHTTP,
	})
}

// oauthServer returns the oauth.Server of a materialized definition: its
// id, materialized URL and oauth settings.
func oauthServer(id, rawURL string, o *definition.OAuth) oauth.Server {
	s := oauth.Server{ID: id, URL: rawURL}
	if o != nil {
		s.ClientID = o.ClientID
		s.Scopes = append([]string(nil), o.Scopes...)
		s.CallbackPort = o.CallbackPort
		s.MetadataURL = o.MetadataURL
		s.ClientMetadataURL = o.ClientMetadataURL
	}
	return s
}

// checkOAuth refuses, by name, an oauth definition the OAuth client cannot
// serve: its materialized URL must be an absolute https URL (Class Config,
// oauth.ReasonURLInvalid, Detail saying so). It sends nothing.
func (a *Authentication) checkOAuth(name, rawURL string, o *definition.OAuth) *refusal.Error {
	if a.oauth == nil {
		return nil
	}
	if _, err := a.oauth.Authenticator(oauthServer(name, rawURL, o)); err != nil {
		return &refusal.Error{Class: refusal.Config, Reason: refusal.ReasonOf(err), Server: name,
			Detail: "oauth needs an https URL without userinfo or fragment"}
	}
	return nil
}

// signInServer returns the oauth.Server of the server named name in srcs,
// for SignIn (usable: Evaluate must allow it) or for SignOut and
// SignInState (any definition of that name asking for oauth). It refuses,
// with a *refusal.Error naming name: ReasonOAuthSignInUnavailable when the
// deployment has no OAuth client (Config.OAuth nil), ReasonUnknownServer,
// ReasonNotOAuth, and for usable, ReasonNotUsable.
func (h *Host) signInServer(ctx context.Context, srcs []definition.Source, name string, usable bool) (oauth.Server, error) {
	if h.auth.oauth == nil {
		return oauth.Server{}, oauthRefusal(name)
	}
	s, found := h.resolve(srcs).Server(name)
	if !found || s.Def == nil {
		return oauth.Server{}, refusal.New(refusal.Config, ReasonUnknownServer, name)
	}
	if s.Def.Kind != definition.KindHTTP || (s.Def.OAuth == nil && s.Def.HeadersHelper != nil) {
		return oauth.Server{}, refusal.New(refusal.Config, ReasonNotOAuth, name)
	}
	if usable {
		r, ok := h.Evaluate(ctx, srcs).Server(name)
		if !ok || !r.Usable() {
			return oauth.Server{}, &refusal.Error{Class: refusal.Config, Reason: ReasonNotUsable, Server: name,
				Detail: "server is " + string(r.State) + " (" + r.Reason + ")"}
		}
	}
	t, _, ok := h.target(ctx, srcs, name)
	if !ok {
		return oauth.Server{}, refusal.New(refusal.Config, ReasonNotConnectable, name)
	}
	os := oauthServer(name, t.URL, s.Def.OAuth)
	if os.ClientMetadataURL == "" {
		os.ClientMetadataURL = h.auth.clientMetadataURL
	}
	return os, nil
}

// SignIn signs the user in to the OAuth server named name: discovery,
// client registration when the definition names no client id, the
// authorization URL handed to open (the host opens a browser or prints it;
// it must return promptly), the redirect caught on a loopback listener,
// and the code exchange. The credential is stored only when all of that
// succeeded, replacing an older one. The server must be usable (approved
// where it needs approval), so nothing is sent for a definition the user
// has not accepted.
//
// It refuses as signInServer says, and returns the *refusal.Error of
// adapters/oauth for every failure of the flow (their Reasons are the
// oauth.Reason... constants); ctx bounds the wait for the redirect.
func (h *Host) SignIn(ctx context.Context, srcs []definition.Source, name string, open func(authURL string) error) error {
	s, err := h.signInServer(ctx, srcs, name, true)
	if err != nil {
		return err
	}
	return h.auth.oauth.SignInWith(ctx, s, open)
}

// BeginSignIn starts a sign-in to the OAuth server named name and returns
// it, for a host that drives it itself: show SignIn.URL to the user, then
// SignIn.Wait for the redirect on the loopback listener, or
// SignIn.Complete with the redirect URL the user pasted (from a browser on
// another machine). The caller must Close it. It refuses as SignIn does,
// before anything is sent.
func (h *Host) BeginSignIn(ctx context.Context, srcs []definition.Source, name string) (*oauth.SignIn, error) {
	s, err := h.signInServer(ctx, srcs, name, true)
	if err != nil {
		return nil, err
	}
	return h.auth.oauth.BeginSignIn(ctx, s)
}

// SignOut deletes the stored credential of the OAuth server named name,
// then asks its issuer to revoke it (best effort: the user is signed out
// whatever the issuer answers). It needs no approval: signing out only
// removes. It refuses as signInServer says for a name that is not an
// OAuth server of this deployment.
func (h *Host) SignOut(ctx context.Context, srcs []definition.Source, name string) error {
	s, err := h.signInServer(ctx, srcs, name, false)
	if err != nil {
		return err
	}
	return h.auth.oauth.SignOut(ctx, s)
}

// SignInState returns the sign-in state of the OAuth server named name, a
// fixed word (oauth.SignedIn, oauth.SignedOut, oauth.RefreshNeeded) read
// from the token store without any network request. It refuses as
// signInServer says.
func (h *Host) SignInState(ctx context.Context, srcs []definition.Source, name string) (oauth.State, error) {
	s, err := h.signInServer(ctx, srcs, name, false)
	if err != nil {
		return "", err
	}
	return h.auth.oauth.Status(ctx, s)
}
