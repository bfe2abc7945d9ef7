package composition

import (
	"context"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition/internal/oauthclient"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// Package signin, as this package's internal tests use it: signin imports
// composition, so they cannot. testOAuth is signin.New, and the methods
// below are signin's functions (signin.State is SignInState, signin.Begin
// BeginSignIn, and so on), each doing what that function does; signin's
// own tests check the functions themselves.

// testOAuth is signin.New.
func testOAuth(tokens ports.TokenStore, locker ports.Locker, cfg Config) (OAuthClient, error) {
	if cfg.OAuth == nil || tokens == nil || locker == nil {
		return nil, nil
	}
	c, err := oauthclient.New(newHTTPFactory(cfg), oauth.Options{
		Store:           tokens,
		Locker:          locker,
		Now:             cfg.Now,
		LockTimeout:     cfg.OAuth.LockTimeout,
		ClientName:      cfg.OAuth.ClientName,
		RequestTimeout:  cfg.OAuth.RequestTimeout,
		ApplicationType: cfg.OAuth.ApplicationType,

		AllowLoopbackHTTP: cfg.OAuth.AllowLoopbackHTTP,
		Step:              OAuthSteps(cfg.TracerProvider),
	}, cfg.OAuth.DisableDPoP)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// oauthOf is signin's target.
func (h *Host) oauthOf(ctx context.Context, srcs []definition.Source, name string, use OAuthUse) (*oauth.Client, oauth.Server, error) {
	t, err := h.OAuthTarget(ctx, srcs, name, use)
	if err != nil {
		return nil, oauth.Server{}, err
	}
	c := t.Client.(*oauthclient.Client)
	return c.OAuth(), c.Server(t.ServerID, t.URL, t.OAuth), nil
}

// SignInState is signin.State.
func (h *Host) SignInState(ctx context.Context, srcs []definition.Source, name string) (oauth.State, error) {
	c, s, err := h.oauthOf(ctx, srcs, name, OAuthUseAccount)
	if err != nil {
		return "", err
	}
	return c.Status(ctx, s)
}

// DiscoverOAuth is signin.Discover.
func (h *Host) DiscoverOAuth(ctx context.Context, srcs []definition.Source, name string) (*oauth.Report, error) {
	c, s, err := h.oauthOf(ctx, srcs, name, OAuthUseAccount)
	if err != nil {
		return nil, err
	}
	return c.Discover(ctx, s)
}

// BeginSignIn is signin.Begin.
func (h *Host) BeginSignIn(ctx context.Context, srcs []definition.Source, name string) (*oauth.SignIn, error) {
	c, s, err := h.oauthOf(ctx, srcs, name, OAuthUseSignIn)
	if err != nil {
		return nil, err
	}
	return c.BeginSignIn(ctx, s)
}

// BeginSignInWithOptions is signin.BeginWithOptions.
func (h *Host) BeginSignInWithOptions(ctx context.Context, srcs []definition.Source, name string, o oauth.SignInOptions) (*oauth.SignIn, error) {
	c, s, err := h.oauthOf(ctx, srcs, name, OAuthUseSignIn)
	if err != nil {
		return nil, err
	}
	return c.BeginSignInWithOptions(ctx, s, o)
}

// SignInClientCredentials is signin.ClientCredentials.
func (h *Host) SignInClientCredentials(ctx context.Context, srcs []definition.Source, name string, cc oauth.ClientCredentials) error {
	c, s, err := h.oauthOf(ctx, srcs, name, OAuthUseSignIn)
	if err != nil {
		return err
	}
	return c.SignInClientCredentials(ctx, s, cc)
}

// SignInEnterpriseManaged is signin.EnterpriseManaged.
func (h *Host) SignInEnterpriseManaged(ctx context.Context, srcs []definition.Source, name string, x oauth.EnterpriseManaged) error {
	c, s, err := h.oauthOf(ctx, srcs, name, OAuthUseSignIn)
	if err != nil {
		return err
	}
	return c.SignInEnterpriseManaged(ctx, s, x)
}

// SignInWorkloadIdentity is signin.WorkloadIdentity.
func (h *Host) SignInWorkloadIdentity(ctx context.Context, srcs []definition.Source, name string, w oauth.WorkloadIdentity) error {
	c, s, err := h.oauthOf(ctx, srcs, name, OAuthUseSignIn)
	if err != nil {
		return err
	}
	return c.SignInWorkloadIdentity(ctx, s, w)
}
