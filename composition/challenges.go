package composition

import (
	"context"
	"strings"
	"sync"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Bounds of the challenges an Authentication remembers.
const (
	// maxChallenges bounds how many connections' (server id and URL)
	// latest challenges are kept; the oldest is forgotten first.
	maxChallenges = 256
	// maxChallengeBytes bounds the WWW-Authenticate value kept of one; a
	// longer one is kept as not Bearer.
	maxChallengeBytes = 8 << 10
)

// challenge is the latest 401 or 403 challenge one connection (a server id
// and URL) got. header is the server's raw WWW-Authenticate value: it is
// only ever parsed (by adapters/oauth), never printed or logged.
type challenge struct {
	status int
	bearer bool
	header string
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

// record is httptransport's OnChallenge: it remembers c for its server id
// and URL. It never blocks on I/O.
func (l *challengeLog) record(c httptransport.Challenge) {
	ch := challenge{status: c.Status}
	if len(c.WWWAuthenticate) <= maxChallengeBytes {
		ch.header = c.WWWAuthenticate
		ch.bearer = hasBearer(c.WWWAuthenticate)
	}
	k := challengeKey(c.ServerID, c.URL)
	l.mu.Lock()
	defer l.mu.Unlock()
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
	l.m[k] = ch
}

// get returns the latest challenge of server id at rawURL.
func (l *challengeLog) get(id, rawURL string) (challenge, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.m[challengeKey(id, rawURL)]
	return c, ok
}

// hasBearer reports whether a WWW-Authenticate value names the Bearer
// scheme (RFC 6750) in one of its challenges: a scheme token is at the
// start of the value or after a comma, and is followed by a space, a comma
// or the end. adapters/oauth parses the value strictly when it uses it.
func hasBearer(h string) bool {
	for _, part := range strings.Split(h, ",") {
		p := strings.TrimLeft(part, " \t")
		if len(p) >= 6 && strings.EqualFold(p[:6], "bearer") && (len(p) == 6 || p[6] == ' ' || p[6] == '\t') {
			return true
		}
	}
	return false
}

// signInRequired turns the refusal of a connection to t that got a 401
// without an authenticator (Class AuthRequired,
// httptransport.ReasonAuthRequired) into Reason oauth.ReasonSignInRequired
// when the server's challenge was Bearer and the deployment can sign in
// (Config.OAuth): "mcpward login NAME" then signs in to it, whether or not
// its definition has "oauth". Any other refusal, and that of a definition
// setting its own Authorization header, is returned as is.
func (a *Authentication) signInRequired(t ports.Target, r *refusal.Error) *refusal.Error {
	if r == nil || a.oauth == nil || r.Class != refusal.AuthRequired || r.Reason != httptransport.ReasonAuthRequired || setsAuthorization(t) {
		return r
	}
	if c, ok := a.challenges.get(t.ServerID, t.URL); !ok || !c.bearer {
		return r
	}
	c := *r
	c.Reason = oauth.ReasonSignInRequired
	c.Detail = "the server asks for an OAuth sign-in (a Bearer challenge)"
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
	if a.oauth == nil || setsAuthorization(t) {
		return nil
	}
	s := oauthServer(t.ServerID, t.URL, nil)
	st, err := a.oauth.Status(ctx, s)
	if err != nil || (st != oauth.SignedIn && st != oauth.RefreshNeeded) {
		return nil
	}
	au, err := a.oauth.Authenticator(s)
	if err != nil {
		return nil
	}
	return au
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
