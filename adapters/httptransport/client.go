package httptransport

import (
	"context"
	"net/http"
	"net/url"

	"github.com/mcpward/mcpward/core/refusal"
)

// Client returns a plain http.Client for requests to u's origin only,
// admitted as a transport is: the policy admits u first (nothing is
// constructed when it refuses: Class Refused, ReasonEgressRefused or the
// policy's reason), every dialled address is admitted at dial time, there
// is no proxy, a redirect is refused (ReasonRedirectRefused) and a request
// for another origin is refused before it leaves (ReasonOriginMismatch).
// It adds no header and no authentication; response bodies are not capped
// (the caller bounds its reads). Errors name server and the origin.
//
// It is the client a deployment's OAuth flow uses for metadata, token,
// registration and revocation requests (adapters/oauth's ClientFunc).
func (f *Factory) Client(ctx context.Context, u *url.URL, server string) (*http.Client, error) {
	scheme, origin, err := f.admit(ctx, u, server)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Transport:     &originOnly{origin: origin, server: server, base: f.baseTransport(scheme, u.Hostname(), server, origin)},
		CheckRedirect: refuseRedirects(server, origin),
	}, nil
}

// originOnly sends requests for one origin and refuses every other.
type originOnly struct {
	origin string
	server string
	base   http.RoundTripper
}

// RoundTrip sends req when its URL is of the admitted origin, without
// userinfo; otherwise it closes the body and refuses (ReasonOriginMismatch).
func (o *originOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.User != nil || originOf(req.URL) != o.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, refusal.New(refusal.Refused, ReasonOriginMismatch, o.server).WithOrigin(o.origin)
	}
	return o.base.RoundTrip(req)
}
