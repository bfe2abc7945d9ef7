package oauth

import (
	"context"
	"net/http"
	"sync"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Reasons of the refusals only an Authenticator returns.
const (
	// ReasonInsufficientScope (AuthRefused): the server refused the token
	// with error="insufficient_scope" in its Bearer challenge (RFC 6750
	// §3.1). A refresh cannot widen the scope, so none is attempted; the
	// user must sign in again with the scope the server needs.
	ReasonInsufficientScope = "insufficient_scope"
	// ReasonAuthenticatorMismatch (Refused): the transport asked for the
	// headers of another server id or origin than the one this
	// Authenticator was made for; no token is handed out.
	ReasonAuthenticatorMismatch = "authenticator_mismatch"
)

var _ ports.Authenticator = (*Authenticator)(nil)

// Authenticator is the ports.Authenticator of one OAuth-protected server:
// it hands out the stored access token as "Authorization: Bearer", refreshes
// it when it has expired or the server refused it. Headers uses the
// credential its Client last read or wrote for up to Options.CacheTTL
// (reading the store costs every request tens of microseconds on files, a
// D-Bus round trip on a keychain); Refused always reads the store, so a
// token another process rotated in is adopted as soon as the server
// refuses the cached one.
//
// It is safe for concurrent use. At most one refresh per Authenticator is in
// flight: callers that need one while it runs wait for it and share its
// outcome; refreshes by other Authenticators and other processes are
// serialized by the Client's Locker (see Client.refresh).
type Authenticator struct {
	c        *Client
	server   string // the server id
	resource string // the canonical server URL
	origin   string // the server URL's origin, as ports.AuthRequest names it

	mu sync.Mutex
	// last is the access token Headers handed out most recently: a refused
	// request carried it (or an older one), so a stored token other than
	// last was rotated in after the refused one was sent.
	last string
	// flight is the refresh in flight, nil when none.
	flight *refreshFlight
}

// refreshFlight is one shared refresh. rec and err are written before done
// is closed and only read after it is; waiters is guarded by the
// Authenticator's mu.
type refreshFlight struct {
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int
	rec     *record
	err     error
}

// Authenticator returns the ports.Authenticator of server s. It only
// canonicalizes s.URL (Class Config, ReasonURLInvalid when it is not an
// absolute https URL); it reads no credential and sends nothing. Every
// Authenticator of one Client and server shares the stored credential.
func (c *Client) Authenticator(s Server) (*Authenticator, error) {
	resource, origin, err := c.urls.canonical(s.URL, s.ID)
	if err != nil {
		return nil, err
	}
	return &Authenticator{c: c, server: s.ID, resource: resource, origin: origin}, nil
}

// Headers implements ports.Authenticator: it returns a new header set with
// "Authorization: Bearer <access token>" for r, which must name this
// Authenticator's server id and origin (else Class Refused,
// ReasonAuthenticatorMismatch).
//
// A still-valid stored token is used as is. An expired one is refreshed
// first (shared with a refresh already in flight); see Client.refresh for
// its refusals. No credential, or an expired one without a refresh token,
// is Class AuthRequired, ReasonSignInRequired. A store failure is Class
// Transient, ReasonStoreUnavailable; an unreadable credential Class Config,
// ReasonCredentialCorrupt; ctx ending while waiting for a refresh Class
// Transient "canceled"/"deadline_exceeded".
func (a *Authenticator) Headers(ctx context.Context, r ports.AuthRequest) (http.Header, error) {
	if err := a.check(r.ServerID, r.Origin); err != nil {
		return nil, err
	}
	rec, err := a.c.loadCached(ctx, a.server, a.resource)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, a.server, "")
	}
	if !rec.valid(a.c.now()) {
		if !rec.renewable() {
			return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, a.server, "")
		}
		if rec, err = a.share(ctx, rec); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	a.last = rec.AccessToken
	a.mu.Unlock()
	h := make(http.Header, 1)
	h.Set("Authorization", "Bearer "+rec.AccessToken)
	return h, nil
}

// Refused implements ports.Authenticator; r must name this Authenticator's
// server id and origin (else Class Refused, ReasonAuthenticatorMismatch).
//
// It returns retry=true, without refreshing, when the stored access token
// is no longer the one Headers last handed out (another request or process
// rotated one in meanwhile). Otherwise it refreshes (sharing a refresh
// already in flight, so many requests refused together cause one) and
// returns retry=true when that succeeds.
//
// A 401's Bearer challenge is recorded as evidence for the next sign-in
// (RecordChallenge). When the challenge says error="insufficient_scope"
// nothing is refreshed (a refresh cannot widen the scope) and retry is
// false with: a *StepUpError (Class AuthRequired, ReasonStepUpRequired)
// when the challenge names scopes the credential was neither granted nor,
// when its grant is unknown, asked for — the step-up is recorded, so the
// host's next sign-in for this server requests them, never silently;
// otherwise Class AuthRefused, ReasonInsufficientScope, since signing in
// again would ask for the same scopes. Otherwise retry=false comes with:
// Class AuthRequired, ReasonSignInRequired when there is no credential or
// no refresh token, or the refresh token was refused (invalid_grant); or
// the refusal of the refresh, the store or ctx, as Headers.
func (a *Authenticator) Refused(ctx context.Context, r ports.AuthRefusal) (retry bool, err error) {
	if err := a.check(r.ServerID, r.Origin); err != nil {
		return false, err
	}
	if ch, ok := ParseChallenge(r.Status, r.Challenge); ok {
		if ch.Error == "insufficient_scope" {
			var granted []string
			if rec, err := a.c.load(ctx, a.server, a.resource); err == nil && rec != nil {
				granted = scopeList(rec.Scope)
			}
			return false, a.c.stepUp(storeKey(a.server, a.resource), a.server, a.origin, ch, granted)
		}
		if r.Status == http.StatusUnauthorized {
			a.c.record(storeKey(a.server, a.resource), ch)
		}
	}
	rec, err := a.c.load(ctx, a.server, a.resource)
	if err != nil {
		return false, err
	}
	if rec == nil {
		return false, refuse(refusal.AuthRequired, ReasonSignInRequired, a.server, "")
	}
	a.mu.Lock()
	last := a.last
	a.mu.Unlock()
	if last != "" && rec.AccessToken != last {
		return true, nil
	}
	if !rec.renewable() {
		return false, refuse(refusal.AuthRequired, ReasonSignInRequired, a.server, "")
	}
	if _, err := a.share(ctx, rec); err != nil {
		return false, err
	}
	return true, nil
}

// check refuses (Class Refused, ReasonAuthenticatorMismatch) a request for
// another server id or origin than a's, so a token never leaves for a
// server it was not issued for.
func (a *Authenticator) check(server, origin string) error {
	if server != a.server || origin != a.origin {
		return refuse(refusal.Refused, ReasonAuthenticatorMismatch, a.server, "")
	}
	return nil
}

// share refreshes rec (Client.refresh), or waits for the refresh already in
// flight on a and returns its outcome. The refresh runs on its own
// goroutine with ctx's values but not its cancellation, so one caller giving
// up does not fail the others; it is canceled when every caller waiting for
// it has given up. A caller whose ctx ends first gets Class Transient
// "canceled"/"deadline_exceeded".
func (a *Authenticator) share(ctx context.Context, rec *record) (*record, error) {
	a.mu.Lock()
	f := a.flight
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &refreshFlight{done: make(chan struct{}), cancel: cancel}
		a.flight = f
		go func() {
			defer cancel()
			got, err := a.c.refresh(fctx, rec)
			a.mu.Lock()
			f.rec, f.err = got, err
			if a.flight == f {
				a.flight = nil
			}
			a.mu.Unlock()
			close(f.done)
		}()
	}
	f.waiters++
	a.mu.Unlock()

	select {
	case <-f.done:
		return f.rec, f.err
	case <-ctx.Done():
		a.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			f.cancel()
			if a.flight == f {
				a.flight = nil
			}
		}
		a.mu.Unlock()
		return nil, ctxRefusal(ctx.Err(), a.server, "")
	}
}
