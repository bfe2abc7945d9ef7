package composition

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Bounds of the challenges an Authentication remembers.
const (
	// maxChallenges bounds how many connections' (server id and URL)
	// latest challenges are kept; the oldest is forgotten first.
	maxChallenges = 256
	// maxChallengeBytes bounds the WWW-Authenticate value parsed; a
	// longer one is ignored.
	maxChallengeBytes = 8 << 10
)

// challenge is what the latest 401 or 403 of one connection (a server id
// and URL) said: its status and whether it was a Bearer challenge. What
// the challenge holds is the OAuth client's (OAuthClient.SaveChallenge).
type challenge struct {
	status int
	bearer bool
	// refused is the OAuth Authenticator's own refusal of this
	// connection's latest refused credential (a step-up, a moved
	// authorization server, ...), which the transport reports only as
	// auth_refused; taken by the next classification.
	refused *refusal.Error
}

// challengeLog remembers the latest challenge of each server id and URL,
// bounded by maxChallenges. It is safe for concurrent use.
type challengeLog struct {
	mu    sync.Mutex
	m     map[string]challenge
	order []string // keys, oldest first
}

// challengeKey is the key of server id and URL.
func challengeKey(id, rawURL string) string { return id + "\x00" + rawURL }

// recordChallenge is httptransport's OnChallenge of the Dialer's
// transports: in a deployment that can sign in (Config.OAuth), the
// challenge is handed to the OAuth client (OAuthClient.SaveChallenge:
// strict parsing; a Bearer challenge is evidence for that server's
// identity, so discovery follows its resource_metadata and requests its
// scope, in this process and in any other sharing the token store;
// insufficient_scope records a step-up), and a Bearer one is remembered
// for its server id and URL. Nothing is sent; the token store write is
// bounded by saveChallengeTimeout.
func (a *Authentication) recordChallenge(c httptransport.Challenge) {
	if a.oauth == nil || len(c.WWWAuthenticate) > maxChallengeBytes {
		return
	}
	// Saved beside the credential too, so "mcpward login" and doctor in
	// another process follow it. A URL the client refuses has nothing to
	// sign in to; a store failure leaves the in-memory record.
	ctx, cancel := context.WithTimeout(context.Background(), saveChallengeTimeout)
	defer cancel()
	if a.oauth.SaveChallenge(ctx, c.ServerID, c.URL, c.Status, c.WWWAuthenticate) {
		a.challenges.record(c.ServerID, c.URL, challenge{status: c.Status, bearer: true})
	}
}

// saveChallengeTimeout bounds the store write of one challenge.
const saveChallengeTimeout = 5 * time.Second

// record remembers c for server id at rawURL.
func (l *challengeLog) record(id, rawURL string, c challenge) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.put(challengeKey(id, rawURL), c)
}

// put stores c under k, forgetting the oldest key when full; l.mu is held.
func (l *challengeLog) put(k string, c challenge) {
	if l.m == nil {
		l.m = map[string]challenge{}
	}
	if _, ok := l.m[k]; !ok {
		l.order = append(l.order, k)
		if len(l.order) > maxChallenges {
			delete(l.m, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.m[k] = c
}

// markRefused notes r, the OAuth Authenticator's refusal of the latest
// refused credential of server id at rawURL.
func (l *challengeLog) markRefused(id, rawURL string, r *refusal.Error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := challengeKey(id, rawURL)
	c := l.m[k]
	c.refused = r
	l.put(k, c)
}

// takeRefused returns, and clears, the refusal noted for server id at
// rawURL; nil when there is none.
func (l *challengeLog) takeRefused(id, rawURL string) *refusal.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := challengeKey(id, rawURL)
	c, ok := l.m[k]
	if !ok || c.refused == nil {
		return nil
	}
	r := c.refused
	c.refused = nil
	l.m[k] = c
	return r
}

// get returns the latest challenge of server id at rawURL.
func (l *challengeLog) get(id, rawURL string) (challenge, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.m[challengeKey(id, rawURL)]
	return c, ok
}

// signInRequired turns a refusal of t's credential (Class AuthRefused,
// httptransport.ReasonAuthRefused) that the OAuth Authenticator declined
// to retry for a reason of its own (see refused) into that reason, with
// its Class: ReasonStepUpRequired for a step-up,
// oauth.ReasonAuthorizationServerChanged when the server moved to another
// authorization server, ReasonSignInRequired when the refresh token was
// refused, and so on; and the refusal of a connection to t that got a 401
// without an authenticator (Class AuthRequired,
// httptransport.ReasonAuthRequired) into Reason ReasonSignInRequired
// when the server's challenge was an OAuth one (Bearer or DPoP) and the
// deployment can sign in (Config.OAuth): "mcpward login NAME" then signs
// in to it, whether or not its definition has "oauth". Any other refusal,
// and that of a definition setting its own Authorization header, is
// returned as is.
func (a *Authentication) signInRequired(t ports.Target, r *refusal.Error) *refusal.Error {
	if r != nil && r.Class == refusal.AuthRefused && r.Reason == httptransport.ReasonAuthRefused {
		if why := a.challenges.takeRefused(t.ServerID, t.URL); why != nil {
			c := *r
			c.Class, c.Reason, c.Detail = why.Class, why.Reason, why.Detail
			if c.Reason == ReasonStepUpRequired {
				c.Detail = "the server wants more scope: a new sign-in asks for it"
			}
			return &c
		}
	}
	if r == nil || a.oauth == nil || r.Class != refusal.AuthRequired || r.Reason != httptransport.ReasonAuthRequired || setsAuthorization(t) {
		return r
	}
	if c, ok := a.challenges.get(t.ServerID, t.URL); !ok || !c.bearer {
		return r
	}
	c := *r
	c.Reason = ReasonSignInRequired
	c.Detail = "the server asks for an OAuth sign-in (a Bearer or DPoP challenge)"
	return &c
}

// signedInAuthenticator returns the OAuth Authenticator of t when its
// definition asks for no authentication (static headers without an
// Authorization header) and the user signed in to it (a stored credential
// for its server id and URL, read without a network request): a server
// that answered with a Bearer challenge and was then signed in to with
// Host.SignIn. It returns nil otherwise, and on any failure to tell (the
// connection then goes out as the definition says).
func (a *Authentication) signedInAuthenticator(ctx context.Context, t ports.Target) ports.Authenticator {
	if a.oauth == nil || setsAuthorization(t) || !a.oauth.SignedIn(ctx, t.ServerID, t.URL) {
		return nil
	}
	au, err := a.oauth.Authenticator(t.ServerID, t.URL, nil, a.refused(t))
	if err != nil {
		return nil
	}
	return au
}

// refused returns the function an OAuth Authenticator of t calls when it
// declines to retry a refused credential for a reason of its own, noting
// it for signInRequired: the transport reports any refusal of a
// credential as AuthRefused, and this is how its reason is kept.
func (a *Authentication) refused(t ports.Target) func(*refusal.Error) {
	return func(r *refusal.Error) { a.challenges.markRefused(t.ServerID, t.URL, r) }
}

// setsAuthorization reports whether t's static headers set Authorization.
func setsAuthorization(t ports.Target) bool {
	for k := range t.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
