package oauth

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// tokSeed stores a credential for server id at the fake, as a sign-in would
// have left it: its refresh token is live at the fake, its access token
// valid for an hour. mod, when non-nil, changes the record before it is
// saved. It returns the Server and the saved record.
func tokSeed(t *testing.T, e *testEnv, id string, mod func(r *record)) (Server, *record) {
	t.Helper()
	rt := "rt-seed-" + canary + "-" + id
	e.as.set(func(f *fakeAS) { f.refreshes[rt] = true })
	rec := &record{
		Server: id, Resource: e.as.MCP(), Issuer: e.as.URL(),
		TokenEndpoint: e.as.URL() + "/token", RevocationEndpoint: e.as.URL() + "/revoke",
		ClientID:    "client-" + canary,
		AccessToken: "at-seed-" + canary + "-" + id, RefreshToken: rt,
		Expiry: e.now.Now().Add(time.Hour),
	}
	if mod != nil {
		mod(rec)
	}
	require.NoError(t, e.c.save(context.Background(), rec))
	e.c.forget(storeKey(id, e.as.MCP())) // stored earlier, as by another process
	return e.as.server(id), rec
}

// tokStored returns the credential stored for s, nil when none.
func tokStored(t *testing.T, e *testEnv, s Server) *record {
	t.Helper()
	rec, err := e.c.load(context.Background(), s.ID, e.as.MCP())
	require.NoError(t, err)
	return rec
}

// tokAuth returns c's Authenticator of s and the AuthRequest the transport
// would send with it.
func tokAuth(t *testing.T, c *Client, s Server) (*Authenticator, ports.AuthRequest) {
	t.Helper()
	a, err := c.Authenticator(s)
	require.NoError(t, err)
	return a, ports.AuthRequest{ServerID: s.ID, Origin: a.origin, Method: http.MethodPost}
}

// tokRefusal returns the AuthRefusal of status with challenge for a.
func tokRefusal(a *Authenticator, status int, challenge string) ports.AuthRefusal {
	return ports.AuthRefusal{ServerID: a.server, Origin: a.origin, Status: status, Challenge: challenge}
}

// tokRequire checks err is a *refusal.Error of class and reason without the
// canary.
func tokRequire(t *testing.T, err error, class refusal.Class, reason string) {
	t.Helper()
	require.Error(t, err)
	requireNoCanary(t, err)
	require.Equal(t, class, refusal.ClassOf(err), "class of %v", err)
	require.Equal(t, reason, refusal.ReasonOf(err), "reason of %v", err)
}

// tokLeakCheck makes the test fail when it leaves goroutines behind; call
// it before newEnv so the fake's goroutines end (its Cleanup runs first).
func tokLeakCheck(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// bearer returns the token of an Authorization header set.
func bearer(t *testing.T, h http.Header) string {
	t.Helper()
	v := h.Get("Authorization")
	require.True(t, strings.HasPrefix(v, "Bearer "), "a Bearer authorization")
	return strings.TrimPrefix(v, "Bearer ")
}

func TestAuthenticatorURL(t *testing.T) {
	e := newEnv(t)
	for _, u := range []string{"http://example.com/mcp", "https://user@example.com/mcp", "https://example.com/mcp#x", "mcp"} {
		_, err := e.c.Authenticator(Server{ID: "s", URL: u})
		tokRequire(t, err, refusal.Config, ReasonURLInvalid)
	}
	a, err := e.c.Authenticator(Server{ID: "s", URL: "HTTPS://Example.COM:443/mcp/"})
	require.NoError(t, err)
	assert.Equal(t, "https://example.com/mcp", a.resource)
	assert.Equal(t, "https://example.com:443", a.origin)
}

func TestAuthenticatorHeaders(t *testing.T) {
	tests := []struct {
		name    string
		seed    bool
		mod     func(r *record, now time.Time)
		rotate  bool
		advance time.Duration
		reason  string // "" for success
		hits    int    // /token requests
		fresh   bool   // the header carries a refreshed token
		keepRT  bool   // the stored refresh token is the seeded one afterwards
	}{
		{name: "none", reason: ReasonSignInRequired},
		{name: "valid", seed: true, keepRT: true},
		{name: "no expiry counts as valid", seed: true, mod: func(r *record, _ time.Time) { r.Expiry = time.Time{} }, advance: 1000 * time.Hour, keepRT: true},
		{name: "expired rotates", seed: true, rotate: true, advance: 2 * time.Hour, hits: 1, fresh: true},
		{name: "inside the skew counts as expired", seed: true, rotate: true, advance: time.Hour - ExpirySkew, hits: 1, fresh: true},
		{name: "expired without rotation keeps the refresh token", seed: true, advance: 2 * time.Hour, hits: 1, fresh: true, keepRT: true},
		{name: "expired without refresh token", seed: true, mod: func(r *record, _ time.Time) { r.RefreshToken = "" }, advance: 2 * time.Hour, reason: ReasonSignInRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) { f.rotate = tt.rotate })
			s := e.as.server("srv")
			var seeded *record
			if tt.seed {
				s, seeded = tokSeed(t, e, "srv", func(r *record) {
					if tt.mod != nil {
						tt.mod(r, e.now.Now())
					}
				})
			}
			e.now.Add(tt.advance)
			a, req := tokAuth(t, e.c, s)
			h, err := a.Headers(context.Background(), req)
			assert.Equal(t, tt.hits, e.as.count("/token"))
			if tt.reason != "" {
				tokRequire(t, err, refusal.AuthRequired, tt.reason)
				return
			}
			require.NoError(t, err)
			got := bearer(t, h)
			stored := tokStored(t, e, s)
			require.NotNil(t, stored)
			assert.Equal(t, stored.AccessToken, got, "the header carries the stored token")
			if !tt.fresh {
				assert.Equal(t, seeded.AccessToken, got)
				return
			}
			assert.NotEqual(t, seeded.AccessToken, got)
			assert.True(t, stored.valid(e.now.Now()))
			assert.Equal(t, tt.keepRT, stored.RefreshToken == seeded.RefreshToken, "refresh token kept")
			assert.Equal(t, seeded.TokenEndpoint, stored.TokenEndpoint)
			assert.Equal(t, seeded.ClientID, stored.ClientID)
			e.as.mu.Lock()
			form := e.as.lastToken
			e.as.mu.Unlock()
			assert.Equal(t, "refresh_token", form.Get("grant_type"))
			assert.Equal(t, seeded.RefreshToken, form.Get("refresh_token"))
			assert.Equal(t, seeded.ClientID, form.Get("client_id"))
			assert.Equal(t, e.as.MCP(), form.Get("resource"), "RFC 8707 resource")

			// The refreshed token is used as is from now on.
			h, err = a.Headers(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, got, bearer(t, h))
			assert.Equal(t, tt.hits, e.as.count("/token"))
		})
	}
}

func TestAuthenticatorMismatch(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", nil)
	a, req := tokAuth(t, e.c, s)
	for name, r := range map[string]ports.AuthRequest{
		"other server": {ServerID: "other", Origin: req.Origin},
		"other origin": {ServerID: s.ID, Origin: "https://evil.example:443"},
		"no origin":    {ServerID: s.ID},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := a.Headers(context.Background(), r)
			tokRequire(t, err, refusal.Refused, ReasonAuthenticatorMismatch)
			assert.Nil(t, h)
			retry, err := a.Refused(context.Background(), ports.AuthRefusal{ServerID: r.ServerID, Origin: r.Origin, Status: 401})
			tokRequire(t, err, refusal.Refused, ReasonAuthenticatorMismatch)
			assert.False(t, retry)
		})
	}
	assert.Zero(t, e.as.count("/token"))
}

func TestAuthenticatorShadowingDefinition(t *testing.T) {
	e := newEnv(t)
	s, _ := tokSeed(t, e, "srv", nil)
	// The same id at another URL, and another id at the same URL, find no
	// credential.
	for _, other := range []Server{{ID: s.ID, URL: e.as.URL() + "/other"}, {ID: "shadow", URL: s.URL}} {
		a, req := tokAuth(t, e.c, other)
		_, err := a.Headers(context.Background(), req)
		tokRequire(t, err, refusal.AuthRequired, ReasonSignInRequired)
	}
}

func TestAuthenticatorStoreFailures(t *testing.T) {
	tests := []struct {
		name   string
		fail   func(e *testEnv)
		class  refusal.Class
		reason string
	}{
		{name: "get unavailable", fail: func(e *testEnv) { e.store.Fail("Get", ports.ErrUnavailable) }, class: refusal.Transient, reason: ReasonStoreUnavailable},
		{name: "get corrupt", fail: func(e *testEnv) { e.store.Fail("Get", ports.ErrCorrupt) }, class: refusal.Config, reason: ReasonCredentialCorrupt},
		{name: "unreadable value", fail: func(e *testEnv) {
			require.NoError(t, e.store.Set(context.Background(), storeKey("srv", e.as.MCP()), []byte("{not json "+canary)))
		}, class: refusal.Config, reason: ReasonCredentialCorrupt},
		{name: "re-read under the lock fails", fail: func(e *testEnv) {
			e.now.Add(2 * time.Hour)
			for range 2 { // Headers, then Refused: the first Get passes, the second fails
				e.store.FailOnce("Get", nil)
				e.store.FailOnce("Get", ports.ErrUnavailable)
			}
		}, class: refusal.Transient, reason: ReasonStoreUnavailable},
		{name: "save of refreshed tokens fails", fail: func(e *testEnv) {
			e.now.Add(2 * time.Hour)
			e.store.Fail("Set", ports.ErrUnavailable)
		}, class: refusal.Transient, reason: ReasonStoreUnavailable},
		{name: "locker unavailable", fail: func(e *testEnv) {
			e.now.Add(2 * time.Hour)
			e.locker.Fail("Lock", ports.ErrUnavailable)
		}, class: refusal.Transient, reason: ReasonStoreUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, _ := tokSeed(t, e, "srv", nil)
			tt.fail(e)
			a, req := tokAuth(t, e.c, s)
			_, err := a.Headers(context.Background(), req)
			tokRequire(t, err, tt.class, tt.reason)
			retry, err := a.Refused(context.Background(), tokRefusal(a, 401, ""))
			assert.False(t, retry)
			require.Error(t, err)
			requireNoCanary(t, err)
		})
	}
}

func TestRefusedDecisions(t *testing.T) {
	tests := []struct {
		name      string
		mod       func(r *record)
		status    int
		challenge string
		rotated   bool // another process stores a new credential after Headers
		signOut   bool // the credential is deleted after Headers
		retry     bool
		class     refusal.Class
		reason    string
		hits      int
	}{
		{name: "refused token is refreshed", status: 401, challenge: `Bearer error="invalid_token"`, retry: true, hits: 1},
		{name: "403 without scope error is refreshed", status: 403, retry: true, hits: 1},
		{name: "rotated in meanwhile", status: 401, rotated: true, retry: true},
		{name: "insufficient scope", status: 403, challenge: `Bearer realm="x", error="insufficient_scope", scope="mcp.admin"`, class: refusal.AuthRequired, reason: ReasonStepUpRequired},
		{name: "insufficient scope already granted", status: 403, mod: func(r *record) { r.Scope = "mcp.read mcp.admin" }, challenge: `Bearer error="insufficient_scope", scope="mcp.admin"`, class: refusal.AuthRefused, reason: ReasonInsufficientScope},
		{name: "insufficient scope token form", status: 403, challenge: `Basic realm="b", BEARER Error=insufficient_scope`, class: refusal.AuthRefused, reason: ReasonInsufficientScope},
		{name: "scope error of a scheme OAuth does not use is refreshed", status: 403, challenge: `Basic error="insufficient_scope"`, retry: true, hits: 1},
		{name: "scope error of the DPoP scheme is not", status: 403, challenge: `DPoP error="insufficient_scope"`, class: refusal.AuthRefused, reason: ReasonInsufficientScope},
		{name: "signed out meanwhile", status: 401, signOut: true, class: refusal.AuthRequired, reason: ReasonSignInRequired},
		{name: "no refresh token", status: 401, mod: func(r *record) { r.RefreshToken = "" }, class: refusal.AuthRequired, reason: ReasonSignInRequired},
		{name: "refresh token spent", status: 401, mod: func(r *record) { r.RefreshToken = "rt-dead-" + canary }, class: refusal.AuthRequired, reason: ReasonSignInRequired, hits: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, seeded := tokSeed(t, e, "srv", tt.mod)
			a, req := tokAuth(t, e.c, s)
			h, err := a.Headers(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, seeded.AccessToken, bearer(t, h))
			if tt.rotated {
				other := *seeded
				other.AccessToken, other.RefreshToken = "at-other-"+canary, "rt-other-"+canary
				require.NoError(t, e.c.save(context.Background(), &other))
			}
			if tt.signOut {
				require.NoError(t, e.store.Delete(context.Background(), storeKey(s.ID, e.as.MCP())))
			}
			retry, err := a.Refused(context.Background(), tokRefusal(a, tt.status, tt.challenge))
			assert.Equal(t, tt.retry, retry)
			assert.Equal(t, tt.hits, e.as.count("/token"))
			if tt.reason != "" {
				tokRequire(t, err, tt.class, tt.reason)
				return
			}
			require.NoError(t, err)
			h, err = a.Headers(context.Background(), req)
			require.NoError(t, err)
			assert.NotEqual(t, seeded.AccessToken, bearer(t, h), "the retry carries a fresh token")
		})
	}
}

func TestRefusedCoalesced(t *testing.T) {
	tokLeakCheck(t)
	e := newEnv(t)
	s, seeded := tokSeed(t, e, "srv", nil)
	entered, release := make(chan struct{}), make(chan struct{})
	e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		e.as.token(w, r)
	})
	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)

	const n = 10
	var wg sync.WaitGroup
	retries := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { retries[i], errs[i] = a.Refused(context.Background(), tokRefusal(a, 401, "")) })
	}
	<-entered // the one refresh is at the token endpoint
	require.Eventually(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.flight != nil && a.flight.waiters == n
	}, 5*time.Second, time.Millisecond, "every Refused waits for the one refresh")
	close(release)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		requireNoCanary(t, errs[i])
		assert.True(t, retries[i])
	}
	assert.Equal(t, 1, e.as.count("/token"))
	assert.Equal(t, 1, e.locker.Calls("Lock"), "one refresh took the lock")
	assert.NotEqual(t, seeded.AccessToken, tokStored(t, e, s).AccessToken)

	// Late refusals of the old token find the new one stored: no refresh.
	retry, err := a.Refused(context.Background(), tokRefusal(a, 401, ""))
	require.NoError(t, err)
	assert.True(t, retry)
	assert.Equal(t, 1, e.as.count("/token"))
}

func TestHeadersWaiterGivesUp(t *testing.T) {
	tokLeakCheck(t)
	e := newEnv(t)
	s, seeded := tokSeed(t, e, "srv", nil)
	e.now.Add(2 * time.Hour)
	entered, stop := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop) }) // runs before the fake closes
	e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm() // the server notices a closed connection only after the body
		close(entered)
		select { // answers only when the client gives up
		case <-r.Context().Done():
		case <-stop:
		}
	})
	a, req := tokAuth(t, e.c, s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Headers(ctx, req)
		done <- err
	}()
	<-entered
	cancel()
	err := <-done
	tokRequire(t, err, refusal.Transient, "canceled")
	// The abandoned refresh is canceled and its lock released.
	require.Eventually(t, func() bool { return !e.locker.Held(lockKey(s.ID, e.as.MCP())) }, 5*time.Second, time.Millisecond)
	assert.True(t, seeded.same(tokStored(t, e, s)), "credential kept")
}

func TestCrossProcessRefresh(t *testing.T) {
	tokLeakCheck(t)
	e := newEnv(t)
	s, seeded := tokSeed(t, e, "srv", nil)
	e.as.set(func(f *fakeAS) { f.refreshDelay = 50 * time.Millisecond; f.rotate = true })
	e.now.Add(2 * time.Hour)

	// Three "processes", two Authenticators each, share store and locker.
	var auths []*Authenticator
	var req ports.AuthRequest
	for _, c := range []*Client{e.c, e.client(t), e.client(t)} {
		for range 2 {
			var a *Authenticator
			a, req = tokAuth(t, c, s)
			auths = append(auths, a)
		}
	}
	const n = 20
	start := make(chan struct{})
	tokens := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			h, err := auths[i%len(auths)].Headers(context.Background(), req)
			errs[i] = err
			if err == nil {
				tokens[i] = h.Get("Authorization")
			}
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		requireNoCanary(t, errs[i])
		assert.Equal(t, tokens[0], tokens[i], "every caller gets the same new token")
	}
	assert.Equal(t, 1, e.as.count("/token"), "the rotating refresh token is spent once")
	stored := tokStored(t, e, s)
	assert.Equal(t, "Bearer "+stored.AccessToken, tokens[0])
	assert.NotEqual(t, seeded.RefreshToken, stored.RefreshToken)
	e.as.mu.Lock()
	live := e.as.refreshes[stored.RefreshToken]
	e.as.mu.Unlock()
	assert.True(t, live, "the stored refresh token is the live one")
}

func TestInsufficientScope(t *testing.T) {
	tests := []struct {
		name, h string
		want    bool
	}{
		{"quoted", `Bearer error="insufficient_scope"`, true},
		{"token, any case of scheme and name", `BEARER Error=insufficient_scope`, true},
		{"with other params", `Bearer realm="r", error="insufficient_scope", scope="mcp.admin"`, true},
		{"after another challenge", `Basic realm="a, error=\"insufficient_scope\"", Bearer error="insufficient_scope"`, true},
		{"other error", `Bearer error="invalid_token"`, false},
		{"in another challenge only", `Basic realm="a, error=\"insufficient_scope\"", Bearer error="invalid_token"`, false},
		{"another scheme", `Basic error="insufficient_scope"`, false},
		{"DPoP scheme", `DPoP error="insufficient_scope"`, true},
		{"Bearer before DPoP", `DPoP error="insufficient_scope", Bearer realm="r"`, false},
		{"param of a later scheme", `Bearer realm="r", DPoP error="insufficient_scope"`, false},
		{"first Bearer decides", `Bearer error="invalid_token", Bearer error="insufficient_scope"`, false},
		{"malformed", `Bearer error="insufficient_scope`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, ok := ParseChallenge(http.StatusForbidden, tt.h)
			assert.Equal(t, tt.want, ok && ch.Error == "insufficient_scope")
		})
	}
}
