package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// AuthenticatorHarness is one signed-in ports.Authenticator and the
// controls the suite needs to drive it as its credential's server and
// issuer would.
type AuthenticatorHarness struct {
	// Auth is the authenticator under test, with a credential: Headers
	// succeeds for Request. Required.
	Auth ports.Authenticator
	// Request is an AuthRequest Auth serves. Required.
	Request ports.AuthRequest
	// Reauths reports how many re-authorizations Auth has performed so
	// far (token refreshes, SSO prompts: whatever obtains a fresh
	// credential). Required.
	Reauths func() int
	// Stall makes re-authorizations started after it wait until release
	// is called (release is idempotent). Optional: without it the
	// subtests that need to hold refusals together skip.
	Stall func() (release func())
	// Exhaust makes every later re-authorization fail (the refresh token
	// is refused, the SSO session ended). Optional.
	Exhaust func()
	// SignOut removes the credential: Headers then fails with Class
	// AuthRequired. Optional.
	SignOut func()
}

// RunAuthenticator runs the ports.Authenticator conformance suite: Headers
// hands out the credential as a fresh header set and does not
// re-authorize; a refusal leads to exactly one re-authorization and
// retry=true only when a fresh credential (a new generation, never the
// refused one) is ready; refusals arriving together (while one
// re-authorization runs) share it; once re-authorization fails, Refused
// answers retry=false, never hands the refused credential out again as
// fresh, and fails with a *refusal.Error of Class AuthRequired, AuthRefused
// or Transient; without a credential Headers fails with Class AuthRequired;
// no error carries a credential or the server's challenge; a Refused whose
// ctx ends returns; and concurrent use is safe (run it with -race).
//
// mk is called once per subtest and must return a fresh, signed-in
// Authenticator.
func RunAuthenticator(t *testing.T, mk func(t *testing.T) AuthenticatorHarness) {
	s := authSuite{mk: mk}
	t.Run("HeadersCarryCredential", s.headers)
	t.Run("HeadersDoNotReauthorize", s.headersStable)
	t.Run("RefusedGivesFreshCredential", s.fresh)
	t.Run("EachRefusalOneReauthorization", s.oneEach)
	t.Run("ConcurrentRefusalsCoalesce", s.coalesce)
	t.Run("ExhaustedIsNoRetry", s.exhausted)
	t.Run("SignedOutIsAuthRequired", s.signedOut)
	t.Run("RefusalCarriesNoSecret", s.noSecret)
	t.Run("RefusedStopsWhenCtxEnds", s.ctxEnds)
	t.Run("ConcurrentUse", s.concurrent)
}

type authSuite struct {
	mk func(t *testing.T) AuthenticatorHarness
}

func (s authSuite) harness(t *testing.T) AuthenticatorHarness {
	t.Helper()
	h := s.mk(t)
	require.NotNil(t, h.Auth, "AuthenticatorHarness.Auth is required")
	require.NotNil(t, h.Reauths, "AuthenticatorHarness.Reauths is required")
	return h
}

// challenge is the WWW-Authenticate value of the suite's refusals; it
// carries a canary no error may show.
const challenge = `Bearer realm="conformance", error="invalid_token", error_description="canary-challenge-4e81"`

func (h AuthenticatorHarness) refusal(status int) ports.AuthRefusal {
	return ports.AuthRefusal{ServerID: h.Request.ServerID, Origin: h.Request.Origin, Status: status, Challenge: challenge}
}

var authClasses = []refusal.Class{refusal.AuthRequired, refusal.AuthRefused, refusal.Transient}

// mustHeaders calls Headers and fails t unless it hands out a non-empty
// header set.
func mustHeaders(t *testing.T, h AuthenticatorHarness) http.Header {
	t.Helper()
	got, err := h.Auth.Headers(t.Context(), h.Request)
	require.NoError(t, err, "Headers of a signed-in authenticator")
	require.NotEmpty(t, got, "Headers hands out a credential")
	return got
}

// secretsOf returns every header value (the credentials an error must never
// show).
func secretsOf(hs ...http.Header) []string {
	var out []string
	for _, h := range hs {
		for _, vs := range h {
			out = append(out, vs...)
		}
	}
	return out
}

func (s authSuite) headers(t *testing.T) {
	h := s.harness(t)
	first := mustHeaders(t, h)
	want := first.Clone()
	for k := range first {
		first[k] = []string{"changed"}
	}
	first.Set("X-Added", "added")
	again := mustHeaders(t, h)
	assert.Equal(t, want, again, "changing the headers Headers returned must not change the next ones: hand out a fresh header set")
}

func (s authSuite) headersStable(t *testing.T) {
	h := s.harness(t)
	before := h.Reauths()
	first := mustHeaders(t, h)
	for range 20 {
		assert.Equal(t, first, mustHeaders(t, h), "without a refusal Headers hands out the same credential")
	}
	assert.Equal(t, before, h.Reauths(), "Headers re-authorized without a refusal")
}

// fresh: retry=true means a fresh credential: the next Headers differs from
// the refused one, after exactly one re-authorization.
func (s authSuite) fresh(t *testing.T) {
	h := s.harness(t)
	old := mustHeaders(t, h)
	before := h.Reauths()
	retry, err := h.Auth.Refused(t.Context(), h.refusal(http.StatusUnauthorized))
	require.NoError(t, err, "Refused of a credential the issuer can renew")
	require.True(t, retry, "Refused answers retry=true once a fresh credential is ready")
	assert.Equal(t, before+1, h.Reauths(), "one refusal, one re-authorization")
	assert.NotEqual(t, old, mustHeaders(t, h), "after retry=true Headers hands out a fresh credential, never the refused one")
}

// oneEach: successive refusals (each of the credential Headers handed out
// last) each cost one re-authorization and each give a new generation.
func (s authSuite) oneEach(t *testing.T) {
	h := s.harness(t)
	seen := []http.Header{mustHeaders(t, h)}
	for i := range 3 {
		before := h.Reauths()
		retry, err := h.Auth.Refused(t.Context(), h.refusal(http.StatusUnauthorized))
		require.NoError(t, err)
		require.True(t, retry, "refusal %d", i+1)
		assert.Equal(t, before+1, h.Reauths(), "refusal %d: one re-authorization", i+1)
		next := mustHeaders(t, h)
		for j, old := range seen {
			assert.NotEqual(t, old, next, "refusal %d handed out generation %d again", i+1, j)
		}
		seen = append(seen, next)
	}
}

// coalesce: requests refused together share one re-authorization: while it
// is stalled, every Refused waits for it, then all retry with the same
// fresh credential.
func (s authSuite) coalesce(t *testing.T) {
	h := s.harness(t)
	if h.Stall == nil {
		t.Skip("harness has no Stall: refusals cannot be held together")
	}
	old := mustHeaders(t, h)
	before := h.Reauths()
	release := h.Stall()
	defer release()
	const n = 8
	type answer struct {
		retry bool
		err   error
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			r, err := h.Auth.Refused(ctx, h.refusal(http.StatusUnauthorized))
			answers <- answer{r, err}
		}()
	}
	// Let every refusal arrive while the first re-authorization is held
	// (a synchronization wait, not a measurement).
	time.Sleep(300 * time.Millisecond)
	release()
	for range n {
		select {
		case a := <-answers:
			assert.NoError(t, a.err)
			assert.True(t, a.retry, "every refusal held together gets retry=true")
		case <-time.After(30 * time.Second):
			t.Fatal("a Refused did not return after the re-authorization was released")
		}
	}
	assert.Equal(t, before+1, h.Reauths(), "%d refusals arriving together cost one re-authorization", n)
	fresh := mustHeaders(t, h)
	assert.NotEqual(t, old, fresh)
}

// exhausted: when no fresh credential can be had, Refused says retry=false
// (with no error or a typed one) and Headers never hands the refused
// credential out as fresh.
func (s authSuite) exhausted(t *testing.T) {
	h := s.harness(t)
	if h.Exhaust == nil {
		t.Skip("harness has no Exhaust")
	}
	old := mustHeaders(t, h)
	h.Exhaust()
	retry, err := h.Auth.Refused(t.Context(), h.refusal(http.StatusUnauthorized))
	assert.False(t, retry, "Refused must not ask for a retry when no fresh credential could be had")
	if err != nil {
		assertRefusal(t, err, authClasses, "Refused after re-authorization failed")
		assertNoSecrets(t, err, append(secretsOf(old), "canary-challenge-4e81"), "Refused after re-authorization failed")
	}
}

func (s authSuite) signedOut(t *testing.T) {
	h := s.harness(t)
	if h.SignOut == nil {
		t.Skip("harness has no SignOut")
	}
	old := mustHeaders(t, h)
	h.SignOut()
	got, err := h.Auth.Headers(t.Context(), h.Request)
	require.Error(t, err, "Headers without a credential fails (a request is never sent unauthenticated)")
	assert.Empty(t, got, "a failed Headers hands out nothing")
	re := assertRefusal(t, err, []refusal.Class{refusal.AuthRequired}, "Headers without a credential")
	if re != nil {
		assert.Equal(t, refusal.AuthRequired, re.Class)
	}
	assertNoSecrets(t, err, secretsOf(old), "Headers without a credential")
}

// noSecret: a refused refusal (retry impossible) shows neither the
// credential nor the challenge, whatever the status.
func (s authSuite) noSecret(t *testing.T) {
	h := s.harness(t)
	old := mustHeaders(t, h)
	if h.Exhaust != nil {
		h.Exhaust()
	}
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		_, err := h.Auth.Refused(t.Context(), h.refusal(status))
		assertNoSecrets(t, err, append(secretsOf(old), "canary-challenge-4e81", challenge), "Refused(%d)", status)
	}
	if h.SignOut != nil {
		h.SignOut()
		_, err := h.Auth.Headers(t.Context(), h.Request)
		assertNoSecrets(t, err, secretsOf(old), "Headers after sign-out")
	}
}

// ctxEnds: a Refused waiting for a held re-authorization returns once its
// ctx ends, without asking for a retry.
func (s authSuite) ctxEnds(t *testing.T) {
	h := s.harness(t)
	if h.Stall == nil {
		t.Skip("harness has no Stall")
	}
	mustHeaders(t, h)
	release := h.Stall()
	defer release()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	var (
		retry bool
		err   error
	)
	if within(t, 5*time.Second, "Refused after its ctx ended", func() {
		retry, err = h.Auth.Refused(ctx, h.refusal(http.StatusUnauthorized))
	}) {
		assert.False(t, retry, "a Refused whose ctx ended must not ask for a retry")
		if assert.Error(t, err, "a Refused whose ctx ended fails") {
			var re *refusal.Error
			if errors.As(err, &re) {
				assert.Equal(t, refusal.Transient, re.Class, "a wait cut by ctx is Transient")
			} else {
				assert.True(t, errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled),
					"a Refused whose ctx ended returns a *refusal.Error or ctx.Err(), got %v", err)
			}
		}
	}
}

// concurrent: Headers from many goroutines while refusals rotate the
// credential: every answer is a whole credential of some generation.
func (s authSuite) concurrent(t *testing.T) {
	h := s.harness(t)
	first := mustHeaders(t, h)
	var mu sync.Mutex
	names := map[string]bool{}
	for k := range first {
		names[k] = true
	}
	hammer(t, 8, 40, func(w, i int) error {
		if w == 0 && i%10 == 0 {
			if _, err := h.Auth.Refused(t.Context(), h.refusal(http.StatusUnauthorized)); err != nil {
				return fmt.Errorf("Refused under concurrent use: %w", err)
			}
			return nil
		}
		got, err := h.Auth.Headers(t.Context(), h.Request)
		if err != nil {
			return fmt.Errorf("Headers under concurrent use: %w", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != len(names) {
			return fmt.Errorf("Headers under concurrent use handed out %d headers, %d alone", len(got), len(names))
		}
		for k, vs := range got {
			if !names[k] || len(vs) == 0 || vs[0] == "" {
				return fmt.Errorf("Headers under concurrent use handed out a torn header set")
			}
		}
		return nil
	})
}
