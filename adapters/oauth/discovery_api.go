package oauth

import (
	"context"
	"net/http"
)

// Discover runs discovery for s as BeginSignIn does, with the challenge
// recorded for s (RecordChallenge, or SaveChallenge by any process sharing
// the store), and nothing else: no registration, no sign-in, no request to
// the MCP server itself. It is what doctor shows. It returns the Report,
// never nil, with Scopes set to what a sign-in would request now when
// discovery succeeded, and discovery's error (a *DiscoveryError, as
// BeginSignIn's). Safe for concurrent use.
func (c *Client) Discover(ctx context.Context, s Server) (*Report, error) {
	rep := &Report{Server: s.ID}
	ep, err := c.prepare(ctx, s, rep, "")
	if err != nil {
		return rep, err
	}
	rep.Scopes = ep.request
	return rep, nil
}

// discover is the discovery of every sign-in of s (interactive, headless,
// or finding its client registration): with challenge "" it uses the
// evidence recorded for s (RecordChallenge, else what SaveChallenge kept
// in the store), otherwise the Bearer challenge of the WWW-Authenticate
// value challenge (ignored when malformed). The endpoints' scopes follow
// MCP's selection order and their request is what an interactive sign-in
// asks for (signInScopes, taking in a pending step-up). Its errors are
// those of discoverWith, as a *DiscoveryError carrying the Report. Safe for
// concurrent use.
func (c *Client) discover(ctx context.Context, s Server, challenge string) (*endpoints, error) {
	return c.prepare(ctx, s, &Report{Server: s.ID}, challenge)
}

// prepare is discover writing into rep.
func (c *Client) prepare(ctx context.Context, s Server, rep *Report, challenge string) (*endpoints, error) {
	var ev evidence
	key := ""
	if resource, _, err := c.urls.canonical(s.URL, s.ID); err == nil {
		key = storeKey(s.ID, resource)
		ev = c.evidenceOf(key)
	}
	switch {
	case challenge != "":
		ev.challenge, _ = ParseChallenge(http.StatusUnauthorized, challenge)
	case key != "" && ev.challenge.ResourceMetadata == "" && ev.challenge.Scope == nil:
		if ch, ok := c.savedChallenge(ctx, key); ok {
			ev.challenge = ch
		}
	}
	if key != "" && len(ev.stepUp) == 0 {
		// A step-up another process saw (or this one, before a sign-in
		// that did not finish) is kept beside the credential.
		ev.stepUp = c.savedStepUp(ctx, key)
	}
	ep, err := c.discoverWith(ctx, s, ev.challenge, rep)
	if err != nil {
		return nil, &DiscoveryError{Err: err, Report: rep}
	}
	var granted []string
	rec, _ := c.load(ctx, s.ID, ep.resource)
	if len(ev.stepUp) > 0 {
		ep.stepUp = true
		if rec != nil {
			granted = scopeList(rec.Scope)
			ev.requested = appendNew(ev.requested, rec.Requested...)
		}
	}
	ep.request = signInScopes(s, ep, ev, granted)
	if rec != nil && rec.Issuer != ep.issuer {
		rep.add(Step{Check: CheckAuthorizationServerChange, URL: projectURL(rec.Issuer), Outcome: OutcomeOK,
			Hint: "the stored sign-in came from this authorization server, which the server no longer names: " +
				"the next sign-in deletes it and signs in (registering anew) at " + projectURL(ep.issuer)})
	}
	return ep, nil
}
