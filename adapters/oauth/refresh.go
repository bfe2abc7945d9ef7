package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// refresh renews the credential rec was read as, once across every process
// sharing c's store and locker, and returns the credential to use.
//
// It takes the credential's refresh lock (lockKey), waiting at most
// c.lockTimeout: a wait that times out or whose ctx ends is Class
// Transient, ReasonLockTimeout, and any other locker failure Class
// Transient, ReasonStoreUnavailable; nothing is sent then (fail closed).
// Under the lock it re-reads the store:
//
//   - no credential any more (signed out meanwhile): Class AuthRequired,
//     ReasonSignInRequired;
//   - a credential other than rec that is valid (another process rotated
//     one in): it is adopted, nothing is sent;
//   - otherwise the stored credential is refreshed, or, without a refresh
//     token, is Class AuthRequired, ReasonSignInRequired.
//
// The refresh is a POST to the stored TokenEndpoint only (never
// rediscovered; Class Refused, ReasonInsecureEndpoint when it is not https)
// of grant_type=refresh_token, refresh_token, client_id and resource (RFC
// 8707). Its answer:
//
//   - 200: the tokens are read with parseToken (its Class Protocol
//     refusals, credential kept), keeping the old refresh token when none
//     comes back, and saved (an atomic replace) — unless the store was
//     cleared or replaced meanwhile by a writer that does not take the lock
//     (sign-out, sign-in): a cleared credential is not resurrected (Class
//     AuthRequired, ReasonSignInRequired), and a replaced one is adopted
//     when valid;
//   - 400 or 401 with error invalid_grant: the credential is deleted only
//     if the store still holds the one whose refresh token was spent, never
//     one someone rotated in meanwhile; Class AuthRequired,
//     ReasonSignInRequired;
//   - any other status: Class AuthRefused, ReasonRefreshRefused, credential
//     kept;
//   - a postForm refusal (Transient ReasonUnavailable for a network failure,
//     429 or 5xx, Refused ReasonRedirectRefused, ctx ending, ...) is
//     returned as is, credential kept.
//
// Load and save failures are load's and save's refusals. The lock is
// always released. Safe for concurrent use.
func (c *Client) refresh(ctx context.Context, rec *record) (*record, error) {
	server := rec.Server
	lctx, cancel := context.WithTimeout(ctx, c.lockTimeout)
	defer cancel()
	unlock, err := c.locker.Lock(lctx, lockKey(rec.Server, rec.Resource))
	if err != nil {
		if errors.Is(err, ports.ErrLockTimeout) || lctx.Err() != nil {
			return nil, refuse(refusal.Transient, ReasonLockTimeout, server, "")
		}
		return nil, refuse(refusal.Transient, ReasonStoreUnavailable, server, "")
	}
	defer func() { _ = unlock() }()

	cur, err := c.load(ctx, rec.Server, rec.Resource)
	switch {
	case err != nil:
		return nil, err
	case cur == nil:
		return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, server, "")
	case !cur.same(rec) && cur.valid(c.now()):
		return cur, nil
	case cur.RefreshToken == "":
		return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, server, "")
	}

	tokenURL, err := c.urls.link(cur.TokenEndpoint, server)
	if err != nil {
		return nil, err
	}
	origin := originOf(cur.TokenEndpoint)
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {cur.RefreshToken},
		"client_id":     {cur.ClientID},
		"resource":      {cur.Resource},
	}
	resp, err := c.postForm(ctx, server, tokenURL, form)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.status == http.StatusOK:
		next := *cur
		if err := parseToken(resp, &next, c.now(), server, origin); err != nil {
			return nil, err
		}
		return c.saveRefreshed(ctx, cur, &next)
	case (resp.status == http.StatusBadRequest || resp.status == http.StatusUnauthorized) &&
		tokenErrorCode(resp) == "invalid_grant":
		c.forgetSpent(ctx, cur)
		return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, server, origin)
	}
	return nil, refuse(refusal.AuthRefused, ReasonRefreshRefused, server, origin)
}

// saveRefreshed stores next, the refreshed form of spent, and returns it,
// unless the store no longer holds spent: a writer that does not take the
// refresh lock (sign-out, sign-in) changed it while the refresh was sent.
// Then a cleared credential stays cleared (Class AuthRequired,
// ReasonSignInRequired) and a replacing one is returned when valid (next,
// unsaved, otherwise). Load and save failures are their refusals.
func (c *Client) saveRefreshed(ctx context.Context, spent, next *record) (*record, error) {
	stored, err := c.load(ctx, spent.Server, spent.Resource)
	switch {
	case err != nil:
		return nil, err
	case stored == nil:
		return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, spent.Server, "")
	case !stored.same(spent):
		if stored.valid(c.now()) {
			return stored, nil
		}
		return next, nil
	}
	if err := c.save(ctx, next); err != nil {
		return nil, err
	}
	return next, nil
}

// forgetSpent deletes the stored credential after its refresh token was
// refused (invalid_grant), but only when the store still holds spent: a
// credential someone else rotated or signed in meanwhile is kept. Failures
// are ignored: the caller reports ReasonSignInRequired either way, and a
// credential left behind fails its next refresh the same way.
func (c *Client) forgetSpent(ctx context.Context, spent *record) {
	stored, err := c.load(ctx, spent.Server, spent.Resource)
	if err != nil || !spent.same(stored) {
		return
	}
	c.forget(storeKey(spent.Server, spent.Resource))
	_ = c.store.Delete(ctx, storeKey(spent.Server, spent.Resource))
}
