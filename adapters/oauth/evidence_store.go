package oauth

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// storedChallenge is the layout of a challenge SaveChallenge keeps in the
// token store.
type storedChallenge struct {
	Version          int      `json:"v"`
	ResourceMetadata string   `json:"resource_metadata,omitempty"`
	Scope            []string `json:"scope,omitempty"`
}

// challengeKey is the TokenStore key of the challenge saved for the
// credential key key (storeKey): beside it, never it.
func challengeKey(key string) string { return key + ".challenge" }

// SaveChallenge records ch for s as RecordChallenge does, and keeps it in
// the token store, under its own key beside the credential's: the evidence
// discovery uses (ResourceMetadata and Scope), or for an
// insufficient_scope challenge naming scopes the stored credential lacks,
// the step-up (the union of the scopes requested and granted before and
// those named, as an Authenticator saves it). A sign-in or Discover by
// another process sharing the store (the CLI's login or doctor after a
// call saw the 401 or 403) then uses it when it has recorded none itself.
// Errors: Class Config, ReasonURLInvalid when s.URL is not a URL the
// Client accepts (nothing recorded); Class Transient,
// ReasonStoreUnavailable, or "canceled"/"deadline_exceeded", when the
// store fails (the in-memory record stands). Safe for concurrent use.
func (c *Client) SaveChallenge(ctx context.Context, s Server, ch Challenge) error {
	resource, _, err := c.urls.canonical(s.URL, s.ID)
	if err != nil {
		return err
	}
	key := storeKey(s.ID, resource)
	c.record(key, ch)
	if ch.Error == "insufficient_scope" {
		rec, _ := c.load(ctx, s.ID, resource)
		_ = c.stepUp(ctx, key, s.ID, "", ch, rec) // saves a step-up when there is one
		return nil
	}
	b, err := json.Marshal(storedChallenge{Version: 1, ResourceMetadata: ch.ResourceMetadata, Scope: ch.Scope})
	if err != nil {
		return refuse(refusal.Internal, "encode_failed", s.ID, "")
	}
	if err := c.store.Set(ctx, challengeKey(key), b); err != nil {
		if ctx.Err() != nil {
			return ctxRefusal(ctx.Err(), s.ID, "")
		}
		return refuse(refusal.Transient, ReasonStoreUnavailable, s.ID, "")
	}
	return nil
}

// savedChallenge returns the challenge SaveChallenge kept for key, checked
// to the bounds ParseChallenge keeps; ok is false when there is none, it
// cannot be read, or it is out of bounds (it is then ignored: it is
// evidence, not a credential).
func (c *Client) savedChallenge(ctx context.Context, key string) (ch Challenge, ok bool) {
	b, err := c.store.Get(ctx, challengeKey(key))
	if err != nil {
		return Challenge{}, false
	}
	var sc storedChallenge
	if json.Unmarshal(b, &sc) != nil || sc.Version != 1 || len(sc.ResourceMetadata) > maxChallengeLink {
		return Challenge{}, false
	}
	scope := scopeList(strings.Join(sc.Scope, " "))
	if len(scope) != len(sc.Scope) {
		return Challenge{}, false
	}
	return Challenge{Status: 401, ResourceMetadata: sc.ResourceMetadata, Scope: scope}, true
}

// storedStepUp is the layout of a pending step-up kept in the token store:
// the scopes the next sign-in asks for (those requested and granted
// before, and those the server named).
type storedStepUp struct {
	Version int      `json:"v"`
	Scopes  []string `json:"scopes"`
}

// stepUpKey is the TokenStore key of the step-up saved for the credential
// key key (storeKey): beside it, never it.
func stepUpKey(key string) string { return key + ".stepup" }

// saveStepUp keeps scopes as the pending step-up of the credential key key,
// so a sign-in by any process sharing the store (the CLI's login after a
// call was refused for insufficient scope) asks for them. A failure is
// ignored: the step-up stays recorded in this process.
func (c *Client) saveStepUp(ctx context.Context, key string, scopes []string) {
	b, err := json.Marshal(storedStepUp{Version: 1, Scopes: scopes})
	if err != nil {
		return
	}
	_ = c.store.Set(ctx, stepUpKey(key), b)
}

// savedStepUp returns the scopes of the step-up saved for key, checked to
// the bounds of Challenge.Scope; nil when there is none, it cannot be
// read, or it is out of bounds (it is evidence, not a credential).
func (c *Client) savedStepUp(ctx context.Context, key string) []string {
	b, err := c.store.Get(ctx, stepUpKey(key))
	if err != nil {
		return nil
	}
	var su storedStepUp
	if json.Unmarshal(b, &su) != nil || su.Version != 1 {
		return nil
	}
	scopes := scopeList(strings.Join(su.Scopes, " "))
	if len(scopes) != len(su.Scopes) {
		return nil
	}
	return scopes
}

// clearStepUp deletes the step-up saved for key (a sign-in asked for it).
// A failure is ignored: a step-up left behind only widens the next
// sign-in's request to scopes the user already agreed to.
func (c *Client) clearStepUp(ctx context.Context, key string) {
	_ = c.store.Delete(ctx, stepUpKey(key))
}
