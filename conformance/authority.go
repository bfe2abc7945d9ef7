package conformance

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ProcessAuthorityHarness is one ports.ProcessAuthority and examples of
// what it decides. Give refused requests whose Args carry values an error
// must never show (a token in a flag): the suite checks refusals do not.
type ProcessAuthorityHarness struct {
	// Authority is the authority under test. Required.
	Authority ports.ProcessAuthority
	// Grant and Refuse are launch requests the authority grants and
	// refuses. At least one of each is required; for the ExactRequest
	// subtest, give a refused request that differs from a granted one in
	// one field (the program, an argument, the tier, the server id).
	Grant, Refuse []ports.LaunchRequest
}

// RunProcessAuthority runs the ports.ProcessAuthority conformance suite:
// the harness's grants and refusals hold; a grant has an absolute, clean
// AllowedRoot and a well-formed BaselineEnv that carries nothing from the
// request, is a copy (changing it changes no later grant) and is the same
// when the authority is consulted again (before spawn); a refusal is a
// *refusal.Error of Class Refused with no grant beside it and shows no
// argument or program of the request; the request is not modified; each
// decision is for the exact request asked (a granted request never makes a
// near one granted); and concurrent decisions are each right (run it with
// -race).
//
// mk is called once per subtest.
func RunProcessAuthority(t *testing.T, mk func(t *testing.T) ProcessAuthorityHarness) {
	s := authoritySuite{mk: mk}
	t.Run("GrantsRequests", s.grants)
	t.Run("GrantIsStable", s.stable)
	t.Run("GrantIsACopy", s.copies)
	t.Run("GrantCarriesNothingFromRequest", s.nothingFromRequest)
	t.Run("RefusesTyped", s.refuses)
	t.Run("RefusalCarriesNoSecret", s.noSecret)
	t.Run("RequestNotModified", s.notModified)
	t.Run("ExactRequest", s.exact)
	t.Run("ConcurrentDecisions", s.concurrent)
}

type authoritySuite struct {
	mk func(t *testing.T) ProcessAuthorityHarness
}

func (s authoritySuite) harness(t *testing.T) ProcessAuthorityHarness {
	t.Helper()
	h := s.mk(t)
	require.NotNil(t, h.Authority, "ProcessAuthorityHarness.Authority is required")
	require.NotEmpty(t, h.Grant, "ProcessAuthorityHarness.Grant is required")
	require.NotEmpty(t, h.Refuse, "ProcessAuthorityHarness.Refuse is required")
	return h
}

func cloneLaunch(r ports.LaunchRequest) ports.LaunchRequest {
	r.Args = slices.Clone(r.Args)
	return r
}

func launchName(r ports.LaunchRequest) string {
	return fmt.Sprintf("%s (%s %s)", r.ServerID, r.Tier, filepath.Base(r.Command))
}

// checkGrant fails t unless g is a well-formed grant.
func checkGrant(t *testing.T, g ports.ProcessGrant, what string) {
	t.Helper()
	assert.True(t, filepath.IsAbs(g.AllowedRoot), "%s: AllowedRoot %q must be absolute", what, g.AllowedRoot)
	assert.Equal(t, filepath.Clean(g.AllowedRoot), g.AllowedRoot, "%s: AllowedRoot must be clean", what)
	for k, v := range g.BaselineEnv {
		assert.True(t, k != "" && !strings.ContainsAny(k, "=\x00"), "%s: baseline key %q is not a valid environment name", what, k)
		assert.NotContains(t, v, "\x00", "%s: baseline value of %s holds NUL", what, k)
	}
}

func (s authoritySuite) grants(t *testing.T) {
	h := s.harness(t)
	for _, r := range h.Grant {
		g, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		if assert.NoError(t, err, "Authorize(%s)", launchName(r)) {
			checkGrant(t, g, "Authorize("+launchName(r)+")")
		}
	}
}

// stable: the authority is consulted before the launch and again just
// before spawn; for an unchanged request it grants the same.
func (s authoritySuite) stable(t *testing.T) {
	h := s.harness(t)
	for _, r := range h.Grant {
		a, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		require.NoError(t, err)
		b, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		require.NoError(t, err, "the second consultation (before spawn) of %s", launchName(r))
		assert.Equal(t, a, b, "Authorize(%s) grants the same when consulted again", launchName(r))
	}
}

func (s authoritySuite) copies(t *testing.T) {
	h := s.harness(t)
	for _, r := range h.Grant {
		a, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		require.NoError(t, err)
		want, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		require.NoError(t, err)
		want.BaselineEnv = maps.Clone(want.BaselineEnv)
		if a.BaselineEnv == nil {
			continue
		}
		for k := range a.BaselineEnv {
			a.BaselineEnv[k] = "changed"
		}
		a.BaselineEnv["MCPWARD_CONFORMANCE_ADDED"] = "added"
		b, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		require.NoError(t, err)
		assert.Equal(t, want, b, "changing a grant's BaselineEnv changed a later grant of %s: hand out a copy", launchName(r))
	}
}

// requestValues returns the values of a request that are the definition's,
// not the host's: its arguments and program (at least 6 bytes each).
func requestValues(r ports.LaunchRequest) []string {
	var out []string
	for _, v := range append([]string{r.Command}, r.Args...) {
		if len(v) >= 6 {
			out = append(out, v)
		}
	}
	return out
}

// nothingFromRequest: the baseline environment is the host's; no argument
// of the definition reaches it (the definition's env is applied by the
// transport, over it, and is not the authority's to copy).
func (s authoritySuite) nothingFromRequest(t *testing.T) {
	h := s.harness(t)
	for _, r := range h.Grant {
		r = cloneLaunch(r)
		r.Args = append(r.Args, "--mcpward-canary-arg=8d2f61")
		g, err := h.Authority.Authorize(t.Context(), r)
		if err != nil {
			continue // the added argument made it refuse: allowed
		}
		for k, v := range g.BaselineEnv {
			for _, x := range requestValues(r) {
				assert.NotContains(t, v, x, "the baseline %s of %s carries a value of the request", k, launchName(r))
			}
		}
	}
}

func (s authoritySuite) refuses(t *testing.T) {
	h := s.harness(t)
	for _, r := range h.Refuse {
		g, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		if !assert.Error(t, err, "Authorize(%s) must refuse", launchName(r)) {
			continue
		}
		assertRefusal(t, err, refusedOnly, "Authorize(%s)", launchName(r))
		assert.Empty(t, g.AllowedRoot, "a refusal of %s comes with no grant", launchName(r))
		assert.Empty(t, g.BaselineEnv, "a refusal of %s comes with no grant", launchName(r))
	}
}

func (s authoritySuite) noSecret(t *testing.T) {
	h := s.harness(t)
	for _, r := range h.Refuse {
		r = cloneLaunch(r)
		_, err := h.Authority.Authorize(t.Context(), r)
		assertNoSecrets(t, err, requestValues(r), "Authorize(%s)", launchName(r))
		r.Args = append(r.Args, "--token=mcpward-canary-secret-3b9e")
		_, err = h.Authority.Authorize(t.Context(), r)
		if assert.Error(t, err, "Authorize(%s) with one more argument must still refuse", launchName(r)) {
			assertNoSecrets(t, err, requestValues(r), "Authorize(%s with a token argument)", launchName(r))
		}
	}
}

func (s authoritySuite) notModified(t *testing.T) {
	h := s.harness(t)
	for _, r := range append(slices.Clone(h.Grant), h.Refuse...) {
		asked := cloneLaunch(r)
		_, _ = h.Authority.Authorize(t.Context(), asked)
		assert.True(t, reflect.DeepEqual(r, asked), "Authorize(%s) modified the request", launchName(r))
	}
}

// exact: a grant is for the request asked: asking a granted request first
// never makes a refused one (near it or not) granted, in either order.
func (s authoritySuite) exact(t *testing.T) {
	h := s.harness(t)
	for _, g := range h.Grant {
		for _, r := range h.Refuse {
			_, err := h.Authority.Authorize(t.Context(), cloneLaunch(g))
			require.NoError(t, err)
			_, err = h.Authority.Authorize(t.Context(), cloneLaunch(r))
			assert.Error(t, err, "Authorize(%s) right after granting %s: a grant is for the exact request", launchName(r), launchName(g))
			_, err = h.Authority.Authorize(t.Context(), cloneLaunch(g))
			assert.NoError(t, err, "Authorize(%s) right after refusing %s", launchName(g), launchName(r))
		}
	}
}

func (s authoritySuite) concurrent(t *testing.T) {
	h := s.harness(t)
	want := map[int]ports.ProcessGrant{}
	for i, r := range h.Grant {
		g, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
		require.NoError(t, err)
		want[i] = g
	}
	n := len(h.Grant) + len(h.Refuse)
	hammer(t, 8, 40, func(w, i int) error {
		k := (w*5 + i) % n
		if k < len(h.Grant) {
			r := h.Grant[k]
			g, err := h.Authority.Authorize(t.Context(), cloneLaunch(r))
			if err != nil {
				return fmt.Errorf("Authorize(%s) refused under concurrent use: %v", launchName(r), err)
			}
			if !reflect.DeepEqual(g, want[k]) {
				return fmt.Errorf("Authorize(%s) under concurrent use granted another grant than alone", launchName(r))
			}
			return nil
		}
		r := h.Refuse[k-len(h.Grant)]
		if _, err := h.Authority.Authorize(t.Context(), cloneLaunch(r)); err == nil {
			return fmt.Errorf("Authorize(%s) granted under concurrent use; it is refused alone", launchName(r))
		} else if refusal.ClassOf(err) != refusal.Refused {
			return fmt.Errorf("Authorize(%s) under concurrent use refused with class %s", launchName(r), refusal.ClassOf(err))
		}
		return nil
	})
}
