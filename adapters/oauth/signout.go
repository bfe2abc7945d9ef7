package oauth

import (
	"context"
	"net/url"

	"github.com/mcpward/mcpward/core/refusal"
)

// State is a fixed word for a server's sign-in state. It is never derived
// from a token, so it can be shown and logged.
type State string

// The States Status reports.
const (
	// SignedIn: a credential is stored and its access token is valid.
	SignedIn State = "signed_in"
	// SignedOut: no credential is stored.
	SignedOut State = "signed_out"
	// RefreshNeeded: the stored access token has expired; the next request
	// refreshes it, or needs a sign-in when there is no refresh token or it
	// is refused.
	RefreshNeeded State = "refresh_needed"
)

// Status reports the sign-in state of s from the stored credential, at
// c's clock. It sends nothing. Errors (with State ""): Class Config,
// ReasonURLInvalid for a URL that is not https; Class Config,
// ReasonCredentialCorrupt for an unreadable credential (SignOut deletes
// it); Class Transient, ReasonStoreUnavailable when the store fails.
func (c *Client) Status(ctx context.Context, s Server) (State, error) {
	resource, _, err := c.urls.canonical(s.URL, s.ID)
	if err != nil {
		return "", err
	}
	rec, err := c.load(ctx, s.ID, resource)
	switch {
	case err != nil:
		return "", err
	case rec == nil:
		return SignedOut, nil
	case rec.valid(c.now()):
		return SignedIn, nil
	}
	return RefreshNeeded, nil
}

// SignOut deletes the credential of s, then its DPoP proof key (tokens
// first), then asks the issuer to revoke the tokens.
//
// The deletes come first, so an authorization server that is down or
// refuses cannot keep the user signed in. Revocation (RFC 7009) is then
// best effort: when the credential names an https RevocationEndpoint, one
// POST of token (the refresh token, else the access token) and
// token_type_hint, the client authenticated as at the token endpoint, is
// sent to it within Options.RequestTimeout (an endpoint that accepts the
// request and never answers cannot hold the sign-out), and its failure, of
// any kind, is ignored — the user is signed out already. Nothing is sent when there is no credential, or when it is
// unreadable (it is deleted all the same). The client registration is kept:
// a later sign-in reuses it.
//
// It returns nil when no credential is stored afterwards. Errors: Class
// Config, ReasonURLInvalid for a URL that is not https; Class Transient,
// ReasonStoreUnavailable when reading or deleting fails (nothing is sent);
// Class Transient "canceled"/"deadline_exceeded" when ctx has ended.
// A refresh in flight in another process when the credential is deleted
// does not bring it back (see Client.saveRefreshed).
func (c *Client) SignOut(ctx context.Context, s Server) error {
	resource, _, err := c.urls.canonical(s.URL, s.ID)
	if err != nil {
		return err
	}
	rec, err := c.load(ctx, s.ID, resource)
	switch {
	case err != nil && refusal.ReasonOf(err) != ReasonCredentialCorrupt:
		return err
	case err == nil && rec == nil:
		return nil
	}
	jkt := ""
	if rec != nil {
		jkt = rec.DPoPJKT
	}
	if err := c.deleteCredential(ctx, s.ID, resource, jkt); err != nil {
		return err
	}
	if rec != nil {
		c.revoke(ctx, rec)
	}
	return nil
}

// revoke POSTs an RFC 7009 revocation of rec's refresh token (else its
// access token) to rec's RevocationEndpoint, if it names an https one,
// the client authenticated as its stored registration says (which a
// sign-out keeps for this). It is best effort: every failure, and the
// answer, is ignored.
func (c *Client) revoke(ctx context.Context, rec *record) {
	if rec.RevocationEndpoint == "" {
		return
	}
	u, err := c.urls.link(rec.RevocationEndpoint, rec.Server)
	if err != nil {
		return
	}
	auth, err := c.authFor(ctx, rec)
	if err != nil {
		return
	}
	form := url.Values{"token": {rec.AccessToken}, "token_type_hint": {"access_token"}}
	if rec.RefreshToken != "" {
		form.Set("token", rec.RefreshToken)
		form.Set("token_type_hint", "refresh_token")
	}
	_, _ = c.postFormAuth(ctx, rec.Server, u, form, auth, rec.Issuer)
}
