// Package oauthclient is the OAuth client of a Host, built on
// adapters/oauth: it implements composition.OAuthClient (the seam through
// which the root package signs in without linking any OAuth code) and
// gives package composition/signin the adapters/oauth client behind it.
//
// It imports neither composition nor signin, so composition's own tests
// can build a Host with it.
package oauthclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Client is the OAuth client of one Host. It is safe for concurrent use.
type Client struct {
	c *oauth.Client
	// noDPoP is the Host's OAuthConfig.DisableDPoP; nil for none.
	noDPoP func(serverID string) bool
}

// New returns the Client whose requests (metadata, registration, tokens,
// revocation) go through f's admitted per-origin clients (the egress
// policy and TLS settings of the Host's HTTP transports; never a proxy or
// a redirect), configured by o (o.Client is replaced). noDPoP, when not
// nil, names the servers whose sign-ins get Bearer tokens even where the
// authorization server offers DPoP (oauth.Server.DisableDPoP). It fails as
// oauth.New does.
func New(f *httptransport.Factory, o oauth.Options, noDPoP func(serverID string) bool) (*Client, error) {
	o.Client = func(ctx context.Context, u *url.URL) (*http.Client, error) {
		return f.Client(ctx, u, "")
	}
	c, err := oauth.New(o)
	if err != nil {
		return nil, err
	}
	return &Client{c: c, noDPoP: noDPoP}, nil
}

// OAuth returns the adapters/oauth client behind c.
func (c *Client) OAuth() *oauth.Client { return c.c }

// Server returns the oauth.Server of a materialized definition: its id,
// materialized URL and oauth settings (nil for none), with DPoP turned
// off when the Host says so for id.
func (c *Client) Server(id, rawURL string, o *definition.OAuth) oauth.Server {
	s := Server(id, rawURL, o)
	s.DisableDPoP = c.noDPoP != nil && c.noDPoP(id)
	return s
}

// Server returns the oauth.Server of a materialized definition: its id,
// materialized URL and oauth settings (nil for none).
func Server(id, rawURL string, o *definition.OAuth) oauth.Server {
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

// Authenticator implements composition.OAuthClient: the
// oauth.Authenticator of the server, whose refusals of Class AuthRequired
// or AuthRefused (a *oauth.StepUpError among them) are handed to onRefusal
// (when not nil).
func (c *Client) Authenticator(id, rawURL string, o *definition.OAuth, onRefusal func(*refusal.Error)) (ports.Authenticator, error) {
	au, err := c.c.Authenticator(c.Server(id, rawURL, o))
	if err != nil {
		return nil, err
	}
	if onRefusal == nil {
		return au, nil
	}
	return &refusalWatch{Authenticator: au, onRefusal: onRefusal}, nil
}

// refusalWatch is an OAuth Authenticator handing onRefusal each refusal of
// Class AuthRequired or AuthRefused it declines to retry with.
type refusalWatch struct {
	*oauth.Authenticator
	onRefusal func(*refusal.Error)
}

// Refused implements ports.Authenticator.
func (w *refusalWatch) Refused(ctx context.Context, r ports.AuthRefusal) (bool, error) {
	retry, err := w.Authenticator.Refused(ctx, r)
	var re *refusal.Error
	if !retry && errors.As(err, &re) && (re.Class == refusal.AuthRequired || re.Class == refusal.AuthRefused) {
		w.onRefusal(re)
	}
	return retry, err
}

// SignedIn implements composition.OAuthClient: the stored credential's
// state is oauth.SignedIn or oauth.RefreshNeeded.
func (c *Client) SignedIn(ctx context.Context, id, rawURL string) bool {
	st, err := c.c.Status(ctx, c.Server(id, rawURL, nil))
	return err == nil && (st == oauth.SignedIn || st == oauth.RefreshNeeded)
}

// SaveChallenge implements composition.OAuthClient: a challenge
// oauth.ParseChallenge accepts (strict; Bearer, else DPoP) is saved with
// oauth.Client.SaveChallenge (a store failure, or a URL the client
// refuses, leaves nothing saved but still reports the challenge).
func (c *Client) SaveChallenge(ctx context.Context, id, rawURL string, status int, wwwAuthenticate string) bool {
	ch, ok := oauth.ParseChallenge(status, wwwAuthenticate)
	if !ok {
		return false
	}
	_ = c.c.SaveChallenge(ctx, c.Server(id, rawURL, nil), ch)
	return true
}

// SignIn implements composition.OAuthClient (oauth.Client.SignInWith).
func (c *Client) SignIn(ctx context.Context, id, rawURL string, o *definition.OAuth, open func(authURL string) error) error {
	return c.c.SignInWith(ctx, c.Server(id, rawURL, o), open)
}

// SignOut implements composition.OAuthClient (oauth.Client.SignOut).
func (c *Client) SignOut(ctx context.Context, id, rawURL string, o *definition.OAuth) error {
	return c.c.SignOut(ctx, c.Server(id, rawURL, o))
}
