package oauth

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

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
// it hands out the stored access token as "Authorization: Bearer", or, for
// a DPoP-bound one, as "Authorization: DPoP" with a fresh DPoP proof of the
// credential's key in a "DPoP" header (RFC 9449 §7: htm the request's
// method, htu its URL without query or fragment, ath the token's hash, the
// server's nonce once it gave one), and refreshes it when it has expired
// or the server refused it. A DPoP-bound token is never sent as Bearer.
// Headers uses the credential its Client last read or wrote for up to
// Options.CacheTTL (reading the store costs every request tens of
// microseconds on files, a D-Bus round trip on a keychain); Refused always
// reads the store, so a token another process rotated in is adopted as
// soon as the server refuses the cached one.
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
	url      string // the server URL as the definition gives it
	htu      string // the htu of a request to url, when the transport names none

	mu sync.Mutex
	// last is the access token Headers handed out most recently: a refused
	// request carried it (or an older one), so a stored token other than
	// last was rotated in after the refused one was sent.
	last string
	// flight is the refresh in flight, nil when none.
	flight *refreshFlight
	// nonce is the DPoP nonce the server supplied last (RFC 9449 §9); it
	// is kept in memory only.
	nonce string
	// athToken and ath cache the ath claim of the last DPoP-bound token.
	athToken, ath string
	// next is a proof signed ahead for the next request (see presign);
	// signing is set while one is being signed; lastProof is when the
	// last DPoP-bound request got its proof.
	next      *nextProof
	signing   bool
	lastProof time.Time
}

// presignAge bounds how old a proof signed ahead of its request may be when
// it is used: its iat is at most this far in the past, well within the
// window any server allows for clock skew (RFC 9449 §11.1).
const presignAge = time.Second

// nextProof is a proof signed ahead, for a request with htm and htu
// carrying nonce and ath, by the key of thumbprint jkt, at at.
type nextProof struct {
	htm, htu, nonce, ath, jkt string
	at                        time.Time
	proof                     string
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
	htu, ok := htuOf(s.URL)
	if !ok {
		return nil, refuse(refusal.Config, ReasonURLInvalid, s.ID, "")
	}
	return &Authenticator{c: c, server: s.ID, resource: resource, origin: origin, url: s.URL, htu: htu}, nil
}

// Headers implements ports.Authenticator: it returns a new header set for
// r, which must name this Authenticator's server id and origin (else Class
// Refused, ReasonAuthenticatorMismatch): "Authorization: Bearer <access
// token>", or for a DPoP-bound token "Authorization: DPoP <access token>"
// and "DPoP: <proof>" for r.Method and r.URL (the server URL without query
// when r names none).
//
// A still-valid stored token is used as is. An expired one is refreshed
// first (shared with a refresh already in flight); see Client.refresh for
// its refusals. No credential, or an expired one without a refresh token,
// is Class AuthRequired, ReasonSignInRequired; a DPoP-bound one whose
// proof key is gone, Class AuthRequired, ReasonProofKeyMissing. A store
// failure is Class Transient, ReasonStoreUnavailable; an unreadable
// credential Class Config, ReasonCredentialCorrupt; ctx ending while
// waiting for a refresh Class Transient "canceled"/"deadline_exceeded".
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
	now := a.c.now()
	if !rec.valid(now) {
		if !rec.renewable() {
			return nil, refuse(refusal.AuthRequired, ReasonSignInRequired, a.server, "")
		}
		if rec, err = a.share(ctx, rec); err != nil {
			return nil, err
		}
	}
	if !rec.dpop() {
		a.mu.Lock()
		a.last = rec.AccessToken
		a.mu.Unlock()
		h := make(http.Header, 1)
		h["Authorization"] = []string{"Bearer " + rec.AccessToken}
		return h, nil
	}
	key, err := a.c.loadProofKey(ctx, rec)
	if err != nil {
		return nil, err
	}
	htu := a.htu
	if r.URL != "" {
		if htu, err = requestHTU(r.URL, a.server); err != nil {
			return nil, err
		}
	}
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	a.mu.Lock()
	a.last = rec.AccessToken
	nonce := a.nonce
	if a.athToken != rec.AccessToken {
		a.athToken, a.ath = rec.AccessToken, athOf(rec.AccessToken)
	}
	ath := a.ath
	proof := ""
	if n := a.next; n != nil && n.htm == method && n.htu == htu && n.nonce == nonce && n.ath == ath && n.jkt == key.jkt &&
		!now.Before(n.at) && now.Sub(n.at) <= presignAge {
		proof = n.proof
	}
	a.next = nil // used, or stale
	// Sign ahead only while requests come close together: a proof no
	// request takes within presignAge is a signature wasted.
	start := !a.signing && !a.lastProof.IsZero() && !now.Before(a.lastProof) && now.Sub(a.lastProof) <= presignAge
	a.signing = a.signing || start
	a.lastProof = now
	a.mu.Unlock()
	if start {
		go a.presign(key, method, htu, nonce, ath)
	}
	if proof == "" {
		if proof, err = key.proof(method, htu, now, nonce, ath); err != nil {
			return nil, refuse(refusal.Internal, "dpop_proof_failed", a.server, "")
		}
	}
	h := make(http.Header, 2)
	h["Authorization"] = []string{"DPoP " + rec.AccessToken}
	h["Dpop"] = []string{proof}
	return h, nil
}

// presign signs the proof the next request like this one needs, off that
// request's path: a proof costs an ECDSA signature (tens of microseconds),
// and a request that finds one ready (for its method, URL, token and the
// server's nonce, signed at most presignAge before) only takes it. Each
// proof is used once (its jti is fresh); one that no request takes is
// dropped. It is started only when two requests came within presignAge,
// and at most one runs per Authenticator.
func (a *Authenticator) presign(key *proofKey, htm, htu, nonce, ath string) {
	at := a.c.now()
	proof, err := key.proof(htm, htu, at, nonce, ath)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.signing = false
	if err == nil {
		a.next = &nextProof{htm: htm, htu: htu, nonce: nonce, ath: ath, jkt: key.jkt, at: at, proof: proof}
	}
}

// requestHTU returns the htu of a request to raw, the URL a transport
// named: raw without query or fragment, scheme and host lower case. A URL
// that is not absolute is Class Refused, ReasonAuthenticatorMismatch.
func requestHTU(raw, server string) (string, error) {
	if !strings.ContainsAny(raw, "?#ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return raw, nil // already an htu: the transport's usual form
	}
	htu, ok := htuOf(raw)
	if !ok {
		return "", refuse(refusal.Refused, ReasonAuthenticatorMismatch, server, "")
	}
	return htu, nil
}

// Refused implements ports.Authenticator; r must name this Authenticator's
// server id and origin (else Class Refused, ReasonAuthenticatorMismatch).
//
// A DPoP challenge with error="use_dpop_nonce" (RFC 9449 §9) keeps the
// nonce the server supplied (r.DPoPNonce) for the proofs that follow and
// returns retry=true, nothing refreshed, when the credential is DPoP-bound
// and the nonce is one a proof can carry; otherwise it is Class
// AuthRefused, ReasonDPoPNonceRefused. The transport retries a request
// once, so a server that keeps asking cannot loop.
//
// Otherwise it returns retry=true, without refreshing, when the stored
// access token is no longer the one Headers last handed out (another
// request or process rotated one in meanwhile). Otherwise it refreshes
// (sharing a refresh already in flight, so many requests refused together
// cause one) and returns retry=true when that succeeds. Before a refresh
// for a 401, the server's protected-resource metadata is read again: when
// it no longer names the credential's authorization server (the server
// moved, SEP-2352), the credential and its proof key are deleted and the
// refusal is Class AuthRequired, ReasonAuthorizationServerChanged.
//
// A 401's challenge is recorded as evidence for the next sign-in
// (RecordChallenge; the DPoP challenge is read for a DPoP-bound token).
// When the challenge says error="insufficient_scope" nothing is refreshed
// (a refresh cannot widen the scope) and retry is false with: a
// *StepUpError (Class AuthRequired, ReasonStepUpRequired) when the
// challenge names scopes the credential was neither granted nor, when its
// grant is unknown, asked for — the step-up is recorded, here and beside
// the credential, so the host's next sign-in for this server (in any
// process) requests them, never silently; Class AuthRefused
// ReasonStepUpLimit after maxStepUps step-up sign-ins in a row; otherwise
// Class AuthRefused, ReasonInsufficientScope, since signing in again would
// ask for the same scopes. Otherwise retry=false comes with: Class
// AuthRequired, ReasonSignInRequired when there is no credential or no
// refresh token, or the refresh token was refused (invalid_grant); or the
// refusal of the refresh, the store or ctx, as Headers.
func (a *Authenticator) Refused(ctx context.Context, r ports.AuthRefusal) (retry bool, err error) {
	if err := a.check(r.ServerID, r.Origin); err != nil {
		return false, err
	}
	rec, err := a.c.load(ctx, a.server, a.resource)
	if err != nil {
		return false, err
	}
	ch, ok := parseChallengeFor(r.Status, r.Challenge, rec != nil && rec.dpop())
	if ok && ch.Error == "use_dpop_nonce" {
		if rec == nil || !rec.dpop() || !validNonce(r.DPoPNonce) {
			return false, refuse(refusal.AuthRefused, ReasonDPoPNonceRefused, a.server, a.origin)
		}
		a.mu.Lock()
		a.nonce = r.DPoPNonce
		a.mu.Unlock()
		return true, nil
	}
	key := storeKey(a.server, a.resource)
	if ok && ch.Error == "insufficient_scope" {
		return false, a.c.stepUp(ctx, key, a.server, a.origin, ch, rec)
	}
	if ok && r.Status == http.StatusUnauthorized {
		a.c.record(key, ch)
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
	if r.Status == http.StatusUnauthorized && a.c.movedAway(ctx, rec, a.url, ch.ResourceMetadata) {
		if cur, err := a.c.load(ctx, a.server, a.resource); err == nil && rec.same(cur) {
			if err := a.c.deleteCredential(ctx, a.server, a.resource, rec.DPoPJKT); err != nil {
				return false, err
			}
		}
		return false, movedRefusal(a.server, a.origin)
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
