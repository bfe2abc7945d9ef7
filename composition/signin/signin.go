// Package signin is the OAuth sign-in of a Host, on adapters/oauth: New
// builds the composition.OAuthClient the profiles that can sign in
// (headless, desktop, shared) wire into their Host, and the functions
// here are the ways in that speak adapters/oauth's own types: Begin and
// BeginWithOptions for a host that drives the redirect itself,
// ClientCredentials, EnterpriseManaged and WorkloadIdentity for sign-ins
// without a browser, State and Discover for what "mcpward login",
// "status" and "doctor" show.
// Host.SignIn and Host.SignOut need no import of this package.
//
// It is a package of its own so that a program whose Host offers no
// sign-in (the memory profile) links no OAuth code: composition itself
// reaches the OAuth client only through the composition.OAuthClient
// interface.
//
// Every function refuses as composition.Host.OAuthTarget does, before
// anything is sent (composition.ReasonOAuthSignInUnavailable when the Host
// has no OAuth client, composition.ReasonUnknownServer,
// composition.ReasonNotOAuth, and for a sign-in
// composition.ReasonNotUsable), and otherwise returns the *refusal.Error
// values of adapters/oauth (their Reasons are the oauth.Reason...
// constants). None of them prints a secret, a token or the server's URL.
package signin

import (
	"context"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/internal/oauthclient"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ReasonForeignClient is the reason (Class Config) the functions of this
// package refuse a Host whose OAuthClient New did not build: they drive
// the adapters/oauth client behind it, which another implementation does
// not have.
const ReasonForeignClient = "oauth_client_foreign"

// New returns the OAuth client of a Host built with cfg on tokens and
// locker, for composition.Ports.OAuth: credentials live in tokens,
// refreshes are serialized with locker, and every request it sends
// (metadata, registration, tokens, revocation) goes through cfg's egress
// policy and TLS settings (cfg.Egress, cfg.HTTP), never through a proxy
// or a redirect. It returns nil when cfg.OAuth is nil (the Host then
// offers no sign-in). It fails with a *refusal.Error of Class Config:
// composition.ReasonOAuthStoreMissing when tokens or locker is nil, or
// adapters/oauth's refusal of the settings. It is a Wire provider.
func New(tokens ports.TokenStore, locker ports.Locker, cfg composition.Config) (composition.OAuthClient, error) {
	if cfg.OAuth == nil {
		return nil, nil
	}
	if tokens == nil || locker == nil {
		return nil, &refusal.Error{Class: refusal.Config, Reason: composition.ReasonOAuthStoreMissing, Detail: "oauth needs a token store and a locker"}
	}
	policy := cfg.Egress
	if policy == nil {
		policy = egress.Default()
	}
	c, err := oauthclient.New(httptransport.New(policy, cfg.HTTP), oauth.Options{
		Store:           tokens,
		Locker:          locker,
		Now:             cfg.Now,
		LockTimeout:     cfg.OAuth.LockTimeout,
		ClientName:      cfg.OAuth.ClientName,
		RequestTimeout:  cfg.OAuth.RequestTimeout,
		ApplicationType: cfg.OAuth.ApplicationType,

		AllowLoopbackHTTP: cfg.OAuth.AllowLoopbackHTTP,
		Step:              composition.OAuthSteps(cfg.TracerProvider),
	}, cfg.OAuth.DisableDPoP)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// target resolves name for use and returns the adapters/oauth client of
// h with the oauth.Server it is about.
func target(ctx context.Context, h *composition.Host, srcs []definition.Source, name string, use composition.OAuthUse) (*oauth.Client, oauth.Server, error) {
	t, err := h.OAuthTarget(ctx, srcs, name, use)
	if err != nil {
		return nil, oauth.Server{}, err
	}
	c, ok := t.Client.(*oauthclient.Client)
	if !ok {
		return nil, oauth.Server{}, &refusal.Error{Class: refusal.Config, Reason: ReasonForeignClient, Server: name,
			Detail: "the host's OAuth client was not built by signin.New"}
	}
	return c.OAuth(), c.Server(t.ServerID, t.URL, t.OAuth), nil
}

// Begin starts a sign-in to the OAuth server named name and returns it,
// for a host that drives it itself: show SignIn.URL to the user, then
// SignIn.Wait for the redirect on the loopback listener, or
// SignIn.Complete with the redirect URL the user pasted (from a browser on
// another machine). The caller must Close it. The server must be usable
// (approved where it needs approval). It refuses as the package
// documentation says, before anything is sent.
func Begin(ctx context.Context, h *composition.Host, srcs []definition.Source, name string) (*oauth.SignIn, error) {
	c, s, err := target(ctx, h, srcs, name, composition.OAuthUseSignIn)
	if err != nil {
		return nil, err
	}
	return c.BeginSignIn(ctx, s)
}

// BeginWithOptions is Begin with the host's options for this one sign-in
// (oauth.SignInOptions): the secret of a pre-registered client (the
// definition's oauth.clientId; a definition never holds a secret), the
// loopback port of the redirect listener, or a fresh registration. The
// secret is kept in the token store with the client once the sign-in
// succeeds, and never appears in an error or output. Its other errors are
// those of oauth.Client.BeginSignInWithOptions
// (oauth.ReasonCallbackPortInvalid, oauth.ReasonClientSecretRequired,
// discovery's *oauth.DiscoveryError, ...).
func BeginWithOptions(ctx context.Context, h *composition.Host, srcs []definition.Source, name string, o oauth.SignInOptions) (*oauth.SignIn, error) {
	c, s, err := target(ctx, h, srcs, name, composition.OAuthUseSignIn)
	if err != nil {
		return nil, err
	}
	return c.BeginSignInWithOptions(ctx, s, o)
}

// ClientCredentials signs in to the server named name without a user: the
// OAuth client credentials grant, the client authenticated with cc (a
// client secret, client_secret_basic or _post; or a private key,
// private_key_jwt). cc comes from the host (a flag, a file, stdin), never
// from a definition; it is kept in the token store with the tokens, so
// connections renew the token by the same grant. Its other errors are
// those of oauth.Client.SignInClientCredentials.
func ClientCredentials(ctx context.Context, h *composition.Host, srcs []definition.Source, name string, cc oauth.ClientCredentials) error {
	c, s, err := target(ctx, h, srcs, name, composition.OAuthUseSignIn)
	if err != nil {
		return err
	}
	return c.SignInClientCredentials(ctx, s, cc)
}

// EnterpriseManaged signs in to the server named name with the user's
// identity from an enterprise identity provider, without a browser (MCP
// Enterprise-Managed Authorization: the user's ID token exchanged at the
// IdP for an identity assertion grant, then the JWT-bearer grant at the
// server's authorization server; see
// oauth.Client.SignInEnterpriseManaged). x comes from the host, never
// from a definition; its tokens and secrets never appear in an error or
// output.
func EnterpriseManaged(ctx context.Context, h *composition.Host, srcs []definition.Source, name string, x oauth.EnterpriseManaged) error {
	c, s, err := target(ctx, h, srcs, name, composition.OAuthUseSignIn)
	if err != nil {
		return err
	}
	return c.SignInEnterpriseManaged(ctx, s, x)
}

// CrossApp is EnterpriseManaged.
//
// Deprecated: use EnterpriseManaged, the name the MCP specification gives
// the flow.
func CrossApp(ctx context.Context, h *composition.Host, srcs []definition.Source, name string, x oauth.CrossApp) error {
	return EnterpriseManaged(ctx, h, srcs, name, x)
}

// WorkloadIdentity signs in to the server named name as a workload, with
// no person and no browser (MCP workload identity federation): the JWT
// the workload's platform issues it (a token file, or a command's output,
// as w says: a Kubernetes projected service account token, a CI job's
// OIDC token) is checked (issuer, audience, expiry) and presented with the
// JWT-bearer grant; it is never stored, and a token file is read again
// when the access token is renewed. See
// oauth.Client.SignInWorkloadIdentity for its refusals.
func WorkloadIdentity(ctx context.Context, h *composition.Host, srcs []definition.Source, name string, w oauth.WorkloadIdentity) error {
	c, s, err := target(ctx, h, srcs, name, composition.OAuthUseSignIn)
	if err != nil {
		return err
	}
	return c.SignInWorkloadIdentity(ctx, s, w)
}

// State returns the sign-in state of the OAuth server named name, a fixed
// word (oauth.SignedIn, oauth.SignedOut, oauth.RefreshNeeded) read from
// the token store without any network request. The server need not be
// usable.
func State(ctx context.Context, h *composition.Host, srcs []definition.Source, name string) (oauth.State, error) {
	c, s, err := target(ctx, h, srcs, name, composition.OAuthUseAccount)
	if err != nil {
		return "", err
	}
	return c.Status(ctx, s)
}

// Discover runs the OAuth discovery a sign-in to the server named name
// would run, and nothing else: no registration, no sign-in, no request to
// the MCP server itself (oauth.Client.Discover). It follows the challenge
// a 401 of that server carried, when one was recorded (by this Host, or by
// any process sharing its token store). It is what "mcpward doctor NAME"
// prints: the returned Report, never nil when the error is a discovery
// failure, lists every location tried with its projected URL, status,
// outcome and a hint, and holds no secret. The server need not be usable;
// on a refusal the report is nil. Discovery failures are the
// *oauth.DiscoveryError of adapters/oauth.
func Discover(ctx context.Context, h *composition.Host, srcs []definition.Source, name string) (*oauth.Report, error) {
	c, s, err := target(ctx, h, srcs, name, composition.OAuthUseAccount)
	if err != nil {
		return nil, err
	}
	return c.Discover(ctx, s)
}
