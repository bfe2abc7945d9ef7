package conformance

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// RunApprovalStore runs the ports.ApprovalStore conformance suite: grant,
// list and revoke; List filtering by exact server id, oldest first; a Grant
// of an identical Identity replacing; exact identity on Revoke (an identity
// differing in any one field is ErrNotFound and leaves the other); every
// field kept; concurrent grants and revokes never lost, across handles and —
// with a Location and Attach — across processes.
//
// mk is called once per subtest and must return a Harness on a fresh, empty
// backing store; every handle its Open returns must share that store. See
// RunTokenStore for an example and the package doc for cross-process
// subtests.
func RunApprovalStore(t *testing.T, mk func(t *testing.T) Harness[ports.ApprovalStore]) {
	s := newSuite(t, "approvalstore", mk)
	if runChild(t, s, approvalRoles) {
		return
	}
	as := approvalSuite{s}
	t.Run("ListEmpty", as.listEmpty)
	t.Run("GrantThenList", as.grantThenList)
	t.Run("GrantKeepsEveryField", as.keepsEveryField)
	t.Run("ListFiltersByServerID", as.listFilters)
	t.Run("ListOldestFirst", as.oldestFirst)
	t.Run("GrantIdenticalReplaces", as.grantReplaces)
	t.Run("IdentitiesDifferingInOneFieldAreDistinct", as.distinctIdentities)
	t.Run("RevokeRemovesExactIdentity", as.revoke)
	t.Run("RevokeNearMissIsErrNotFound", as.revokeNearMiss)
	t.Run("RevokeMissingIsErrNotFound", as.revokeMissing)
	t.Run("ListReturnsCopy", as.listReturnsCopy)
	t.Run("CrossHandle", as.crossHandle)
	t.Run("ConcurrentGrants", as.concurrentGrants)
	t.Run("ConcurrentGrantsAndRevokes", as.concurrentGrantsAndRevokes)
	t.Run("CrossProcessGrants", as.crossProcessGrants)
}

type approvalSuite struct{ *suite[ports.ApprovalStore] }

// baseTime is a GrantedAt with nanoseconds and a zone that is not UTC.
var baseTime = time.Date(2025, 3, 4, 5, 6, 7, 890123456, time.FixedZone("conformance", 5*3600+1800))

// identity returns a full project-tier identity for server.
func identity(server string) ports.Identity {
	return ports.Identity{
		ServerID:    server,
		Tier:        ports.TierProject,
		Origin:      "/work/repo/.mcp.json",
		Fingerprint: "4f2a0c1b9e8d7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a",
		Security:    "https://mcp.example.com:443/mcp",
		Repository:  "https://github.com/example/repo.git",
		Generation:  "gen-1",
	}
}

// nearMisses returns identities that differ from id in exactly one field.
func nearMisses(id ports.Identity) map[string]ports.Identity {
	m := map[string]ports.Identity{}
	v := id
	v.ServerID += "x"
	m["ServerID"] = v
	v = id
	v.Tier = ports.TierLocal
	m["Tier"] = v
	v = id
	v.Origin += "x"
	m["Origin"] = v
	v = id
	v.Fingerprint = v.Fingerprint[:len(v.Fingerprint)-1] + "b"
	m["Fingerprint"] = v
	v = id
	v.Security += "/"
	m["Security"] = v
	v = id
	v.Repository = ""
	m["Repository"] = v
	v = id
	v.Generation = "gen-2"
	m["Generation"] = v
	return m
}

func approval(id ports.Identity, at time.Time, by string) ports.Approval {
	return ports.Approval{Identity: id, GrantedAt: at, GrantedBy: by}
}

// assertApprovals compares approvals field by field (GrantedAt as an instant).
func assertApprovals(t *testing.T, want, got []ports.Approval, msgAndArgs ...any) bool {
	t.Helper()
	if !assert.Len(t, got, len(want), msgAndArgs...) {
		return false
	}
	ok := true
	for i := range want {
		ok = assert.Equal(t, want[i].Identity, got[i].Identity, "approval %d", i) && ok
		ok = assert.Equal(t, want[i].GrantedBy, got[i].GrantedBy, "approval %d GrantedBy", i) && ok
		ok = assert.True(t, want[i].GrantedAt.Equal(got[i].GrantedAt),
			"approval %d GrantedAt: want %v, got %v", i, want[i].GrantedAt, got[i].GrantedAt) && ok
	}
	return ok
}

func mustList(t *testing.T, st ports.ApprovalStore, server string) []ports.Approval {
	t.Helper()
	got, err := st.List(t.Context(), server)
	require.NoError(t, err, "List(%q)", server)
	return got
}

func (s approvalSuite) listEmpty(t *testing.T) {
	st := s.harness(t).Open(t)
	assert.Empty(t, mustList(t, st, "none"), "List of a server with no approval")
}

func (s approvalSuite) grantThenList(t *testing.T) {
	st := s.harness(t).Open(t)
	a := approval(identity("srv"), baseTime, "cli")
	require.NoError(t, st.Grant(t.Context(), a))
	assertApprovals(t, []ports.Approval{a}, mustList(t, st, "srv"))
}

func (s approvalSuite) keepsEveryField(t *testing.T) {
	st := s.harness(t).Open(t)
	odd := "line\nbreak \"quoted\" \\ tab\t nul\x00 \u00e9\u65e5\U0001F600 </script>"
	id := ports.Identity{
		ServerID: "srv " + odd, Tier: ports.TierManaged, Origin: odd, Fingerprint: "ab",
		Security: "npx -y @scope/server --flag=" + odd,
	}
	a := approval(id, baseTime, odd)
	require.NoError(t, st.Grant(t.Context(), a))
	assertApprovals(t, []ports.Approval{a}, mustList(t, st, id.ServerID))
	b := approval(identity("utc"), time.Date(2024, 1, 2, 3, 4, 5, 1, time.UTC), "")
	require.NoError(t, st.Grant(t.Context(), b))
	assertApprovals(t, []ports.Approval{b}, mustList(t, st, "utc"))
}

func (s approvalSuite) listFilters(t *testing.T) {
	st := s.harness(t).Open(t)
	ctx := t.Context()
	want := []ports.Approval{approval(identity("s1"), baseTime, "")}
	for i, srv := range []string{"s", "s1x", "S1", "xs1", " s1", "s1 ", "s1/", "s10"} {
		require.NoError(t, st.Grant(ctx, approval(identity(srv), baseTime.Add(time.Duration(i)*time.Second), "")))
	}
	other := identity("s1")
	other.Origin = "/other/.mcp.json"
	want = append(want, approval(other, baseTime.Add(time.Minute), ""))
	for _, a := range want {
		require.NoError(t, st.Grant(ctx, a))
	}
	assertApprovals(t, want, mustList(t, st, "s1"), "List returns exactly the approvals whose ServerID equals its argument")
	assert.Empty(t, mustList(t, st, ""), `List("")`)
}

func (s approvalSuite) oldestFirst(t *testing.T) {
	st := s.harness(t).Open(t)
	var want []ports.Approval
	for i := range 5 {
		id := identity("srv")
		id.Origin = fmt.Sprintf("/origin/%d", i)
		a := approval(id, baseTime.Add(time.Duration(i)*time.Hour), "")
		require.NoError(t, st.Grant(t.Context(), a))
		want = append(want, a)
	}
	assertApprovals(t, want, mustList(t, st, "srv"), "List returns the oldest first")
}

func (s approvalSuite) grantReplaces(t *testing.T) {
	st := s.harness(t).Open(t)
	first := approval(identity("srv"), baseTime, "first")
	second := approval(identity("srv"), baseTime.Add(time.Hour), "second")
	require.NoError(t, st.Grant(t.Context(), first))
	require.NoError(t, st.Grant(t.Context(), second))
	assertApprovals(t, []ports.Approval{second}, mustList(t, st, "srv"),
		"a Grant of an identical Identity replaces the earlier approval")
}

func (s approvalSuite) distinctIdentities(t *testing.T) {
	st := s.harness(t).Open(t)
	ctx := t.Context()
	base := approval(identity("srv"), baseTime, "base")
	require.NoError(t, st.Grant(ctx, base))
	for field, id := range nearMisses(base.Identity) {
		require.NoError(t, st.Grant(ctx, approval(id, baseTime.Add(time.Hour), field)), field)
	}
	for field, id := range nearMisses(base.Identity) {
		found := 0
		for _, a := range mustList(t, st, id.ServerID) {
			if a.Identity == id {
				found++
				assert.Equal(t, field, a.GrantedBy, "the approval for an identity differing in %s was replaced by another", field)
			}
		}
		assert.Equal(t, 1, found, "approvals for an identity differing from another only in %s", field)
	}
	found := 0
	for _, a := range mustList(t, st, "srv") {
		if a.Identity == base.Identity {
			found++
			assert.Equal(t, "base", a.GrantedBy, "a Grant of an identity differing in one field replaced the original")
		}
	}
	assert.Equal(t, 1, found, "the original approval is kept beside identities differing in one field")
}

func (s approvalSuite) revoke(t *testing.T) {
	st := s.harness(t).Open(t)
	ctx := t.Context()
	a := approval(identity("srv"), baseTime, "a")
	bid := identity("srv")
	bid.Generation = "gen-2"
	b := approval(bid, baseTime.Add(time.Second), "b")
	require.NoError(t, st.Grant(ctx, a))
	require.NoError(t, st.Grant(ctx, b))
	require.NoError(t, st.Revoke(ctx, a.Identity))
	assertApprovals(t, []ports.Approval{b}, mustList(t, st, "srv"), "Revoke removes only its identity")
	require.ErrorIs(t, st.Revoke(ctx, a.Identity), ports.ErrNotFound, "Revoke of an identity already revoked")
	require.NoError(t, st.Revoke(ctx, b.Identity))
	assert.Empty(t, mustList(t, st, "srv"))
}

func (s approvalSuite) revokeNearMiss(t *testing.T) {
	st := s.harness(t).Open(t)
	ctx := t.Context()
	a := approval(identity("srv"), baseTime, "a")
	require.NoError(t, st.Grant(ctx, a))
	for field, id := range nearMisses(a.Identity) {
		assert.ErrorIs(t, st.Revoke(ctx, id), ports.ErrNotFound,
			"Revoke of an identity differing from the granted one in %s", field)
		assertApprovals(t, []ports.Approval{a}, mustList(t, st, "srv"),
			"Revoke of an identity differing in %s must leave the granted one", field)
	}
}

func (s approvalSuite) revokeMissing(t *testing.T) {
	st := s.harness(t).Open(t)
	require.ErrorIs(t, st.Revoke(t.Context(), identity("never")), ports.ErrNotFound,
		"Revoke with nothing granted")
}

func (s approvalSuite) listReturnsCopy(t *testing.T) {
	st := s.harness(t).Open(t)
	a := approval(identity("srv"), baseTime, "a")
	require.NoError(t, st.Grant(t.Context(), a))
	got := mustList(t, st, "srv")
	require.Len(t, got, 1)
	got[0].GrantedBy = "changed"
	got[0].Identity.Fingerprint = "changed"
	assertApprovals(t, []ports.Approval{a}, mustList(t, st, "srv"),
		"changing what List returned must not change the store")
}

func (s approvalSuite) crossHandle(t *testing.T) {
	h := s.harness(t)
	x, y := h.Open(t), h.Open(t)
	a := approval(identity("srv"), baseTime, "a")
	require.NoError(t, x.Grant(t.Context(), a))
	assertApprovals(t, []ports.Approval{a}, mustList(t, y, "srv"), "a grant through one handle is visible through another")
	require.NoError(t, y.Revoke(t.Context(), a.Identity))
	assert.Empty(t, mustList(t, x, "srv"), "a revoke through one handle is visible through another")
}

// grantMany grants n approvals on server with origins "<tag>/<i>".
func grantMany(t testing.TB, st ports.ApprovalStore, server, tag string, n int) error {
	for i := range n {
		id := identity(server)
		id.Origin = fmt.Sprintf("%s/%d", tag, i)
		if err := st.Grant(t.Context(), approval(id, baseTime.Add(time.Duration(i)*time.Millisecond), tag)); err != nil {
			return fmt.Errorf("Grant %s/%d: %w", tag, i, err)
		}
	}
	return nil
}

// assertOrigins checks that List(server) holds exactly the origins.
func assertOrigins(t *testing.T, st ports.ApprovalStore, server string, want map[string]bool) {
	t.Helper()
	got := map[string]int{}
	for _, a := range mustList(t, st, server) {
		got[a.Identity.Origin]++
	}
	for o := range want {
		assert.Equal(t, 1, got[o], "approval with origin %q (a concurrent grant was lost or duplicated)", o)
	}
	for o := range got {
		assert.True(t, want[o], "unexpected approval with origin %q (a revoke was lost)", o)
	}
}

func (s approvalSuite) concurrentGrants(t *testing.T) {
	h := s.harness(t)
	handles := []ports.ApprovalStore{h.Open(t), h.Open(t)}
	const workers, n = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	want := map[string]bool{}
	for w := range workers {
		tag := fmt.Sprintf("w%d", w)
		for i := range n {
			want[fmt.Sprintf("%s/%d", tag, i)] = true
		}
		wg.Go(func() {
			if err := grantMany(t, handles[w%len(handles)], "srv", tag, n); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assertOrigins(t, handles[0], "srv", want)
}

func (s approvalSuite) concurrentGrantsAndRevokes(t *testing.T) {
	h := s.harness(t)
	handles := []ports.ApprovalStore{h.Open(t), h.Open(t)}
	const workers, n = 4, 5
	for w := range workers {
		require.NoError(t, grantMany(t, handles[0], "srv", fmt.Sprintf("old%d", w), n))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	want := map[string]bool{}
	for w := range workers {
		tag := fmt.Sprintf("new%d", w)
		for i := range n {
			want[fmt.Sprintf("%s/%d", tag, i)] = true
		}
		wg.Go(func() {
			if err := grantMany(t, handles[w%len(handles)], "srv", tag, n); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			st := handles[(w+1)%len(handles)]
			for i := range n {
				id := identity("srv")
				id.Origin = fmt.Sprintf("old%d/%d", w, i)
				if err := st.Revoke(t.Context(), id); err != nil {
					errs <- fmt.Errorf("Revoke %s: %w", id.Origin, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assertOrigins(t, handles[0], "srv", want)
}

// approvalRoles are the roles of an ApprovalStore child process.
var approvalRoles = map[string]childRole[ports.ApprovalStore]{
	// grant says "ready", waits for its standard input to end, grants N approvals for server "srv" with origins "<ID>/<i>"
	// and says "done".
	"grant": func(t *testing.T, st ports.ApprovalStore, a childArg) {
		awaitGo()
		require.NoError(t, grantMany(t, st, "srv", a.ID, a.N))
		say("done")
	},
}

func (s approvalSuite) crossProcessGrants(t *testing.T) {
	h := s.harness(t)
	crossProcess(t, h)
	const n = 10
	want := map[string]bool{}
	var args []childArg
	for _, tag := range []string{"child0", "child1"} {
		for i := range n {
			want[fmt.Sprintf("%s/%d", tag, i)] = true
		}
		args = append(args, childArg{ID: tag, N: n})
	}
	for i := range n {
		want[fmt.Sprintf("parent/%d", i)] = true
	}
	children := startReady(t, s.suite, "grant", h.Location, args)
	st := h.Open(t)
	require.NoError(t, grantMany(t, st, "srv", "parent", n))
	for _, c := range children {
		c.expect("done", childWait)
		c.finish(childWait)
	}
	assertOrigins(t, st, "srv", want)
}
