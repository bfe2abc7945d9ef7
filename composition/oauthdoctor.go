package composition

import (
	"context"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/definition"
)

// DiscoverOAuth runs the OAuth discovery a sign-in to the server named
// name would run, and nothing else: no registration, no sign-in, no
// request to the MCP server itself (oauth.Client.Discover). It follows the
// challenge a 401 of that server carried, when one was recorded (by this
// Host, or by any process sharing its token store). It is what "mcpward
// doctor NAME" prints: the returned Report, never nil when the error is a
// discovery failure, lists every location tried with its projected URL,
// status, outcome and a hint, and holds no secret.
//
// It refuses, before anything is sent, as SignOut does (a name that is not
// an OAuth-capable HTTP server of this deployment: ReasonUnknownServer,
// ReasonNotOAuth, ReasonOAuthSignInUnavailable); the report is then nil.
// Discovery failures are the *oauth.DiscoveryError of adapters/oauth.
func (h *Host) DiscoverOAuth(ctx context.Context, srcs []definition.Source, name string) (*oauth.Report, error) {
	s, err := h.signInServer(ctx, srcs, name, false)
	if err != nil {
		return nil, err
	}
	return h.auth.oauth.Discover(ctx, s)
}
