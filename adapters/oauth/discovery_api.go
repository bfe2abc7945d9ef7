package oauth

import (
	"context"
	"slices"
)

// Discover runs discovery for s as BeginSignIn does, with the challenge
// recorded for s (RecordChallenge), and nothing else: no registration, no
// sign-in, no request to the MCP server itself. It is what doctor shows.
// It returns the Report, never nil, with Scopes set to what a sign-in
// would request now when discovery succeeded, and discovery's error
// (the refusals of BeginSignIn's discovery, as a *DiscoveryError). Safe
// for concurrent use.
func (c *Client) Discover(ctx context.Context, s Server) (*Report, error) {
	rep := &Report{Server: s.ID}
	_, scopes, err := c.prepare(ctx, s, rep)
	if err != nil {
		return ReportOf(err), err
	}
	rep.Scopes = scopes
	return rep, nil
}

// prepare runs discovery for s with its recorded evidence into rep (a new
// Report when nil) and returns the endpoints and the scopes a sign-in
// requests (signInScopes; the stored credential's granted scope is read
// only when a step-up is pending, and a store failure then only leaves it
// out). A discovery error is returned as a *DiscoveryError carrying rep.
func (c *Client) prepare(ctx context.Context, s Server, rep *Report) (*endpoints, []string, error) {
	if rep == nil {
		rep = &Report{Server: s.ID}
	}
	var ev evidence
	if resource, _, err := c.urls.canonical(s.URL, s.ID); err == nil {
		ev = c.evidenceOf(storeKey(s.ID, resource))
	}
	ep, err := c.discover(ctx, s, ev.challenge, rep)
	if err != nil {
		return nil, nil, &DiscoveryError{Err: err, Report: rep}
	}
	var granted []string
	if len(ev.stepUp) > 0 {
		if rec, err := c.load(ctx, s.ID, ep.resource); err == nil && rec != nil {
			granted = scopeList(rec.Scope)
		}
	}
	return ep, slices.Clip(signInScopes(s, ep, ev, granted)), nil
}
