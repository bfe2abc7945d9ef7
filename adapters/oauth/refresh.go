package oauth

import (
	"context"
	"errors"
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
//   - otherwise the stored credential is refreshed (or, with no refresh
//     token but from the client credentials grant, renewed by that grant),
//     or it is Class AuthRequired, ReasonSignInRequired.
//
// The refresh is one request (two with a DPoP nonce), through
// Client.tokenRequest, to the stored TokenEndpoint only (never
// rediscovered; Class Refused, ReasonInsecureEndpoint when it is not
// https) of grant_type=refresh_token, refresh_token and resource (RFC
// 8707, as the sign-in sent it), the client authenticated as its stored
// registration says (public, with the stored client id, when there is
// none), with a DPoP proof of the credential's key when it is DPoP-bound
// (Class AuthRequired ReasonProofKeyMissing when the key is gone). A
// workload's credential is renewed by the JWT-bearer grant with a JWT
// read again from its token file (see SignInWorkloadIdentity for the
// checks and their refusals). Its answer:
//
//   - tokens: they are checked with fillToken (its Class Protocol
//     refusals, credential kept), keeping the old refresh token when none
//     comes back, and saved (an atomic replace) — unless the store was
//     cleared or replaced meanwhile by a writer that does not take the lock
//     (sign-out, sign-in): a cleared credential is not resurrected (Class
//     AuthRequired, ReasonSignInRequired), and a replaced one is adopted
//     when valid;
//   - error invalid_grant: the credential is deleted only if the store
//     still holds the one whose refresh token was spent, never one someone
//     rotated in meanwhile; Class AuthRequired, ReasonSignInRequired;
//   - another error code that tokenErrorReason names (invalid_client, ...):
//     that refusal, credential kept; an unknown one or none: Class
//     AuthRefused, ReasonRefreshRefused, credential kept;
//   - any other refusal of tokenRequest (Transient ReasonUnavailable for a
//     network failure, 429 or 5xx, Refused ReasonRedirectRefused, ctx
//     ending, ...) is returned as is, credential kept.
//
// Load and save failures are load's and save's refusals. The lock is
// always released. It is one StepRefresh (Options.Step). Safe for
// concurrent use.
func (c *Client) refresh(ctx context.Context, rec *record) (_ *record, err error) {
	ctx, end := c.step(ctx, StepRefresh)
	defer func() { end(err) }()
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
	case !cur.renewable():
		return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, server, "")
	}

	tokenURL, err := c.urls.link(cur.TokenEndpoint, server)
	if err != nil {
		return nil, err
	}
	auth, err := c.authFor(ctx, cur)
	if err != nil {
		return nil, err
	}
	var key *proofKey
	if cur.dpop() {
		if key, err = c.loadProofKey(ctx, cur); err != nil {
			return nil, err
		}
	}
	origin := c.urls.origin(cur.TokenEndpoint)
	params := url.Values{"grant_type": {grantRefreshToken}, "refresh_token": {cur.RefreshToken}, "resource": {cur.indicator()}}
	switch {
	case cur.RefreshToken != "":
	case cur.Grant == grantClientCredentials: // renewed by the same grant
		params = url.Values{"grant_type": {grantClientCredentials}, "resource": {cur.indicator()}}
		if cur.Scope != "" {
			params.Set("scope", cur.Scope)
		}
	case cur.Grant == grantJWTBearer: // a workload's, renewed with its JWT read again
		assertion, err := c.readWorkloadFile(cur, tokenURL)
		if err != nil {
			return nil, err
		}
		params = url.Values{"grant_type": {grantJWTBearer}, "assertion": {assertion}, "resource": {cur.indicator()}}
		if cur.Scope != "" {
			params.Set("scope", cur.Scope)
		}
	}
	tok, code, err := c.tokenRequest(ctx, server, tokenURL, auth, cur.Issuer, params, key)
	switch {
	case err == nil:
	case code == "invalid_grant" && cur.RefreshToken != "":
		c.forgetSpent(ctx, cur)
		return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, server, origin)
	case refusal.ReasonOf(err) == ReasonTokenRefused:
		return nil, refuse(refusal.AuthRefused, ReasonRefreshRefused, server, origin)
	default:
		return nil, err
	}
	next := *cur
	if err := fillToken(tok, &next, c.now(), server, origin, key); err != nil {
		return nil, err
	}
	return c.saveRefreshed(ctx, cur, &next)
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
