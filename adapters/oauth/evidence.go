package oauth

import (
	"context"
	"slices"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons of step-up.
const (
	// ReasonStepUpRequired (AuthRequired): the server refused the token
	// with error="insufficient_scope" and named scopes the credential was
	// neither granted nor asked for. The error is a *StepUpError: the host
	// asks the user to sign in again (BeginSignIn or SignInWith, which then
	// request StepUpError.Scopes), then retries the call once.
	ReasonStepUpRequired = "step_up_required"
)

// StepUpError is the refusal of a request the server refused for
// insufficient scope when a new sign-in may cure it: Err is Class
// AuthRequired, ReasonStepUpRequired; Scopes are the scopes the next
// sign-in to this server through the same Client adds to its usual
// selection (the scopes asked for or granted before, and those the server
// named). errors.As finds the *refusal.Error through it.
type StepUpError struct {
	// Err is the refusal; Error and Unwrap return it.
	Err *refusal.Error
	// Scopes are scope tokens (printable ASCII, no quote or backslash, at
	// most maxScopes of at most maxScopeLen bytes each).
	Scopes []string
}

// Error returns the refusal's text (never the scopes).
func (e *StepUpError) Error() string { return e.Err.Error() }

// Unwrap returns the refusal.
func (e *StepUpError) Unwrap() error { return e.Err }

// evidence is what this Client learnt about one server (by store key)
// outside discovery: the last Bearer challenge a 401 carried, a pending
// step-up, and the scopes the last sign-in it began requested.
type evidence struct {
	challenge Challenge
	stepUp    []string
	requested []string
}

// maxEvidence bounds how many servers' evidence a Client keeps; when full,
// recording for a new server drops another one's.
const maxEvidence = 1024

// RecordChallenge records ch, a Bearer challenge a response of the server
// s carried (ParseChallenge), as evidence for s's identity (server id and
// canonical URL together). A challenge whose Error is "insufficient_scope"
// records a pending step-up of its Scope; any other replaces the evidence
// discovery uses: its ResourceMetadata is followed first (after the same
// checks as any link) and its Scope is requested when the definition
// names none. Nothing is sent. It returns Class Config, ReasonURLInvalid
// when s.URL is not a URL the Client accepts. Safe for concurrent use.
func (c *Client) RecordChallenge(s Server, ch Challenge) error {
	resource, _, err := c.urls.canonical(s.URL, s.ID)
	if err != nil {
		return err
	}
	c.record(storeKey(s.ID, resource), ch)
	return nil
}

// record stores ch for key as RecordChallenge says.
func (c *Client) record(key string, ch Challenge) {
	ch.Scope = slices.Clone(ch.Scope)
	c.evMu.Lock()
	defer c.evMu.Unlock()
	ev := c.slot(key)
	if ch.Error == "insufficient_scope" {
		ev.stepUp = appendNew(ev.stepUp, ch.Scope...)
		if ch.ResourceMetadata != "" && ev.challenge.ResourceMetadata == "" {
			ev.challenge.ResourceMetadata = ch.ResourceMetadata
		}
	} else {
		ev.challenge = ch
	}
	c.evidence[key] = ev
}

// slot returns the evidence recorded for key, making room for it when key
// has none and the map is full; the caller holds evMu and stores it back.
func (c *Client) slot(key string) evidence {
	ev, ok := c.evidence[key]
	if !ok && len(c.evidence) >= maxEvidence {
		for k := range c.evidence {
			delete(c.evidence, k)
			break
		}
	}
	return ev
}

// evidenceOf returns a copy of the evidence recorded for key.
func (c *Client) evidenceOf(key string) evidence {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	ev := c.evidence[key]
	return evidence{challenge: ev.challenge, stepUp: slices.Clone(ev.stepUp), requested: slices.Clone(ev.requested)}
}

// began notes that a sign-in for key requests scopes: the pending step-up
// is taken into it.
func (c *Client) began(key string, scopes []string) {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	ev := c.slot(key)
	ev.requested = slices.Clone(scopes)
	ev.stepUp = nil
	c.evidence[key] = ev
}

// signInScopes returns the scopes a sign-in to s requests, by the MCP
// scope selection order: the definition's Scopes when set, else the scope
// of the recorded challenge (already in e.scopes, see discover), else the
// resource metadata's scopes_supported, else none. A pending step-up adds
// the scopes requested and granted before and those the server named.
// offline_access is added when the authorization server lists it in its
// scopes_supported and some scope is requested at all (an authorization
// server may grant its default scopes to a request without scope; asking
// for offline_access alone could lose them).
func signInScopes(s Server, e *endpoints, ev evidence, granted []string) []string {
	var scopes []string
	if s.Scopes != nil {
		scopes = appendNew(nil, s.Scopes...)
	} else {
		scopes = appendNew(nil, e.scopes...)
	}
	if len(ev.stepUp) > 0 {
		scopes = appendNew(scopes, ev.requested...)
		scopes = appendNew(scopes, granted...)
		scopes = appendNew(scopes, ev.stepUp...)
	}
	if len(scopes) > 0 && e.offlineAccess {
		scopes = appendNew(scopes, "offline_access")
	}
	return scopes
}

// Bounds of step-ups.
const (
	// maxStepUps is how many sign-ins in a row may answer a step-up
	// within stepUpWindow; the next insufficient_scope is final
	// (ReasonStepUpLimit), so a server that keeps asking for more cannot
	// hold the user in a loop of sign-ins.
	maxStepUps = 3
	// stepUpWindow is how recent the credential a step-up sign-in replaces
	// must be for the sign-in to count as one more in a row.
	stepUpWindow = 10 * time.Minute
)

// ReasonStepUpLimit (AuthRefused): the server refused the token for
// insufficient scope after maxStepUps sign-ins in a row that each asked
// for the scopes it named: signing in again would not end it.
const ReasonStepUpLimit = "step_up_limit"

// stepUp decides on a refusal for insufficient scope of the credential
// rec (nil when unknown) at key: when the challenge names scopes that are
// neither granted (rec's scope) nor, with no granted scope known,
// requested before (by this process's last sign-in, or the one rec
// records), it records the step-up, in this process and beside the
// credential in the store (so a sign-in by another process asks for it),
// and returns a *StepUpError carrying the scopes the next sign-in requests;
// otherwise Class AuthRefused: ReasonStepUpLimit after maxStepUps step-up
// sign-ins in a row, else ReasonInsufficientScope (no scope named, or
// nothing new to ask for, or more than maxScopes in all): signing in again
// would ask for the same thing, or a server keeps asking for more.
func (c *Client) stepUp(ctx context.Context, key, server, origin string, ch Challenge, rec *record) error {
	ev := c.evidenceOf(key)
	var granted, requested []string
	requested = ev.requested
	if rec != nil {
		granted = scopeList(rec.Scope)
		requested = appendNew(slices.Clone(requested), rec.Requested...)
	}
	have := granted
	if len(have) == 0 {
		have = requested
	}
	missing := false
	for _, sc := range ch.Scope {
		if !slices.Contains(have, sc) {
			missing = true
		}
	}
	scopes := appendNew(appendNew(appendNew(nil, requested...), granted...), ch.Scope...)
	if !missing || len(scopes) > maxScopes {
		return refuse(refusal.AuthRefused, ReasonInsufficientScope, server, origin)
	}
	if rec != nil && rec.StepUps >= maxStepUps {
		return refuse(refusal.AuthRefused, ReasonStepUpLimit, server, origin)
	}
	c.record(key, ch)
	c.saveStepUp(ctx, key, scopes)
	return &StepUpError{Err: refuse(refusal.AuthRequired, ReasonStepUpRequired, server, origin), Scopes: scopes}
}

// StepUpPending reports whether a step-up is pending for s (an
// Authenticator refused a request with a *StepUpError, or RecordChallenge
// recorded an insufficient_scope challenge, and no sign-in has begun
// since) and which scopes it adds. A host whose transport reports only
// that the server refused the credential asks this to tell a step-up
// (ask the user to sign in again, then retry once) from a final refusal.
// It sends nothing and reads no store; a URL the Client does not accept
// has none. Safe for concurrent use.
func (c *Client) StepUpPending(s Server) (scopes []string, ok bool) {
	resource, _, err := c.urls.canonical(s.URL, s.ID)
	if err != nil {
		return nil, false
	}
	ev := c.evidenceOf(storeKey(s.ID, resource))
	return ev.stepUp, len(ev.stepUp) > 0
}
