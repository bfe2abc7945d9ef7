package conformance

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// WorkspaceTrustHarness is one ports.WorkspaceTrust and the controls the
// suite needs to play the host's part.
type WorkspaceTrustHarness struct {
	// Trust is the implementation under test. Required.
	Trust ports.WorkspaceTrust
	// Want is what Trust reports now. Required.
	Want ports.WorkspaceFacts
	// Decide makes the host decide anew: from the next Facts on, Trust
	// must report what Decide returns (a trust prompt answered, the
	// workspace re-cloned). Decide(i) always makes the same decision for
	// the same i; each of the decisions of 0, 1, 2 and 3 differs in every
	// field from the one before it (Decide(0) from Want). It must be safe
	// to call while Facts runs. Optional: without it the subtests that
	// change the decision skip.
	Decide func(i int) ports.WorkspaceFacts
	// Break makes Trust unable to tell (the host's trust store is
	// unreadable): Facts then fails. Optional.
	Break func()
}

// RunWorkspaceTrust runs the ports.WorkspaceTrust conformance suite: Facts
// reports the host's current decision (never a stale one, never a mix of
// two decisions, even under concurrent use — run it with -race); a
// Repository is an identity, never a URL carrying credentials or a query;
// a host that cannot tell fails with a *refusal.Error of Class Transient or
// Internal and reports no trust beside it.
//
// mk is called once per subtest.
func RunWorkspaceTrust(t *testing.T, mk func(t *testing.T) WorkspaceTrustHarness) {
	s := trustSuite{mk: mk}
	t.Run("FactsAsDecided", s.asDecided)
	t.Run("FactsFollowTheHost", s.follow)
	t.Run("FactsCarryNoSecret", s.noSecret)
	t.Run("FailureIsTypedAndUntrusted", s.failure)
	t.Run("ConcurrentFacts", s.concurrent)
}

type trustSuite struct {
	mk func(t *testing.T) WorkspaceTrustHarness
}

func (s trustSuite) harness(t *testing.T) WorkspaceTrustHarness {
	t.Helper()
	h := s.mk(t)
	require.NotNil(t, h.Trust, "WorkspaceTrustHarness.Trust is required")
	return h
}

func mustFacts(t *testing.T, w ports.WorkspaceTrust) ports.WorkspaceFacts {
	t.Helper()
	f, err := w.Facts(t.Context())
	require.NoError(t, err, "Facts")
	return f
}

func (s trustSuite) asDecided(t *testing.T) {
	h := s.harness(t)
	for range 3 {
		assert.Equal(t, h.Want, mustFacts(t, h.Trust), "Facts reports the host's decision")
	}
}

// follow: a new decision is reported from the next Facts on; a cached,
// stale answer would keep trusting a workspace the host no longer trusts.
func (s trustSuite) follow(t *testing.T) {
	h := s.harness(t)
	if h.Decide == nil {
		t.Skip("harness has no Decide")
	}
	mustFacts(t, h.Trust)
	for i := range 4 {
		want := h.Decide(i)
		assert.Equal(t, want, mustFacts(t, h.Trust), "Facts after decision %d", i)
	}
}

// repoSecrets reports why a Repository carries what it must not: it is an
// identity matched and audited as is, so userinfo (a token in a remote
// URL), a query or a fragment would be stored in approvals and audit
// records.
func repoSecrets(repo string) error {
	if strings.ContainsAny(repo, "\x00\r\n") {
		return errors.New("holds control characters")
	}
	u, err := url.Parse(repo)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		// scp-like "user@host:path" remotes: the user is no secret, a
		// password cannot be written there.
		if i := strings.Index(repo, "@"); i >= 0 && strings.Contains(repo[:i], ":") {
			return errors.New("holds a password")
		}
		return nil
	}
	if _, ok := u.User.Password(); ok {
		return errors.New("holds a password")
	}
	if u.User != nil && u.User.Username() != "" && u.Scheme != "ssh" {
		return errors.New("holds userinfo (a token as a user name)")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("holds a query or fragment")
	}
	return nil
}

func (s trustSuite) noSecret(t *testing.T) {
	h := s.harness(t)
	check := func(f ports.WorkspaceFacts, what string) {
		t.Helper()
		if err := repoSecrets(f.Repository); err != nil {
			t.Errorf("%s: the Repository %s; it is stored in approvals and audit records", what, err)
		}
	}
	check(mustFacts(t, h.Trust), "Facts")
	if h.Decide != nil {
		for i := range 4 {
			h.Decide(i)
			check(mustFacts(t, h.Trust), fmt.Sprintf("Facts after decision %d", i))
		}
	}
}

func (s trustSuite) failure(t *testing.T) {
	h := s.harness(t)
	if h.Break == nil {
		t.Skip("harness has no Break")
	}
	h.Break()
	f, err := h.Trust.Facts(t.Context())
	require.Error(t, err, "Facts of a host that cannot tell")
	assertRefusal(t, err, []refusal.Class{refusal.Transient, refusal.Internal}, "Facts of a host that cannot tell")
	assert.False(t, f.Trusted, "a failed Facts must not report the workspace trusted")
	assert.Equal(t, ports.WorkspaceFacts{}, f, "a failed Facts reports no facts")
}

// concurrent: Facts from many goroutines while the host decides anew:
// every answer is one whole decision, never fields of two.
func (s trustSuite) concurrent(t *testing.T) {
	h := s.harness(t)
	decided := []ports.WorkspaceFacts{h.Want}
	if h.Decide != nil {
		for i := range 2 {
			decided = append(decided, h.Decide(i))
		}
	}
	hammer(t, 8, 60, func(w, i int) error {
		if h.Decide != nil && w == 0 && i%6 == 0 {
			// Alternate between the two decisions already seen.
			h.Decide(i / 6 % 2)
			return nil
		}
		f, err := h.Trust.Facts(t.Context())
		if err != nil {
			return fmt.Errorf("Facts under concurrent use: %w", err)
		}
		for _, d := range decided {
			if f == d {
				return nil
			}
		}
		return fmt.Errorf("Facts under concurrent use reported %+v, which is no decision of the host (a torn read)", f)
	})
}
