package oauth

import (
	"context"
	"slices"

	"github.com/mcpward/mcpward/core/refusal"
)

// ReasonAuthorizationServerChanged (AuthRequired): the server's
// protected-resource metadata no longer names the authorization server the
// stored credential came from: the server moved to another one (MCP
// SEP-2352). The credential (and its proof key) was deleted, and the next
// sign-in goes to the authorization server the metadata names now,
// registering the client there anew; nothing of the old one's client is
// presented to it.
const ReasonAuthorizationServerChanged = "authorization_server_changed"

// migrate prepares a sign-in to s at ep's authorization server: when the
// stored credential came from another issuer (the server moved, SEP-2352)
// it is deleted first, with its proof key, then its revocation is asked of
// the issuer it came from (best effort, as SignOut's). A credential that
// cannot be read is left to the sign-in, which replaces it. Errors: Class
// Transient ReasonStoreUnavailable, or the ctx refusal, when the delete
// fails (nothing is sent then).
func (c *Client) migrate(ctx context.Context, s Server, ep *endpoints) error {
	rec, err := c.load(ctx, s.ID, ep.resource)
	if err != nil || rec == nil || rec.Issuer == ep.issuer {
		return nil
	}
	if err := c.deleteCredential(ctx, s.ID, ep.resource, rec.DPoPJKT); err != nil {
		return err
	}
	c.revoke(ctx, rec)
	return nil
}

// movedAway reports whether the server of the credential rec moved to
// another authorization server: its protected-resource metadata, fetched
// as discovery fetches it (from link, a challenge's resource_metadata,
// when not "", else from the well-known locations) and checked the same
// way, names authorization servers and rec's issuer is not among them. Any
// failure to tell (no metadata, a network error, a check that fails) is
// false: the caller goes on as before. It sends at most the GETs of
// discovery's resource metadata step, each within Options.RequestTimeout.
func (c *Client) movedAway(ctx context.Context, rec *record, serverURL, link string) bool {
	resource, origin, err := c.urls.canonical(serverURL, rec.Server)
	if err != nil || resource != rec.Resource {
		return false
	}
	d := &discovery{c: c, s: Server{ID: rec.Server, URL: serverURL}}
	rm, err := d.resourceMetadata(ctx, resource, origin, link)
	if err != nil || rm == nil || len(rm.AuthorizationServers) == 0 {
		return false
	}
	return !slices.Contains(rm.AuthorizationServers, rec.Issuer)
}

// stepUps returns the StepUps of a credential a sign-in to s with ep
// stores now: 0 when no step-up was pending, else one more than the
// credential it replaces when that one was received within stepUpWindow,
// else 1.
func (c *Client) stepUps(ctx context.Context, s Server, ep *endpoints) int {
	if !ep.stepUp {
		return 0
	}
	old, err := c.load(ctx, s.ID, ep.resource)
	if err != nil || old == nil || old.Received.IsZero() || c.now().Sub(old.Received) > stepUpWindow {
		return 1
	}
	return old.StepUps + 1
}

// newCredential returns the credential of a sign-in to s at ep's
// authorization server for clientID, without tokens yet: newRecord's, with
// its StepUps counted.
func (c *Client) newCredential(ctx context.Context, s Server, ep *endpoints, clientID string) *record {
	rec := newRecord(s, ep, clientID)
	rec.StepUps = c.stepUps(ctx, s, ep)
	return rec
}

// movedRefusal is the refusal of a request whose server moved to another
// authorization server.
func movedRefusal(server, origin string) *refusal.Error {
	return &refusal.Error{Class: refusal.AuthRequired, Reason: ReasonAuthorizationServerChanged, Server: server, Origin: origin,
		Detail: "the server moved to another authorization server: sign in again there"}
}
