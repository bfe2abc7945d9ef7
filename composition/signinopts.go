package composition

import (
	"context"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/definition"
)

// BeginSignInWithOptions is BeginSignIn with the host's options for this
// one sign-in (oauth.SignInOptions): the secret of a pre-registered client
// (the definition's oauth.clientId; a definition never holds a secret),
// the loopback port of the redirect listener, or a fresh registration. The
// secret is kept in the token store with the client once the sign-in
// succeeds, and never appears in an error or output. It refuses as SignIn
// does, before anything is sent; its other errors are those of
// oauth.Client.BeginSignInWithOptions (oauth.ReasonCallbackPortInvalid,
// oauth.ReasonClientSecretRequired, discovery's *oauth.DiscoveryError, ...).
func (h *Host) BeginSignInWithOptions(ctx context.Context, srcs []definition.Source, name string, o oauth.SignInOptions) (*oauth.SignIn, error) {
	s, err := h.signInServer(ctx, srcs, name, true)
	if err != nil {
		return nil, err
	}
	return h.auth.oauth.BeginSignInWithOptions(ctx, s, o)
}

// SignInClientCredentials signs in to the server named name without a
// user: the OAuth client credentials grant, the client authenticated with
// cc (a client secret, client_secret_basic or _post; or a private key,
// private_key_jwt). cc comes from the host (a flag, a file, stdin), never
// from a definition; it is kept in the token store with the tokens, so
// connections renew the token by the same grant. It refuses as SignIn
// does, before anything is sent; its other errors are those of
// oauth.Client.SignInClientCredentials.
func (h *Host) SignInClientCredentials(ctx context.Context, srcs []definition.Source, name string, cc oauth.ClientCredentials) error {
	s, err := h.signInServer(ctx, srcs, name, true)
	if err != nil {
		return err
	}
	return h.auth.oauth.SignInClientCredentials(ctx, s, cc)
}

// SignInCrossApp signs in to the server named name with the user's
// identity from an enterprise identity provider, without a browser
// (cross-app access: a token exchange at the IdP, then the JWT bearer
// grant; see oauth.Client.SignInCrossApp). It refuses as SignIn does,
// before anything is sent.
func (h *Host) SignInCrossApp(ctx context.Context, srcs []definition.Source, name string, x oauth.CrossApp) error {
	s, err := h.signInServer(ctx, srcs, name, true)
	if err != nil {
		return err
	}
	return h.auth.oauth.SignInCrossApp(ctx, s, x)
}
